import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { executeMcpCommand, loadMcpServer, plainEndpointOf } from '../commands/mcp.js';
import { appendMcpEvents } from '../commands/mcp-requests.js';
import type { McpEvent, McpServerState } from '../domain/mcp/index.js';
import { isMcpRequestExpired, MCP_REQUEST_EXPIRED, mayBeReplayed, serverIdOfStream } from '../domain/mcp/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { HeldConnection, McpConnection, McpRuntime, McpSettings } from '../ports/mcp.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import { ATTR } from '../lib/tracing.js';

/**
 * The worker side of MCP: opens and closes connections and serves calls, recording every outcome
 * as an event on the server's stream. The bus hands events over one at a time, so the handler
 * only dispatches: connection changes of one server run one after another (a chain per server),
 * calls run concurrently; all are tracked by the runtime so closing the services waits for them.
 *
 * Delivery is at least once: a connect request is served only while it is the pending one, and a
 * call request seen again (replay after a crash) is skipped when its outcome exists, or answered
 * MCP_REQUEST_EXPIRED when its caller stopped waiting long ago: tool calls are not repeated.
 */
export interface McpCallResultError {
  code: string;
  message: string;
}

/** The ports the worker uses. */
export interface McpWorkerPorts {
  eventStore: EventStore;
  /** This process's connections, timers and background work. */
  mcp: McpRuntime;
  sealedBox: SecretSealer;
  logger: Logger;
  config: Pick<McpSettings, 'MCP_CALL_TIMEOUT_MS' | 'MCP_RECONNECT_BASE_MS' | 'MCP_RECONNECT_MAX_MS' | 'MCP_RECONNECT_STABLE_MS'>;
  now(): Date;
}

const MAX_PROGRESS_EVENTS = 100;

export const errorOf = (err: unknown, fallback: string): McpCallResultError => {
  const e = err as { code?: unknown; message?: unknown };
  return { code: typeof e?.code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(e.code) ? e.code : fallback, message: String(e?.message ?? err).slice(0, 2000) };
};

export function backoffInput(c: McpWorkerPorts['config']) {
  return { policy: { baseMs: c.MCP_RECONNECT_BASE_MS, maxMs: c.MCP_RECONNECT_MAX_MS, stableMs: c.MCP_RECONNECT_STABLE_MS }, random: Math.random() };
}

export function workerContext(now: Date, state: Pick<McpServerState, 'orgId' | 'workspaceId'>, cause?: RecordedEvent): CommandContext {
  return {
    actorId: null,
    orgId: state.orgId,
    workspaceId: state.workspaceId,
    correlationId: cause?.metadata.correlationId ?? randomUUID(),
    causationId: cause?.id ?? null,
    requestId: cause?.metadata.requestId ?? null,
    now,
  };
}

export class McpWorker {
  private readonly chains = new Map<string, Promise<void>>();
  /** Tool calls running in this process, by requestId: a cancel request aborts one. */
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly ports: McpWorkerPorts,
    /** Called when an outcome says a reconnect is due (the reconnector schedules it). */
    private readonly onReconnectDue: (serverId: string, at: string) => void,
  ) {
    ports.mcp.onLost((serverId, connectionId, reason) => this.track(this.recordLost(serverId, connectionId, { code: 'MCP_CONNECTION_LOST', message: reason })));
    ports.mcp.onToolsChanged((serverId, held) => this.chain(serverId, () => this.refreshTools(serverId, held)));
  }

  private track(work: Promise<unknown>) {
    this.ports.mcp.track(
      work.catch((err) => this.ports.logger.error({ err: (err as Error).message }, 'MCP worker job failed')),
    );
  }

  /** Connection changes of one server, one after another. */
  private chain(serverId: string, job: () => Promise<void>) {
    const next = (this.chains.get(serverId) ?? Promise.resolve()).then(job, job);
    const tail = next.catch(() => undefined).finally(() => {
      if (this.chains.get(serverId) === tail) this.chains.delete(serverId);
    });
    this.chains.set(serverId, tail);
    this.track(next);
  }

  async handle(recorded: RecordedEvent): Promise<void> {
    if (this.ports.mcp.closed) return;
    const event = recorded as RecordedEvent & McpEvent;
    const serverId = serverIdOfStream(recorded.streamId);
    switch (event.type) {
      case 'McpConnectRequested':
        return this.chain(serverId, () => this.connect(serverId, event.data.requestId, recorded));
      case 'McpDisconnectRequested':
        return this.chain(serverId, () => this.disconnect(serverId, event.data.requestId, recorded));
      case 'McpServerDeleted':
        return this.chain(serverId, () => this.ports.mcp.drop(serverId));
      case 'McpServerConnectFailed':
      case 'McpConnectionLost':
        if (event.data.nextReconnectAt) this.onReconnectDue(serverId, event.data.nextReconnectAt);
        return;
      case 'McpToolCallRequested':
      case 'McpToolsListRequested':
      case 'McpResourcesListRequested':
      case 'McpResourceReadRequested':
        return this.track(this.serve(serverId, recorded as RecordedEvent & McpEvent));
      case 'McpToolCallCancelRequested':
        // Only the process running the call holds it (with Kafka: the partition's worker).
        this.running.get(event.data.requestId)?.abort(new Error(event.data.reason));
        return;
      default:
        return;
    }
  }

  private async connect(serverId: string, requestId: string, cause: RecordedEvent) {
    const { state } = await loadMcpServer(this.ports, serverId);
    // Served only while it is the pending request: a replay, or a request a disconnect overtook, is not.
    if (state.deleted || state.pendingConnect?.requestId !== requestId) return;
    const ctx = () => workerContext(this.ports.now(), state, cause);
    try {
      const endpoint = plainEndpointOf(this.ports.sealedBox, state.config);
      const held = await this.ports.mcp.open(serverId, requestId, endpoint);
      const { identity } = held.connection;
      const tools = identity.capabilities.tools ? await held.connection.listTools() : null;
      if (tools) held.lastTools = JSON.stringify(tools);
      const recorded = await executeMcpCommand(this.ports, ctx(), serverId, {
        type: 'RecordConnected',
        requestId,
        serverInfo: { name: identity.name, version: identity.version, protocolVersion: identity.protocolVersion ?? null, instructions: identity.instructions ?? null },
        capabilities: JSON.stringify(identity.capabilities),
        transportUsed: identity.transportUsed,
        tools: tools ? JSON.stringify(tools) : null,
        at: this.ports.now().toISOString(),
      });
      this.ports.mcp.wake(requestId);
      if (recorded.events.length === 0 && this.ports.mcp.get(serverId)?.connectionId === requestId) await this.ports.mcp.drop(serverId);
    } catch (err) {
      if (this.ports.mcp.get(serverId)?.connectionId === requestId) await this.ports.mcp.drop(serverId);
      await executeMcpCommand(this.ports, ctx(), serverId, {
        type: 'RecordConnectFailed',
        requestId,
        error: errorOf(err, 'MCP_CONNECT_FAILED'),
        at: this.ports.now().toISOString(),
        ...backoffInput(this.ports.config),
      });
      this.ports.mcp.wake(requestId);
    }
  }

  private async disconnect(serverId: string, requestId: string, cause: RecordedEvent) {
    await this.ports.mcp.drop(serverId);
    const { state } = await loadMcpServer(this.ports, serverId);
    if (!state.exists) return;
    await executeMcpCommand(this.ports, workerContext(this.ports.now(), state, cause), serverId, { type: 'RecordDisconnected', requestId, at: this.ports.now().toISOString() });
    this.ports.mcp.wake(requestId);
  }

  /**
   * The server said its tool list changed: list it again and record it (`McpToolsListed`, the
   * read model's cache) when it differs from what this connection recorded last. Runs in the
   * server's chain, after the connect that recorded the first list.
   */
  private async refreshTools(serverId: string, held: HeldConnection) {
    if (this.ports.mcp.get(serverId) !== held) return;
    const { state } = await loadMcpServer(this.ports, serverId);
    if (state.deleted || state.state !== 'connected' || state.connectionId !== held.connectionId) return;
    const tools = JSON.stringify(await held.connection.listTools());
    if (tools === held.lastTools) return;
    held.lastTools = tools;
    await appendMcpEvents(this.ports.eventStore, workerContext(this.ports.now(), state), serverId, [
      { type: 'McpToolsListed', data: { requestId: `list-changed-${randomUUID()}`, tools, at: this.ports.now().toISOString() } },
    ]);
  }

  private async recordLost(serverId: string, connectionId: string, error: McpCallResultError) {
    const { state } = await loadMcpServer(this.ports, serverId);
    if (!state.exists) return;
    await executeMcpCommand(this.ports, workerContext(this.ports.now(), state), serverId, {
      type: 'RecordConnectionLost',
      connectionId,
      error,
      at: this.ports.now().toISOString(),
      ...backoffInput(this.ports.config),
    });
  }

  /** The connection for a call: ours, or reopened lazily when the state says connected but this process holds none (restart, rebalance). */
  private async connectionFor(serverId: string, state: McpServerState): Promise<McpConnection> {
    const held = this.ports.mcp.get(serverId);
    if (held && held.connectionId === state.connectionId) return held.connection;
    try {
      const endpoint = plainEndpointOf(this.ports.sealedBox, state.config);
      return (await this.ports.mcp.open(serverId, state.connectionId!, endpoint)).connection;
    } catch (err) {
      const error = errorOf(err, 'MCP_CONNECT_FAILED');
      await this.recordLost(serverId, state.connectionId!, { code: error.code, message: `reconnecting lazily failed: ${error.message}` });
      throw Object.assign(new Error(`the connection was lost and could not be reopened: ${error.message}`), { code: 'MCP_NOT_CONNECTED' });
    }
  }

  private async alreadyAnswered(serverId: string, recorded: RecordedEvent, requestId: string): Promise<boolean> {
    const later = await this.ports.eventStore.readStream(recorded.streamId, { fromRevision: recorded.revision + 1 });
    return later.some((e) => e.type !== recorded.type && (e.data as { requestId?: unknown }).requestId === requestId && !e.type.endsWith('Progressed'));
  }

  private async serve(serverId: string, recorded: RecordedEvent & McpEvent) {
    const data = recorded.data as { requestId: string; at: string; timeoutMs?: number };
    const { requestId } = data;
    const timeoutMs = data.timeoutMs ?? this.ports.config.MCP_CALL_TIMEOUT_MS;
    const seenAt = this.ports.now();
    // Cheap path for fresh requests; an old one may be a replay whose outcome is already recorded.
    if (mayBeReplayed(data.at, seenAt) && (await this.alreadyAnswered(serverId, recorded, requestId))) return;
    const { state } = await loadMcpServer(this.ports, serverId);
    const ctx = workerContext(this.ports.now(), state, recorded);
    const started = performance.now();
    const fail = (error: McpCallResultError) => this.recordFailure(serverId, ctx, recorded, error, Math.round(performance.now() - started));
    if (isMcpRequestExpired(data.at, timeoutMs, seenAt)) return fail({ ...MCP_REQUEST_EXPIRED });
    if (!state.exists || state.deleted) return fail({ code: 'MCP_SERVER_NOT_FOUND', message: 'the MCP server was deleted' });
    if (state.state !== 'connected') return fail({ code: 'MCP_NOT_CONNECTED', message: `the MCP server is ${state.state}` });
    let connection: McpConnection;
    try {
      connection = await this.connectionFor(serverId, state);
    } catch (err) {
      return fail(errorOf(err, 'MCP_NOT_CONNECTED'));
    }
    const at = () => this.ports.now().toISOString();
    try {
      switch (recorded.type) {
        case 'McpToolCallRequested': {
          const d = recorded.data;
          let progressEvents = 0;
          let progressChain: Promise<unknown> = Promise.resolve();
          const abort = new AbortController();
          this.running.set(requestId, abort);
          const result = await connection.callTool(d.toolName, JSON.parse(d.arguments) as Record<string, unknown>, {
            timeoutMs: d.timeoutMs,
            signal: abort.signal,
            // The run's ids on the call's span: its parent (the node) is in the process that asked.
            spanAttributes: { [ATTR.runId]: d.processId ?? undefined, [ATTR.nodeId]: d.nodeId ?? undefined, [ATTR.eventStream]: recorded.streamId, [ATTR.eventPosition]: recorded.position },
            onProgress: (p) => {
              if (++progressEvents > MAX_PROGRESS_EVENTS) return;
              const event: McpEvent = { type: 'McpToolCallProgressed', data: { requestId, progress: p.progress, total: p.total ?? null, message: p.message ?? null, at: at() } };
              progressChain = progressChain.then(() => this.append(serverId, ctx, requestId, event)).catch(() => undefined);
            },
          });
          // The client hands progress over before the result (in read order): appended before the outcome.
          await progressChain;
          await this.append(serverId, ctx, requestId, {
              type: 'McpToolCallCompleted',
              data: {
                requestId,
                toolName: d.toolName,
                content: JSON.stringify(result.content),
                text: result.text,
                isError: result.isError,
                structuredContent: result.structuredContent === undefined ? null : JSON.stringify(result.structuredContent),
                durationMs: result.durationMs,
                truncated: result.truncated,
                at: at(),
              },
            });
          return;
        }
        case 'McpToolsListRequested': {
          const tools = await connection.listTools();
          const held = this.ports.mcp.get(serverId);
          if (held?.connection === connection) held.lastTools = JSON.stringify(tools);
          await this.append(serverId, ctx, requestId, { type: 'McpToolsListed', data: { requestId, tools: JSON.stringify(tools), at: at() } });
          return;
        }
        case 'McpResourcesListRequested': {
          const list = await connection.listResources();
          await this.append(serverId, ctx, requestId, {
            type: 'McpResourcesListed',
            data: { requestId, resources: JSON.stringify(list.resources), resourceTemplates: JSON.stringify(list.resourceTemplates), at: at() },
          });
          return;
        }
        case 'McpResourceReadRequested': {
          const read = await connection.readResource(recorded.data.uri, { timeoutMs: recorded.data.timeoutMs });
          await this.append(serverId, ctx, requestId, {
            type: 'McpResourceRead',
            data: { requestId, uri: recorded.data.uri, contents: JSON.stringify(read.contents), truncated: read.truncated, durationMs: Math.round(performance.now() - started), at: at() },
          });
          return;
        }
        default:
          return;
      }
    } catch (err) {
      return fail(errorOf(err, 'MCP_CALL_FAILED'));
    } finally {
      this.running.delete(requestId);
    }
  }

  private async recordFailure(serverId: string, ctx: CommandContext, recorded: RecordedEvent & McpEvent, error: McpCallResultError, durationMs: number) {
    const { requestId } = recorded.data as { requestId: string };
    const at = this.ports.now().toISOString();
    const operation = recorded.type === 'McpToolsListRequested' ? 'tools_list' : recorded.type === 'McpResourcesListRequested' ? 'resources_list' : 'resource_read';
    const event: McpEvent =
      recorded.type === 'McpToolCallRequested'
        ? { type: 'McpToolCallFailed', data: { requestId, toolName: recorded.data.toolName, error, durationMs, at } }
        : { type: 'McpRequestFailed', data: { requestId, operation, error, at } };
    await this.append(serverId, ctx, requestId, event);
  }

  /** Appends an outcome (or progress) and wakes this process's waiter for it, if any. */
  private async append(serverId: string, ctx: CommandContext, requestId: string, event: McpEvent) {
    await appendMcpEvents(this.ports.eventStore, ctx, serverId, [event]);
    this.ports.mcp.wake(requestId);
  }
}
