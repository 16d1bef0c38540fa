import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { classifyAddress, isRefusedAddress } from './address-policy.js';
import { bareHost, PinnedAgentPool, pinnedLookup, type PinnedPoolOptions } from './pinned-pool.js';
import { OutboundError, type OutboundHttp, type OutboundInit, type OutboundResponse } from '../../ports/outbound-http.js';
import { inSpan, injectTraceHeaders, markError, SpanKind, tracingEnabled } from '../../lib/tracing.js';

export { classifyAddress, isRefusedAddress, type AddressClass } from './address-policy.js';

/**
 * The one way the service calls URLs that users gave it (webhook nodes, messaging webhooks, MCP
 * over HTTP). What it guarantees:
 * - http(s) only;
 * - every address the host resolves to is checked (address-policy.ts) unless
 *   `allowPrivateNetwork`; one refused address refuses the host, so a name cannot hide a private
 *   address among public ones;
 * - the connection goes to the address that was checked: the socket's `lookup` is pinned to it, so
 *   a second DNS answer (DNS rebinding) is never asked for. The URL's host name still drives
 *   the Host header, TLS SNI and certificate checks;
 * - with keep-alive (the default) connections are pooled per (scheme, host, port, checked IP, TLS
 *   servername) and reused only for a call whose own check gave the same IP (pinned-pool.ts);
 * - redirects are followed by hand (at most `maxRedirects`, 5 by default), each hop checked the
 *   same way; Authorization and Cookie are dropped when a redirect changes origin;
 * - one deadline (`timeoutMs`) covers every hop, headers and body;
 * - the body is capped at `maxResponseBytes`: beyond it OUTBOUND_RESPONSE_TOO_LARGE, or with
 *   `truncate: true` the first bytes and `truncated: true`.
 */
export { OutboundError, type OutboundErrorCode, type OutboundInit, type OutboundResponse } from '../../ports/outbound-http.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** `raw` as an http(s) URL, or what is wrong with it: not a URL at all, or another scheme. */
export function parseHttpUrl(raw: string): URL | 'invalid' | 'not_http' {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'invalid';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : 'not_http';
}

function parseUrl(raw: string): URL {
  const url = parseHttpUrl(raw);
  if (url === 'invalid') throw new OutboundError('OUTBOUND_INVALID_URL', 'not a valid URL');
  if (url === 'not_http') throw new OutboundError('OUTBOUND_INVALID_URL', 'only http and https URLs can be called');
  return url;
}

/** Every address of a host name (the system resolver by default; tests inject their own answers). */
export type HostResolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: HostResolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

async function resolveHost(host: string, resolver: HostResolver): Promise<LookupAddress[]> {
  if (isIP(host)) return [{ address: host, family: isIP(host) }];
  const addresses = await resolver(host).catch(() => []);
  if (addresses.length === 0) throw new OutboundError('OUTBOUND_DNS_FAILED', `the host ${host} could not be resolved`, { host });
  return addresses;
}

/** The address to connect to for `url`, after the policy check. */
async function checkedAddress(url: URL, resolver: HostResolver, allowPrivateNetwork: boolean, addressAllowed?: (address: string) => boolean): Promise<LookupAddress> {
  const host = bareHost(url);
  const addresses = await resolveHost(host, resolver);
  const vetoed = addressAllowed && addresses.find((a) => !addressAllowed(a.address));
  if (vetoed) throw new OutboundError('OUTBOUND_ADDRESS_REFUSED', `${host} resolves to an address this call may not reach`, { host, addressClass: classifyAddress(vetoed.address) });
  if (!allowPrivateNetwork) {
    const refused = addresses.find((a) => isRefusedAddress(a.address));
    if (refused) {
      throw new OutboundError('OUTBOUND_ADDRESS_REFUSED', `${host} resolves to a ${classifyAddress(refused.address)} address, which outbound HTTP may not reach (ALLOW_PRIVATE_NETWORK is false)`, {
        host,
        addressClass: classifyAddress(refused.address),
      });
    }
  }
  return addresses[0];
}

function flatHeaders(message: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

interface HopResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

/** A pooled connection the server had closed: the request never got an answer and may be sent again. */
class StaleConnection extends Error {}
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** `agent`: a pooled agent pinned to `pinned`, or false for a connection of this call's own. */
function sendHop(hop: Hop, pinned: LookupAddress, agent: Agent | false, signal: AbortSignal, maxBytes: number, truncate: boolean, readBody: boolean): Promise<HopResult> {
  const send = hop.url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: OutgoingHttpHeaders = { ...hop.headers };
  if (hop.body !== undefined) headers['content-length'] = Buffer.byteLength(hop.body);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req: ClientRequest = send(
      {
        protocol: hop.url.protocol,
        hostname: bareHost(hop.url),
        port: hop.url.port || undefined,
        path: `${hop.url.pathname}${hop.url.search}`,
        method: hop.method,
        headers,
        // The pooled agent pins its sockets itself; this covers a connection of the call's own.
        lookup: pinnedLookup(pinned),
        agent,
        signal,
      },
      (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        const answer = { status, headers: flatHeaders(res) };
        if (!readBody) {
          res.resume();
          res.on('end', () => resolve({ ...answer, body: Buffer.alloc(0), truncated: false }));
          res.on('error', reject);
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size + chunk.length > maxBytes) {
            if (!truncate) {
              res.destroy();
              reject(new OutboundError('OUTBOUND_RESPONSE_TOO_LARGE', `the response is larger than ${maxBytes} bytes`, { maxBytes }));
              return;
            }
            chunks.push(chunk.subarray(0, maxBytes - size));
            res.destroy();
            resolve({ ...answer, body: Buffer.concat(chunks), truncated: true });
            return;
          }
          size += chunk.length;
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ ...answer, body: Buffer.concat(chunks), truncated: false }));
        res.on('error', reject);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!answered && req.reusedSocket && !signal.aborted && STALE_CODES.has(err.code ?? '')) reject(new StaleConnection(err.message));
      else reject(err);
    });
    if (hop.body !== undefined) req.end(hop.body);
    else req.end();
  });
}

function nextHop(hop: Hop, status: number, location: string): Hop {
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    throw new OutboundError('OUTBOUND_INVALID_URL', 'the redirect location is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('OUTBOUND_INVALID_URL', 'a redirect led to a URL that is not http(s)');
  // 303, and 301/302 after a POST, turn into a GET without body (what browsers and fetch do).
  const toGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  const headers = { ...hop.headers };
  if (toGet) for (const name of Object.keys(headers)) if (/^content-(type|length|encoding)$/i.test(name)) delete headers[name];
  if (url.origin !== hop.url.origin) for (const name of Object.keys(headers)) if (/^(authorization|cookie|proxy-authorization)$/i.test(name)) delete headers[name];
  return { url, method: toGet && hop.method !== 'HEAD' ? 'GET' : hop.method, headers, body: toGet ? undefined : hop.body };
}

/** A slow DNS answer must not outlive the deadline. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export interface OutboundHttpOptions {
  /** Pool connections per checked address (default true); false opens one connection per call. */
  keepAlive?: boolean;
  pool?: PinnedPoolOptions;
  /** Host name resolution; the system resolver by default. */
  resolve?: HostResolver;
}

/** The outbound HTTP port's adapter, with its own connection pool. */
export function createOutboundHttp(options: OutboundHttpOptions = {}): OutboundHttp & { readonly pool: PinnedAgentPool | null } {
  const pool = options.keepAlive === false ? null : new PinnedAgentPool(options.pool);
  const resolver = options.resolve ?? systemResolver;

  async function hopOnce(hop: Hop, pinned: LookupAddress, signal: AbortSignal, maxBytes: number, truncate: boolean, readBody: boolean) {
    try {
      return await sendHop(hop, pinned, pool ? pool.agentFor(hop.url, pinned) : false, signal, maxBytes, truncate, readBody);
    } catch (err) {
      if (!(err instanceof StaleConnection)) throw err;
      // The server closed the idle connection as we sent on it: once more, on a connection of our own.
      return sendHop(hop, pinned, false, signal, maxBytes, truncate, readBody);
    }
  }

  /** A CLIENT span per call (redirects included), whose context goes out as `traceparent`; the URL is recorded without its query. */
  function fetch(rawUrl: string, init: OutboundInit): Promise<OutboundResponse> {
    if (!tracingEnabled()) return fetchOnce(rawUrl, init);
    const method = (init.method ?? 'GET').toUpperCase();
    const url = URL.canParse(rawUrl) ? new URL(rawUrl) : null;
    const attributes = { 'http.request.method': method, ...(url ? { 'server.address': url.hostname, 'url.full': `${url.origin}${url.pathname}` } : {}) };
    return inSpan(method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const response = await fetchOnce(rawUrl, { ...init, headers: injectTraceHeaders({ ...(init.headers ?? {}) }) });
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) markError(span!, `HTTP ${response.status}`);
      return response;
    });
  }

  async function fetchOnce(rawUrl: string, init: OutboundInit): Promise<OutboundResponse> {
    const method = (init.method ?? 'GET').toUpperCase();
    const maxBytes = init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    const deadline = AbortSignal.timeout(init.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let hop: Hop = { url: parseUrl(rawUrl), method, headers: { ...(init.headers ?? {}) }, body: init.body };
    try {
      for (let redirects = 0; ; redirects++) {
        if (signal.aborted) throw signal.reason;
        // Checked on every call, pooled connection or not: the pool is chosen by what this check gave.
        const pinned = await untilAborted(checkedAddress(hop.url, resolver, init.allowPrivateNetwork, init.addressAllowed), signal);
        const readBody = method !== 'HEAD';
        const result = await hopOnce(hop, pinned, signal, maxBytes, init.truncate === true, readBody);
        const location = result.headers.location;
        if (!REDIRECTS.has(result.status) || !location || maxRedirects === 0) {
          return { ...result, url: hop.url.href, redirects, address: pinned.address };
        }
        if (redirects >= maxRedirects) throw new OutboundError('OUTBOUND_TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`, { maxRedirects });
        hop = nextHop(hop, result.status, location);
      }
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (deadline.aborted) throw new OutboundError('OUTBOUND_TIMEOUT', `no complete answer within ${init.timeoutMs} ms`, { timeoutMs: init.timeoutMs });
      if (init.signal?.aborted) throw new OutboundError('OUTBOUND_ABORTED', 'the call was aborted');
      throw new OutboundError('OUTBOUND_NETWORK_ERROR', `the request failed: ${(err as Error).message}`, { cause: (err as NodeJS.ErrnoException).code });
    }
  }

  return { fetch, classifyAddress, pool, close: () => pool?.close() };
}

/** The process-wide default (keep-alive on), for callers not wired through the container. */
export const outboundHttp = createOutboundHttp();
export const outboundFetch = outboundHttp.fetch;
