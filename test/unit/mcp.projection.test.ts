import { expect } from 'chai';
import { MASKED_SECRET, mcpServerStreamId, type McpEvent } from '../../domain/mcp/index.js';
import { dueReconnects, findMcpServerDoc, listMcpServers, mcpProjectors, mcpReadModel, MCP_SERVERS, mcpServerViewOf, type McpServerDoc } from '../../projections/mcp.js';
import { listMcpHistory, MCP_HISTORY } from '../../projections/mcp-history.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const on = (serverId: string, event: McpEvent, actorId: string | null = 'u1'): GivenEvent => ({ streamId: mcpServerStreamId(serverId), event, actorId });

const endpoint = { name: 'everything', transport: 'stdio' as const, command: 'node', args: ['server.js'], env: { API_TOKEN: 'v1.sealed' }, url: null, headers: {}, autoReconnect: false };
const registered = (serverId: string, owner: { ownerId: string; orgId: string | null; workspaceId: string | null } = { ownerId: 'u1', orgId: null, workspaceId: null }, extra: Partial<typeof endpoint> = {}): McpEvent => ({
  type: 'McpServerRegistered',
  data: { serverId, ...owner, ...endpoint, ...extra, at: T0 },
});
const serverInfo = { name: 'srv', version: '1.0', protocolVersion: '2025-06-18', instructions: null };
const connected = (requestId: string, ms: number): McpEvent => ({
  type: 'McpServerConnected',
  data: { requestId, serverInfo, capabilities: '{"tools":{}}', transportUsed: 'stdio', tools: '[{"name":"echo"}]', at: at(ms) },
});

describe('MCP projections', () => {
  it('servers: registration keeps secret names only; connection state, server info and tools follow the events', async () => {
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s1', { type: 'McpConnectRequested', data: { requestId: 'r1', reason: 'user', at: at(10) } }),
        on('s1', connected('r1', 20)),
        on('s1', { type: 'McpToolsListed', data: { requestId: 'list-1', tools: '[{"name":"echo"},{"name":"add"}]', at: at(30) } }),
      ])
      .then(async (store) => {
        const doc = await store.collection<McpServerDoc>(MCP_SERVERS).findOne({ _id: 's1' });
        expect(doc).to.deep.include({
          ownerId: 'u1', name: 'everything', command: 'node', args: ['server.js'], envKeys: ['API_TOKEN'], headerNames: [],
          state: 'connected', lastError: null, serverInfo, capabilities: '{"tools":{}}', transportUsed: 'stdio', connectedAt: at(20),
          tools: '[{"name":"echo"},{"name":"add"}]', toolsUpdatedAt: at(30), version: 3, createdAt: T0, updatedAt: at(30), deleted: false,
        });
        expect(JSON.stringify(doc)).not.to.contain('v1.sealed');
        const view = mcpServerViewOf(doc!);
        expect(view).to.deep.include({ id: 's1', env: { API_TOKEN: MASKED_SECRET }, headers: {}, toolCount: 2, capabilities: { tools: {} }, reconnect: { attempts: 0, nextAttemptAt: null } });
      });
  });

  it('servers: a loss schedules a reconnect; turning the flag off again cancels it; due reconnects for the scan', async () => {
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s1', { type: 'McpConnectRequested', data: { requestId: 'r1', reason: 'user', at: at(10) } }),
        on('s1', connected('r1', 20)),
        on('s1', { type: 'McpConnectionLost', data: { connectionId: 'r1', error: { code: 'MCP_CONNECTION_LOST', message: 'gone' }, attempt: 1, nextReconnectAt: null, at: at(30) } }),
        on('s1', { type: 'McpAutoReconnectSet', data: { enabled: true, at: at(40) } }),
        on('s1', { type: 'McpAutoReconnectSet', data: { enabled: false, at: at(50) } }),
        on('s2', registered('s2', undefined, { autoReconnect: true })),
        on('s2', { type: 'McpConnectRequested', data: { requestId: 'q1', reason: 'user', at: at(10) } }),
        on('s2', { type: 'McpServerConnectFailed', data: { requestId: 'q1', error: { code: 'MCP_CONNECT_FAILED', message: 'refused' }, attempt: 2, nextReconnectAt: at(1_000), at: at(20) } }),
        on('s3', registered('s3', undefined, { autoReconnect: true })),
        on('s3', { type: 'McpConnectRequested', data: { requestId: 'p1', reason: 'auto', at: at(10) } }),
      ])
      .then(async (store) => {
        const servers = store.collection<McpServerDoc>(MCP_SERVERS);
        expect(await servers.findOne({ _id: 's1' })).to.deep.include({
          state: 'error', autoReconnect: false, nextReconnectAt: null, reconnectAttempts: 1, lastError: { code: 'MCP_CONNECTION_LOST', message: 'gone', at: at(30) },
        });
        expect(await servers.findOne({ _id: 's2' })).to.deep.include({ state: 'error', autoReconnect: true, reconnectAttempts: 2, nextReconnectAt: at(1_000) });
        // Due: s2 once its attempt time has passed; s3 once its connect is older than staleBefore.
        expect((await dueReconnects(store, at(999), at(0))).map((d) => d._id)).to.deep.equal([]);
        expect(await mcpReadModel(store).dueReconnects(at(1_000), at(0))).to.deep.equal(['s2']);
        expect((await mcpReadModel(store).dueReconnects(at(1_000), at(11))).sort()).to.deep.equal(['s2', 's3']);
      });
  });

  it('servers: enabling the flag while down makes a reconnect due at the time it was enabled', async () => {
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s1', { type: 'McpConnectRequested', data: { requestId: 'r1', reason: 'user', at: at(10) } }),
        on('s1', { type: 'McpServerConnectFailed', data: { requestId: 'r1', error: { code: 'MCP_TIMEOUT', message: 'slow' }, attempt: 1, nextReconnectAt: null, at: at(20) } }),
        on('s1', { type: 'McpAutoReconnectSet', data: { enabled: true, at: at(40) } }),
      ])
      .thenDocuments(MCP_SERVERS, [{ _id: 's1', state: 'error', autoReconnect: true, nextReconnectAt: at(40) }]);
  });

  it('servers: the scope rule of the queries (personal to the owner, organization servers to the workspace); deleted servers are gone', async () => {
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s2', registered('s2', { ownerId: 'u2', orgId: 'o1', workspaceId: 'w1' })),
        on('s3', registered('s3')),
        on('s3', { type: 'McpServerDeleted', data: { at: at(5) } }),
      ])
      .then(async (store) => {
        const me = { userId: 'u1', orgId: null, workspaceId: null };
        expect(await findMcpServerDoc(store, 's1', me)).to.deep.include({ _id: 's1' });
        expect(await findMcpServerDoc(store, 's1', { userId: 'u2', orgId: null, workspaceId: null })).to.equal(null);
        expect(await findMcpServerDoc(store, 's2', { userId: 'u3', orgId: 'o1', workspaceId: 'w1' })).to.deep.include({ _id: 's2' });
        expect(await findMcpServerDoc(store, 's2', { userId: 'u2', orgId: 'o1', workspaceId: 'w2' })).to.equal(null);
        expect(await findMcpServerDoc(store, 's3', me)).to.equal(null);
        expect(await findMcpServerDoc(store, 's3', null)).to.equal(null);
        const page = await listMcpServers(store, me, { limit: 10 });
        expect(page.items.map((v) => v.id)).to.deep.equal(['s1']);
      });
  });

  it('history: a tool call with progress and its outcome, a resource read that failed; listings are not history', async () => {
    const call: McpEvent = {
      type: 'McpToolCallRequested',
      data: { requestId: 'c1', toolName: 'echo', arguments: '{"message":"hi"}', timeoutMs: 1000, source: 'flow', processId: 'p1', nodeId: 'n1', at: at(10) },
    };
    const progress: McpEvent = { type: 'McpToolCallProgressed', data: { requestId: 'c1', progress: 1, total: 2, message: null, at: at(11) } };
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s1', call),
        on('s1', progress),
        on('s1', { ...progress, data: { ...progress.data, progress: 2 } } as McpEvent),
        on('s1', {
          type: 'McpToolCallCompleted',
          data: { requestId: 'c1', toolName: 'echo', content: '[{"type":"text","text":"hi"}]', text: 'hi', isError: false, structuredContent: null, durationMs: 7, truncated: false, at: at(12) },
        }),
        on('s1', { type: 'McpResourceReadRequested', data: { requestId: 'r1', uri: 'test://a', timeoutMs: 1000, at: at(20) } }, 'u2'),
        on('s1', { type: 'McpRequestFailed', data: { requestId: 'r1', operation: 'resource_read', error: { code: 'MCP_PROTOCOL_ERROR', message: 'no such resource' }, at: at(21) } }),
        on('s1', { type: 'McpToolsListRequested', data: { requestId: 'l1', at: at(30) } }),
        on('s1', { type: 'McpRequestFailed', data: { requestId: 'l1', operation: 'tools_list', error: { code: 'MCP_TIMEOUT', message: 'slow' }, at: at(31) } }),
      ])
      .then(async (store) => {
        expect(await store.collection(MCP_HISTORY).count({})).to.equal(2);
        const page = await listMcpHistory(store, 's1', { limit: 10 });
        expect(page.items).to.have.length(2);
        expect(page.items[0]).to.deep.include({ requestId: 'r1', kind: 'resource_read', uri: 'test://a', actorId: 'u2', status: 'failed', error: { code: 'MCP_PROTOCOL_ERROR', message: 'no such resource' }, finishedAt: at(21) });
        expect(page.items[1]).to.deep.include({
          requestId: 'c1', kind: 'tool_call', toolName: 'echo', arguments: { message: 'hi' }, source: 'flow', processId: 'p1', nodeId: 'n1', actorId: 'u1',
          status: 'completed', isError: false, content: [{ type: 'text', text: 'hi' }], text: 'hi', structuredContent: null, durationMs: 7, progressCount: 2, requestedAt: at(10), finishedAt: at(12),
        });
        expect(Object.keys(page.items[1]).sort()).to.deep.equal(
          ['actorId', 'arguments', 'content', 'durationMs', 'error', 'finishedAt', 'isError', 'kind', 'nodeId', 'processId', 'progressCount', 'requestId', 'requestedAt', 'source', 'status', 'structuredContent', 'text', 'toolName', 'truncated', 'uri'],
        );
        expect((await listMcpHistory(store, 's1', { limit: 10, kind: 'tool_call' })).items.map((e) => e.requestId)).to.deep.equal(['c1']);
      });
  });

  it('history: progress of a call still running is counted once, also when redelivered', async () => {
    const progress = (n: number): GivenEvent => on('s1', { type: 'McpToolCallProgressed', data: { requestId: 'c1', progress: n, total: null, message: null, at: at(10 + n) } });
    await projectionSpec(mcpProjectors)
      .given([
        on('s1', registered('s1')),
        on('s1', { type: 'McpToolCallRequested', data: { requestId: 'c1', toolName: 'slow', arguments: '{}', timeoutMs: 1000, source: 'api', processId: null, nodeId: null, at: at(10) } }),
        progress(1),
        progress(2),
        progress(3),
      ])
      .thenDocuments(MCP_HISTORY, [{ _id: 's1:c1', status: 'pending', progressCount: 3 }]);
  });
});
