import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { classifyAddress, isRefusedAddress, OutboundError } from '../http/outbound.js';
import { injectTraceHeaders } from '../../lib/tracing.js';

/**
 * The fetch the MCP HTTP and SSE transports use: the outbound rule of infra/http/outbound.ts
 * (private and loopback refused unless allowed, every resolved address checked) applied to a
 * streaming fetch, which outboundFetch is not (it buffers bodies; an SSE stream never ends).
 *
 * Each host is resolved and checked once per connection and the socket is pinned to the checked
 * address, so a later DNS answer (rebinding) cannot move an open MCP connection onto the
 * service's own network. Sockets are pooled per connection (keep-alive) and destroyed with it.
 */
export interface GuardedFetch {
  fetch: FetchLike;
  /** Checks the URL's host without sending anything (called before connecting). */
  check(url: URL): Promise<void>;
  destroy(): void;
}

const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

function resolveHost(host: string): Promise<LookupAddress[]> {
  if (isIP(host)) return Promise.resolve([{ address: host, family: isIP(host) }]);
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => {
      if (err || addresses.length === 0) reject(new OutboundError('OUTBOUND_DNS_FAILED', `the host ${host} could not be resolved`, { host }));
      else resolve(addresses);
    });
  });
}

function pinnedLookup(pinned: LookupAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

async function bodyBytes(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body));
  return Buffer.from(await new Response(body).arrayBuffer());
}

const NO_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/** Errors the stream once more than `maxBytes` went through it. */
function capped(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new OutboundError('OUTBOUND_RESPONSE_TOO_LARGE', `an MCP response is larger than ${maxBytes} bytes`, { maxBytes }));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * `maxPostResponseBytes` caps the body of each POST answer (it carries the messages of one
 * request; a bigger one is a misbehaving server, not a result to buffer). The long-lived GET
 * stream of notifications is not capped as a whole.
 */
export function guardedFetch(allowPrivateNetwork: boolean, maxPostResponseBytes = 16 * 1024 * 1024): GuardedFetch {
  const checked = new Map<string, Promise<LookupAddress>>();
  const httpAgent = new HttpAgent({ keepAlive: true });
  const httpsAgent = new HttpsAgent({ keepAlive: true });

  async function checkHost(url: URL): Promise<LookupAddress> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('OUTBOUND_INVALID_URL', 'only http and https URLs can be reached');
    const host = bareHost(url);
    let pending = checked.get(host);
    if (!pending) {
      pending = (async () => {
        const addresses = await resolveHost(host);
        if (!allowPrivateNetwork) {
          const refused = addresses.find((a) => isRefusedAddress(a.address));
          if (refused) {
            const addressClass = classifyAddress(refused.address);
            throw new OutboundError('OUTBOUND_ADDRESS_REFUSED', `${host} resolves to a ${addressClass} address, which outbound HTTP may not reach (ALLOW_PRIVATE_NETWORK is false)`, { host, addressClass });
          }
        }
        return addresses[0];
      })();
      checked.set(host, pending);
      // A failed check is not cached: the next attempt resolves again.
      pending.catch(() => checked.delete(host));
    }
    return pending;
  }

  const fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const pinned = await checkHost(url);
    const body = await bodyBytes(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers['content-length'] = String(body.length);
    // The calling span (a tool call) continues on the server when it reads W3C trace context.
    injectTraceHeaders(headers);
    const method = (init.method ?? 'GET').toUpperCase();
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw signal.reason ?? new DOMException('aborted', 'AbortError');
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(
        {
          protocol: url.protocol,
          hostname: bareHost(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method,
          headers,
          lookup: pinnedLookup(pinned),
          agent: url.protocol === 'https:' ? httpsAgent : httpAgent,
          signal,
        },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    });
    const responseHeaders = new Headers();
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
    const status = res.statusCode ?? 500;
    const empty = NO_BODY_STATUS.has(status) || method === 'HEAD';
    if (empty) res.resume();
    const stream = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
    return new Response(stream && method === 'POST' ? capped(stream, maxPostResponseBytes) : stream, {
      status: status < 200 || status > 599 ? 502 : status,
      statusText: res.statusMessage ?? '',
      headers: responseHeaders,
    });
  };

  return {
    fetch,
    async check(url) {
      await checkHost(url);
    },
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
