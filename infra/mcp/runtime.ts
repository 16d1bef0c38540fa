import type { HeldConnection, LostListener, McpClient, McpEndpoint, McpRuntime, ToolsChangedListener } from '../../ports/mcp.js';

export type { HeldConnection, LostListener, McpRuntime, ToolsChangedListener } from '../../ports/mcp.js';

const CLOSE_WAIT_MS = 5_000;

/** The McpRuntime port: this process's connections (opened through the client port), timers and background work. */
export function createMcpRuntime(client: McpClient): McpRuntime {
  const held = new Map<string, HeldConnection>();
  const opening = new Map<string, { connectionId: string; promise: Promise<HeldConnection> }>();
  const work = new Set<Promise<unknown>>();
  const timers = new Map<string, NodeJS.Timeout>();
  const nappers = new Map<string, Set<() => void>>();
  let lostListener: LostListener = () => {};
  let toolsChangedListener: ToolsChangedListener = () => {};
  let closed = false;

  async function doOpen(serverId: string, connectionId: string, endpoint: McpEndpoint): Promise<HeldConnection> {
    let entry: HeldConnection | null = null;
    const connection = await client.open(endpoint, {
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
