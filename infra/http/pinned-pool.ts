import type { LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';

/**
 * Keep-alive for outbound HTTP without giving up the address pinning (DNS rebinding protection).
 *
 * A pooled connection is only ever reused for the same (scheme, host, port, checked IP, TLS
 * servername): there is one Node `Agent` per such key, and that agent's own `lookup` answers with
 * its checked IP whatever it is asked (agent options override request options when Node opens a
 * socket), so no socket in it can lead anywhere else. Every call still resolves and checks the
 * host first (outbound.ts) and then picks the agent by the address it just checked: when the
 * name's answer changes, the call gets another agent and a new connection, and the old one is
 * never used for the new answer. The check is never skipped because a connection happens to be
 * open.
 *
 * Bounds: at most `maxAgents` keys (least recently used first out, its idle sockets closed),
 * `maxFreeSockets` idle connections per key, and an idle connection closes after `idleMs` — below
 * the 5 s keep-alive timeout servers commonly use (Node's own default), so we seldom send on a
 * connection the server is closing. When that happens anyway (ECONNRESET on a reused socket before
 * any answer), outbound.ts repeats the request once on a fresh connection.
 */
export interface PinnedPoolOptions {
  maxAgents?: number;
  maxFreeSockets?: number;
  idleMs?: number;
}

export const DEFAULT_POOL = { maxAgents: 256, maxFreeSockets: 8, idleMs: 4_000 } as const;

/** A lookup that answers with the checked address whatever it is asked (Node 20 asks with `all: true`). */
export function pinnedLookup(pinned: LookupAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

/** The host as written in the URL, without IPv6 brackets. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** SNI name of a TLS connection to `url`: its host, unless that is an IP literal (no SNI then). */
export const servernameOf = (url: URL) => (url.protocol === 'https:' && !isIP(bareHost(url)) ? bareHost(url) : '');

export const defaultPort = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

/** The pool key: scheme, host, port, checked IP, TLS servername. */
export const poolKey = (url: URL, pinned: LookupAddress) => [url.protocol, bareHost(url), defaultPort(url), pinned.address, servernameOf(url)].join('|');

export class PinnedAgentPool {
  /** A lookup counts as a use; the agent evicted for a new key closes its idle sockets. */
  private readonly agents: LRUCache<string, HttpAgent>;
  private readonly options: Required<PinnedPoolOptions>;

  constructor(options: PinnedPoolOptions = {}) {
    this.options = { ...DEFAULT_POOL, ...options };
    this.agents = new LRUCache({ max: this.options.maxAgents, dispose: (agent, _key, reason) => reason === 'evict' && closeIdle(agent) });
  }

  /** The agent for a call to `url` whose host was checked and resolved to `pinned`. */
  agentFor(url: URL, pinned: LookupAddress): HttpAgent {
    const key = poolKey(url, pinned);
    const existing = this.agents.get(key);
    if (existing) return existing;
    const servername = servernameOf(url);
    const options = {
      keepAlive: true,
      maxFreeSockets: this.options.maxFreeSockets,
      // Node closes an idle pooled socket when this fires (an active one only gets a 'timeout' event).
      timeout: this.options.idleMs,
      scheduling: 'lifo' as const,
      lookup: pinnedLookup(pinned),
    };
    const agent = url.protocol === 'https:' ? new HttpsAgent({ ...options, ...(servername && { servername }) }) : new HttpAgent(options);
    this.agents.set(key, agent);
    return agent;
  }

  get size(): number {
    return this.agents.size;
  }

  /** Closes every pooled connection (at shutdown); calls in flight finish on theirs. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** An evicted agent: its idle sockets close now; sockets in use close when their call ends (no one takes them back). */
function closeIdle(agent: HttpAgent) {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  // Node's agent reads `keepAlive` when a socket comes free: off, it closes the socket instead of pooling it.
  (agent as HttpAgent & { keepAlive: boolean }).keepAlive = false;
}
