import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DomainError } from '../../domain/shared/decider.js';
import { classifyAddress, isRefusedAddress } from '../http/address-policy.js';
import { maskCredentials } from '../mcp/client-errors.js';
import { parseRedisUrl, type RedisTarget } from '../../domain/kv/index.js';
import type { KvCheckResult } from '../../ports/kv.js';

export type { KvCheckResult } from '../../ports/kv.js';

/**
 * Validating a key-value store connection (POST /kv/validate and the first step of
 * /kv/configure-mcp): resolve the host and apply the outbound rule (DESIGN.md section 7: private
 * and loopback addresses only with ALLOW_PRIVATE_NETWORK=true), connect to the checked address
 * (TLS still verifies the certificate against the host name), authenticate, PING, read INFO server.
 * Every failure is a DomainError with a stable code and the field `body.url`; nothing echoes the
 * password.
 */
export interface KvCheckOptions {
  allowPrivateNetwork: boolean;
  timeoutMs: number;
}

const FIELD = 'body.url';
const fail = (code: string, message: string, extra: Record<string, unknown> = {}) => new DomainError(code, message, 'invalid', { field: FIELD, ...extra });
const round = (ms: number) => Math.round(ms * 100) / 100;

async function checkedAddress(target: RedisTarget, allowPrivateNetwork: boolean): Promise<string> {
  let addresses: Array<{ address: string }>;
  if (isIP(target.host)) addresses = [{ address: target.host }];
  else {
    try {
      addresses = await dnsLookup(target.host, { all: true, verbatim: true });
    } catch {
      throw fail('KV_DNS_FAILED', `the host ${target.host} could not be resolved`, { host: target.host });
    }
  }
  if (addresses.length === 0) throw fail('KV_DNS_FAILED', `the host ${target.host} could not be resolved`, { host: target.host });
  if (!allowPrivateNetwork) {
    const refused = addresses.find((a) => isRefusedAddress(a.address));
    if (refused) {
      const addressClass = classifyAddress(refused.address);
      throw new DomainError('OUTBOUND_ADDRESS_REFUSED', `${target.host} resolves to a ${addressClass} address, which the service may not reach (ALLOW_PRIVATE_NETWORK is false)`, 'forbidden', {
        field: FIELD,
        host: target.host,
        addressClass,
      });
    }
  }
  return addresses[0].address;
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|EPROTO|HOSTNAME_MISMATCH)/;

/** The stable code and a readable reason for what the redis client threw. */
export function kvFailure(err: unknown, target: RedisTarget, timeoutMs: number): DomainError {
  const e = err as { code?: string; name?: string; message?: string };
  const message = maskCredentials(String(e?.message ?? err));
  const where = `${target.host}:${target.port}`;
  if (e?.name === 'ConnectionTimeoutError' || e?.name === 'SocketTimeoutError' || e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT') {
    return fail('KV_TIMEOUT', `no answer from ${where} within ${timeoutMs} ms`, { timeoutMs });
  }
  if (e?.code === 'ECONNREFUSED') return fail('KV_CONNECTION_REFUSED', `${where} refused the connection (is a server listening there?)`);
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return fail('KV_DNS_FAILED', `the host ${target.host} could not be resolved`);
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password|AUTH.*without any password|Authentication required/i.test(message)) {
    return fail('KV_AUTH_FAILED', `authentication failed: ${message}`);
  }
  if (typeof e?.code === 'string' && TLS_CODES.test(e.code)) return fail('KV_TLS_FAILED', `the TLS handshake with ${where} failed: ${message}`, { cause: e.code });
  if (/NOPERM|DB index is out of range|invalid DB index/i.test(message)) return fail('KV_REJECTED', `the server refused the request: ${message}`);
  return fail('KV_CONNECTION_FAILED', `could not talk to ${where}: ${message}`, e?.code ? { cause: e.code } : {});
}

function infoField(info: string, name: string): string | null {
  const match = new RegExp(`^${name}:(.*)$`, 'm').exec(info);
  return match ? match[1].trim() : null;
}

export async function checkRedisConnection(rawUrl: string, options: KvCheckOptions): Promise<KvCheckResult> {
  const target = parseRedisUrl(rawUrl);
  const address = await checkedAddress(target, options.allowPrivateNetwork);
  // Imported on first use: the Redis client costs start-up time that a service never checking a store would pay.
  const { createClient } = await import('redis');
  const client = createClient({
    socket: {
      host: address,
      port: target.port,
      // Our own deadline (below) covers connect, auth and commands; the client's is only a backstop.
      connectTimeout: options.timeoutMs + 1000,
      reconnectStrategy: false,
      ...(target.tls ? { tls: true as const, servername: isIP(target.host) ? undefined : target.host } : {}),
    },
    username: target.username,
    password: target.password,
    database: target.db,
    disableOfflineQueue: true,
  });
  // Without a listener an 'error' event would crash the process.
  client.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), options.timeoutMs);
  });
  try {
    const started = performance.now();
    await Promise.race([client.connect(), deadline]);
    const connectMs = performance.now() - started;
    const pingStarted = performance.now();
    const pong = await Promise.race([client.ping(), deadline]);
    const latencyMs = performance.now() - pingStarted;
    if (pong !== 'PONG') throw fail('KV_NOT_REDIS', `the server answered PING with ${JSON.stringify(pong).slice(0, 100)}`);
    // INFO may be denied by an ACL; the connection is still valid then.
    const info = await Promise.race([client.info('server'), deadline]).catch((err: unknown) => {
      if (err instanceof Error && err.name === 'TimeoutError') throw err;
      return '';
    });
    return {
      url: target.masked,
      host: target.host,
      port: target.port,
      tls: target.tls,
      db: target.db,
      address,
      serverVersion: infoField(String(info), 'redis_version') ?? infoField(String(info), 'valkey_version'),
      mode: infoField(String(info), 'redis_mode') ?? infoField(String(info), 'server_mode'),
      latencyMs: round(latencyMs),
      connectMs: round(connectMs),
    };
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw kvFailure(err, target, options.timeoutMs);
  } finally {
    clearTimeout(timer);
    try {
      client.destroy();
    } catch {
      // never connected
    }
  }
}
