import { expect } from 'chai';
import { mcpServerDecider, reconnectDelayMs, type McpEvent } from '../../domain/mcp/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(mcpServerDecider);
const owner = { userId: 'u1', orgId: null, workspaceId: null };
const config = { name: 's', transport: 'stdio' as const, command: 'node', args: [], env: {}, url: null, headers: {}, autoReconnect: true };
const policy = { baseMs: 1000, maxMs: 8000, stableMs: 60_000 };
const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const registered: McpEvent = { type: 'McpServerRegistered', data: { serverId: 's1', ownerId: 'u1', orgId: null, workspaceId: null, ...config, at: T0 } };
const unflagged = { ...registered, data: { ...(registered.data as object), autoReconnect: false } } as McpEvent;
const requested = (requestId: string, ms = 0): McpEvent => ({ type: 'McpConnectRequested', data: { requestId, reason: 'user', at: at(ms) } });
const serverInfo = { name: 'x', version: '1', protocolVersion: null, instructions: null };
const connected = (requestId: string, ms = 0): McpEvent => ({
  type: 'McpServerConnected',
  data: { requestId, serverInfo, capabilities: '{}', transportUsed: 'stdio', tools: null, at: at(ms) },
});
const lose = (connectionId: string, ms: number) => ({ type: 'RecordConnectionLost' as const, connectionId, error: { code: 'L', message: 'x' }, at: at(ms), policy, random: 0 });

describe('MCP server decider', () => {
  it('backoff: exponential, capped, with equal jitter', () => {
    expect(reconnectDelayMs(1, policy, 0)).to.equal(500);
    expect(reconnectDelayMs(1, policy, 0.999999)).to.equal(1000);
    expect(reconnectDelayMs(3, policy, 0)).to.equal(2000);
    expect(reconnectDelayMs(10, policy, 0.5)).to.equal(6000);
    expect(reconnectDelayMs(100, policy, 1)).to.equal(8000);
  });

  it('another tenant is not found; a deleted server is not found', () => {
    spec.given([registered]).when({ type: 'DeleteServer', scope: { userId: 'u2', orgId: null, workspaceId: null }, at: T0 }).thenThrows('MCP_SERVER_NOT_FOUND', 'not_found');
    spec
      .given([registered, { type: 'McpServerDeleted', data: { at: T0 } }])
      .when({ type: 'RequestConnect', scope: owner, requestId: 'r', reason: 'user', staleBefore: T0, at: T0 })
      .thenThrows('MCP_SERVER_NOT_FOUND', 'not_found');
  });

  it('connect: requested once; a pending request is joined until stale; connected is a no-op', () => {
    const pending = [registered, requested('r1', 0)];
    expect(spec.stateOf(pending).state).to.equal('connecting');
    spec.given(pending).when({ type: 'RequestConnect', requestId: 'r2', reason: 'user', staleBefore: at(-1000), at: at(10) }).then([]);
    expect(spec.given(pending).when({ type: 'RequestConnect', requestId: 'r2', reason: 'auto', staleBefore: at(1), at: at(10) }).events()).to.have.length(1);
    spec.given([registered, requested('r1'), connected('r1')]).when({ type: 'RequestConnect', requestId: 'r3', reason: 'user', staleBefore: T0, at: T0 }).then([]);
  });

  it('an outcome for a request that is no longer pending is not recorded (replay, overtaken by a disconnect)', () => {
    const overtaken = [registered, requested('r1'), { type: 'McpDisconnectRequested', data: { requestId: 'd1', at: T0 } }, { type: 'McpServerDisconnected', data: { requestId: 'd1', at: T0 } }] as McpEvent[];
    spec.given(overtaken).when({ type: 'RecordConnected', requestId: 'r1', serverInfo, capabilities: '{}', transportUsed: 'stdio', tools: null, at: T0 }).then([]);
    spec.given(overtaken).when({ type: 'RecordConnectFailed', requestId: 'r1', error: { code: 'X', message: 'x' }, at: T0, policy, random: 0 }).then([]);
  });

  it('loss: only for the current connection; attempts grow, and restart after a stable period', () => {
    const up = [registered, requested('r1'), connected('r1', 0)];
    spec.given(up).when(lose('old', 5)).then([]);
    const [lost] = spec.given(up).when(lose('r1', 5)).events();
    expect(lost).to.deep.include({ type: 'McpConnectionLost' });
    expect((lost.data as { attempt: number; nextReconnectAt: string }).attempt).to.equal(1);
    expect((lost.data as { nextReconnectAt: string }).nextReconnectAt).to.equal(at(505));
    const down = [...up, lost, requested('r2', 600)];
    const [failed] = spec.given(down).when({ type: 'RecordConnectFailed', requestId: 'r2', error: { code: 'F', message: 'x' }, at: at(700), policy, random: 0 }).events();
    expect(failed.data).to.include({ attempt: 2, nextReconnectAt: at(1700) });
    // Connected again, stable for longer than stableMs: the next loss starts from attempt 1.
    const stable = [...down, failed, requested('r3', 2000), connected('r3', 2000)];
    const [again] = spec.given(stable).when(lose('r3', 2000 + 60_000)).events();
    expect(again.data).to.include({ attempt: 1 });
    const [quick] = spec.given(stable).when(lose('r3', 2100)).events();
    expect(quick.data).to.include({ attempt: 3 });
  });

  it('without the flag no reconnect is scheduled; enabling it while down makes one due at once', () => {
    const plain = [unflagged, requested('r1'), connected('r1')];
    const [lost] = spec.given(plain).when(lose('r1', 5)).events();
    expect((lost.data as { nextReconnectAt: string | null }).nextReconnectAt).to.equal(null);
    const enabled = spec.stateOf([...plain, lost, { type: 'McpAutoReconnectSet', data: { enabled: true, at: at(10) } }]);
    expect(enabled.nextReconnectAt).to.equal(at(10));
  });
});
