import { isMcpServerVisibleTo, MASKED_SECRET, MCP_CATEGORY, serverIdOfStream, type McpConnectionState, type McpEndpointConfig, type McpEvent, type McpScope, type McpTransport } from '../domain/mcp/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { McpReadModel } from '../ports/mcp.js';
import type { Doc, Filter, Page, ReadStore } from '../ports/read-store.js';
import type { Projector } from './projector.js';
import { mcpHistoryProjector } from './mcp-history.js';

/**
 * Read model of MCP servers (collection `mcp_servers`): registration with secrets reduced to their
 * names, connection state, the handshake's server info and capabilities, and the tool list the
 * last connect or refresh saw. User-shaped JSON (capabilities, tools) is kept as JSON text
 * (FerretDB: no `$` or dotted keys).
 */
export interface McpServerDoc extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  name: string;
  transport: McpTransport;
  command: string | null;
  args: string[];
  envKeys: string[];
  url: string | null;
  headerNames: string[];
  autoReconnect: boolean;
  state: McpConnectionState;
  lastError: { code: string; message: string; at: string } | null;
  serverInfo: { name: string; version: string; protocolVersion: string | null; instructions: string | null } | null;
  capabilities: string | null;
  transportUsed: McpTransport | null;
  connectedAt: string | null;
  tools: string | null;
  toolsUpdatedAt: string | null;
  reconnectAttempts: number;
  nextReconnectAt: string | null;
  deleted: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** What GET /mcp/servers/{serverId} answers (secrets masked). */
export interface McpServerView extends McpEndpointConfig {
  id: string;
  state: McpConnectionState;
  lastError: { code: string; message: string; at: string } | null;
  serverInfo: { name: string; version: string; protocolVersion: string | null; instructions: string | null } | null;
  capabilities: Record<string, unknown> | null;
  transportUsed: McpTransport | null;
  connectedAt: string | null;
  toolCount: number | null;
  reconnect: { attempts: number; nextAttemptAt: string | null };
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  createdAt: string;
  updatedAt: string;
}

export const MCP_SERVERS = 'mcp_servers';

const masked = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, MASKED_SECRET]));

export function mcpServerViewOf(doc: McpServerDoc): McpServerView {
  const tools = doc.tools ? (JSON.parse(doc.tools) as unknown[]) : null;
  return {
    id: doc._id,
    name: doc.name,
    transport: doc.transport,
    command: doc.command,
    args: doc.args,
    env: masked(doc.envKeys),
    url: doc.url,
    headers: masked(doc.headerNames),
    autoReconnect: doc.autoReconnect,
    state: doc.state,
    lastError: doc.lastError,
    serverInfo: doc.serverInfo,
    capabilities: doc.capabilities ? (JSON.parse(doc.capabilities) as Record<string, unknown>) : null,
    transportUsed: doc.transportUsed,
    connectedAt: doc.connectedAt,
    toolCount: tools ? tools.length : null,
    reconnect: { attempts: doc.reconnectAttempts, nextAttemptAt: doc.nextReconnectAt },
    ownerId: doc.ownerId,
    orgId: doc.orgId,
    workspaceId: doc.workspaceId,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

const endpointFields = (d: McpEndpointConfig) => ({
  name: d.name,
  transport: d.transport,
  command: d.command,
  args: d.args,
  envKeys: Object.keys(d.env),
  url: d.url,
  headerNames: Object.keys(d.headers),
  autoReconnect: d.autoReconnect,
});

/** The `$set` an event makes on the server's document (null: the event does not show here). */
function changesOf(event: McpEvent): Partial<McpServerDoc> | null {
  switch (event.type) {
    case 'McpServerUpdated':
      return endpointFields(event.data);
    case 'McpServerDeleted':
      return { deleted: true, state: 'disconnected', nextReconnectAt: null };
    case 'McpAutoReconnectSet':
      return event.data.enabled ? { autoReconnect: true } : { autoReconnect: false, nextReconnectAt: null };
    case 'McpConnectRequested':
      return { state: 'connecting', nextReconnectAt: null };
    case 'McpServerConnected':
      return {
        state: 'connected',
        lastError: null,
        serverInfo: event.data.serverInfo,
        capabilities: event.data.capabilities,
        transportUsed: event.data.transportUsed,
        connectedAt: event.data.at,
        tools: event.data.tools,
        toolsUpdatedAt: event.data.at,
        nextReconnectAt: null,
      };
    case 'McpServerConnectFailed':
    case 'McpConnectionLost':
      return { state: 'error', lastError: { ...event.data.error, at: event.data.at }, reconnectAttempts: event.data.attempt, nextReconnectAt: event.data.nextReconnectAt };
    case 'McpServerDisconnected':
      return { state: 'disconnected', connectedAt: null, reconnectAttempts: 0, nextReconnectAt: null };
    case 'McpToolsListed':
      return { tools: event.data.tools, toolsUpdatedAt: event.data.at };
    default:
      return null;
  }
}

export const mcpServersProjector: Projector = {
  name: 'mcp-servers',
  categories: [MCP_CATEGORY],
  collections: [MCP_SERVERS],
  async setup(store) {
    const servers = store.collection(MCP_SERVERS);
    await servers.createIndex({ keys: { orgId: 1, workspaceId: 1, ownerId: 1, updatedAt: -1 } });
    await servers.createIndex({ keys: { autoReconnect: 1, state: 1 } });
  },
  async project(recorded, store) {
    const event = recorded as RecordedEvent & McpEvent;
    const servers = store.collection<McpServerDoc>(MCP_SERVERS);
    const id = serverIdOfStream(recorded.streamId);
    if (event.type === 'McpServerRegistered') {
      const d = event.data;
      await servers.replaceOne(
        { _id: id },
        {
          _id: id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, ...endpointFields(d),
          state: 'disconnected', lastError: null, serverInfo: null, capabilities: null, transportUsed: null, connectedAt: null,
          tools: null, toolsUpdatedAt: null, reconnectAttempts: 0, nextReconnectAt: null, deleted: false,
          version: recorded.revision, createdAt: d.at, updatedAt: d.at,
        },
        { upsert: true },
      );
      return;
    }
    const changes = changesOf(event);
    if (!changes) return;
    const at = (event.data as { at: string }).at;
    // Guarded by revision: a redelivered event, or one older than what is shown, changes nothing.
    await servers.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { ...changes, version: recorded.revision, updatedAt: at } });
    // Turned on while down: due at once (the decider's evolve says the same).
    if (event.type === 'McpAutoReconnectSet' && event.data.enabled) await servers.updateOne({ _id: id, state: 'error', nextReconnectAt: null }, { $set: { nextReconnectAt: at } });
  },
};

export const mcpProjectors: Projector[] = [mcpServersProjector, mcpHistoryProjector];

/** The flows rule: same organization and workspace; personal servers are their owner's alone. */
function scopeFilter(scope: McpScope): Filter {
  const filter: Filter = { orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false };
  if (scope.orgId === null) filter.ownerId = scope.userId;
  return filter;
}

export async function findMcpServerDoc(readStore: ReadStore, serverId: string, scope: McpScope | null): Promise<McpServerDoc | null> {
  const doc = await readStore.collection<McpServerDoc>(MCP_SERVERS).findOne({ _id: serverId });
  if (!doc || doc.deleted) return null;
  if (scope && !isMcpServerVisibleTo(doc, scope)) return null;
  return doc;
}

/** The same masked JSON GET /mcp/servers/{serverId} answers; null when absent or another tenant's. */
export async function getMcpServerView(readStore: ReadStore, serverId: string, scope: McpScope): Promise<McpServerView | null> {
  const doc = await findMcpServerDoc(readStore, serverId, scope);
  return doc ? mcpServerViewOf(doc) : null;
}

export async function listMcpServers(readStore: ReadStore, scope: McpScope, options: { limit: number; cursor?: string | null }): Promise<Page<McpServerView>> {
  const page = await readStore.collection<McpServerDoc>(MCP_SERVERS).page(scopeFilter(scope), { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null });
  return { items: page.items.map(mcpServerViewOf), nextCursor: page.nextCursor };
}

/** Every server of the scope with automatic reconnection on (for POST /mcp/servers/auto-reconnect/run). */
export function flaggedMcpServers(readStore: ReadStore, scope: McpScope): Promise<McpServerDoc[]> {
  return readStore.collection<McpServerDoc>(MCP_SERVERS).find({ ...scopeFilter(scope), autoReconnect: true }, { sort: { createdAt: 1 }, limit: 1000 });
}

/**
 * Flagged servers whose reconnect is due (the worker's scan; every tenant): down with the attempt
 * time passed, or stuck connecting since before `staleBefore` (the worker serving it died).
 */
export function dueReconnects(readStore: ReadStore, now: string, staleBefore: string, limit = 100): Promise<McpServerDoc[]> {
  return readStore.collection<McpServerDoc>(MCP_SERVERS).find(
    {
      deleted: false,
      autoReconnect: true,
      $or: [{ state: 'error', nextReconnectAt: { $ne: null, $lte: now } }, { state: 'connecting', updatedAt: { $lt: staleBefore } }],
    },
    { sort: { updatedAt: 1 }, limit },
  );
}

/** The McpReadModel port the reconnector reads through (wired by the container). */
export function mcpReadModel(readStore: ReadStore): McpReadModel {
  return { dueReconnects: async (now, staleBefore) => (await dueReconnects(readStore, now, staleBefore)).map((doc) => doc._id) };
}

/** The cached tool list (null: never listed). */
export function toolsOf(doc: McpServerDoc): { tools: unknown[] | null; updatedAt: string | null } {
  return { tools: doc.tools ? (JSON.parse(doc.tools) as unknown[]) : null, updatedAt: doc.toolsUpdatedAt };
}
