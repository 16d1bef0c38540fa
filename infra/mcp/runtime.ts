import type { Services } from '../ports/services.js';
import { openMcpConnection, type McpConnection, type McpEndpoint } from './client.js';

/** An open connection and the id of the connect request that opened it (a loss names it). */
export interface HeldConnection {
  connectionId: string;
  connection: McpConnection;
  /** JSON of the tool list last recorded from this connection (a refresh that finds the same records nothing). */
  lastTools?: string;
}

export type LostListener = (serverId: string, connectionId: string, reason: string) => void;
export type ToolsChangedListener = (serverId: string, held: HeldConnection) => void;

/** What the MCP context keeps per process (open connections, background jobs, reconnect timers); closed with the services. */
export interface McpRuntime {
  readonly closed: boolean;
  get(serverId: string): HeldConnection | undefined;
  /** Opens (or joins the opening of) the server's connection; replaces a held one with another id. */
  open(serverId: string, connectionId: string, endpoint: McpEndpoint): Promise<HeldConnection>;
  /** Closes our connection to the server, if any (no loss is reported). */
  drop(serverId: string): Promise<void>;
  /** Who hears about connections lost without our close() (the worker's consumer). */
  onLost(listener: LostListener): void;
  /** Who hears that a server's tool list changed (`notifications/tools/list_changed`). */
  onToolsChanged(listener: ToolsChangedListener): void;
  /** Background work that must finish (or be cut short) before the stores close. */
  track(work: Promise<unknown>): void;
  /** One timer per key; a later schedule replaces it. */
  schedule(key: string, delayMs: number, fn: () => void): void;
  cancel(key: string): void;
  /**
   * Sleeps up to `ms`, or less when `wake(key)` is called in this process: a waiter for an outcome
   * that this process's worker appends is answered at once instead of at its next poll. Polling
   * stays the rule (the outcome may come from another process); this is only a shortcut.
   */
  nap(key: string, ms: number, signal?: AbortSignal): Promise<void>;
  wake(key: string): void;
  /** Closes every connection (stdio children die), clears timers, waits for background work. */
  close(): Promise<void>;
}

const CLOSE_WAIT_MS = 5_000;

export function createMcpRuntime(services: () => Services): McpRuntime {
  const held = new Map<string, HeldConnection>();
  const opening = new Map<string, { connectionId: string; promise: Promise<HeldConnection> }>();
  const work = new Set<Promise<unknown>>();
  const timers = new Map<string, NodeJS.Timeout>();
  const nappers = new Map<string, Set<() => void>>();
  let lostListener: LostListener = () => {};
  let toolsChangedListener: ToolsChangedListener = () => {};
  let closed = false;

  async function doOpen(serverId: string, connectionId: string, endpoint: McpEndpoint): Promise<HeldConnection> {
    const { config } = services();
    let entry: HeldConnection | null = null;
    const connection = await openMcpConnection(endpoint, {
      allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK,
      stdioAllowlist: config.MCP_STDIO_ALLOWLIST,
      connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
      maxResultBytes: config.MCP_MAX_RESULT_BYTES,
      pingIntervalMs: config.MCP_PING_INTERVAL_MS,
      onClose(reason) {
        if (entry && held.get(serverId) === entry) {
          held.delete(serverId);
          if (!closed) lostListener(serverId, connectionId, reason);
        }
      },
      onToolsChanged() {
        if (entry && held.get(serverId) === entry && !closed) toolsChangedListener(serverId, entry);
      },
    });
    if (closed) {
      await connection.close().catch(() => undefined);
      throw new Error('the MCP runtime is closed');
    }
    entry = { connectionId, connection };
    const previous = held.get(serverId);
    held.set(serverId, entry);
    if (previous) await previous.connection.close().catch(() => undefined);
    return entry;
  }

  const runtime: McpRuntime = {
    get closed() {
      return closed;
    },
    get: (serverId) => held.get(serverId),
    open(serverId, connectionId, endpoint) {
      if (closed) return Promise.reject(new Error('the MCP runtime is closed'));
      const pending = opening.get(serverId);
      if (pending && pending.connectionId === connectionId) return pending.promise;
      const promise = doOpen(serverId, connectionId, endpoint).finally(() => {
        if (opening.get(serverId)?.promise === promise) opening.delete(serverId);
      });
      opening.set(serverId, { connectionId, promise });
      return promise;
    },
    async drop(serverId) {
      const entry = held.get(serverId);
      held.delete(serverId);
      if (entry) await entry.connection.close().catch(() => undefined);
    },
    onLost(listener) {
      lostListener = listener;
    },
    onToolsChanged(listener) {
      toolsChangedListener = listener;
    },
    track(promise) {
      const p = promise.catch(() => undefined).finally(() => work.delete(p));
      work.add(p);
    },
    schedule(key, delayMs, fn) {
      if (closed) return;
      runtime.cancel(key);
      const timer = setTimeout(() => {
        timers.delete(key);
        if (!closed) fn();
      }, Math.max(0, delayMs));
      timer.unref();
      timers.set(key, timer);
    },
    cancel(key) {
      const timer = timers.get(key);
      if (timer) clearTimeout(timer);
      timers.delete(key);
    },
    nap(key, ms, signal) {
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          const set = nappers.get(key);
          set?.delete(done);
          if (set && set.size === 0) nappers.delete(key);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        let set = nappers.get(key);
        if (!set) nappers.set(key, (set = new Set()));
        set.add(done);
      });
    },
    wake(key) {
      for (const done of [...(nappers.get(key) ?? [])]) done();
    },
    async close() {
      closed = true;
      for (const set of [...nappers.values()]) for (const done of [...set]) done();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      // Connections first: in-flight calls then fail fast instead of holding the shutdown.
      // An open still under way closes itself when it lands (it sees `closed`).
      await Promise.race([Promise.allSettled([...opening.values()].map((o) => o.promise)), new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
      const all = [...held.values()];
      held.clear();
      await Promise.all(all.map((e) => e.connection.close().catch(() => undefined)));
      await Promise.race([Promise.allSettled([...work]), new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
    },
  };
  return runtime;
}
