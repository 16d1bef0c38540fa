import { expect } from 'chai';
import { fold } from '../../domain/shared/decider.js';
import { mcpServerDecider, reconnectDelayMs, type McpCommand, type McpEvent, type McpServerState } from '../../domain/mcp/index.js';

const owner = { userId: 'u1', orgId: null, workspaceId: null };
const config = { name: 's', transport: 'stdio' as const, command: 'node', args: [], env: {}, url: null, headers: {}, autoReconnect: true };
const policy = { baseMs: 1000, maxMs: 8000, stableMs: 60_000 };
const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function given(events: McpEvent[]): McpServerState {
  return fold(mcpServerDecider.evolve, mcpServerDecider.initialState, events);
}
const when = (state: McpServerState, command: McpCommand) => mcpServerDecider.decide(command, state);

const registered: McpEvent = { type: 'McpServerRegistered', data: { serverId: 's1', ownerId: 'u1', orgId: null, workspaceId: null, ...config, at: T0 } };
const requested = (requestId: string, ms = 0): McpEvent => ({ type: 'McpConnectRequested', data: { requestId, reason: 'user', at: at(ms) } });
const connected = (requestId: string, ms = 0): McpEvent => ({
  type: 'McpServerConnected',
  data: { requestId, serverInfo: { name: 'x', version: '1', protocolVersion: null, instructions: null }, capabilities: '{}', transportUsed: 'stdio', tools: null, at: at(ms) },
});

describe('MCP server decider', () => {
  it('backoff: exponential, capped, with equal jitter', () => {
    expect(reconnectDelayMs(1, policy, 0)).to.equal(500);
    expect(reconnectDelayMs(1, policy, 0.999999)).to.equal(1000);
    expect(reconnectDelayMs(3, policy, 0)).to.equal(2000);
    expect(reconnectDelayMs(10, policy, 0.5)).to.equal(6000);
    expect(reconnectDelayMs(100, policy, 1)).to.equal(8000);
  });

  it('another tenant is not found; a deleted server is not found', () => {
    const state = given([registered]);
    expect(() => when(state, { type: 'DeleteServer', scope: { userId: 'u2', orgId: null, workspaceId: null }, at: T0 })).to.throw().with.property('code', 'MCP_SERVER_NOT_FOUND');
    const deleted = given([registered, { type: 'McpServerDeleted', data: { at: T0 } }]);
    expect(() => when(deleted, { type: 'RequestConnect', scope: owner, requestId: 'r', reason: 'user', staleBefore: T0, at: T0 })).to.throw().with.property('code', 'MCP_SERVER_NOT_FOUND');
  });

  it('connect: requested once; a pending request is joined until stale; connected is a no-op', () => {
    const pending = given([registered, requested('r1', 0)]);
    expect(pending.state).to.equal('connecting');
    expect(when(pending, { type: 'RequestConnect', requestId: 'r2', reason: 'user', staleBefore: at(-1000), at: at(10) })).to.deep.equal([]);
    expect(when(pending, { type: 'RequestConnect', requestId: 'r2', reason: 'auto', staleBefore: at(1), at: at(10) })).to.have.length(1);
    const up = given([registered, requested('r1'), connected('r1')]);
    expect(when(up, { type: 'RequestConnect', requestId: 'r3', reason: 'user', staleBefore: T0, at: T0 })).to.deep.equal([]);
  });

  it('an outcome for a request that is no longer pending is not recorded (replay, overtaken by a disconnect)', () => {
    const state = given([registered, requested('r1'), { type: 'McpDisconnectRequested', data: { requestId: 'd1', at: T0 } }, { type: 'McpServerDisconnected', data: { requestId: 'd1', at: T0 } }]);
    expect(when(state, { type: 'RecordConnected', requestId: 'r1', serverInfo: { name: 'x', version: '1', protocolVersion: null, instructions: null }, capabilities: '{}', transportUsed: 'stdio', tools: null, at: T0 })).to.deep.equal([]);
    expect(when(state, { type: 'RecordConnectFailed', requestId: 'r1', error: { code: 'X', message: 'x' }, at: T0, policy, random: 0 })).to.deep.equal([]);
  });

  it('loss: only for the current connection; attempts grow, and restart after a stable period', () => {
    const up = given([registered, requested('r1'), connected('r1', 0)]);
    expect(when(up, { type: 'RecordConnectionLost', connectionId: 'old', error: { code: 'L', message: 'x' }, at: at(5), policy, random: 0 })).to.deep.equal([]);
    const [lost] = when(up, { type: 'RecordConnectionLost', connectionId: 'r1', error: { code: 'L', message: 'x' }, at: at(5), policy, random: 0 });
    expect(lost).to.deep.include({ type: 'McpConnectionLost' });
    expect((lost.data as { attempt: number; nextReconnectAt: string }).attempt).to.equal(1);
    expect((lost.data as { nextReconnectAt: string }).nextReconnectAt).to.equal(at(505));
    const down = given([registered, requested('r1'), connected('r1', 0), lost, requested('r2', 600)]);
    const [failed] = when(down, { type: 'RecordConnectFailed', requestId: 'r2', error: { code: 'F', message: 'x' }, at: at(700), policy, random: 0 });
    expect(failed.data).to.include({ attempt: 2, nextReconnectAt: at(1700) });
    // Connected again, stable for longer than stableMs: the next loss starts from attempt 1.
    const stable = given([registered, requested('r1'), connected('r1', 0), lost, requested('r2', 600), failed, requested('r3', 2000), connected('r3', 2000)]);
    const [again] = when(stable, { type: 'RecordConnectionLost', connectionId: 'r3', error: { code: 'L', message: 'x' }, at: at(2000 + 60_000), policy, random: 0 });
    expect(again.data).to.include({ attempt: 1 });
    const [quick] = when(stable, { type: 'RecordConnectionLost', connectionId: 'r3', error: { code: 'L', message: 'x' }, at: at(2100), policy, random: 0 });
    expect(quick.data).to.include({ attempt: 3 });
  });

  it('without the flag no reconnect is scheduled; enabling it while down makes one due at once', () => {
    const plain = given([{ ...registered, data: { ...(registered.data as object), autoReconnect: false } } as McpEvent, requested('r1'), connected('r1')]);
    const [lost] = when(plain, { type: 'RecordConnectionLost', connectionId: 'r1', error: { code: 'L', message: 'x' }, at: at(5), policy, random: 0 });
    expect((lost.data as { nextReconnectAt: string | null }).nextReconnectAt).to.equal(null);
    const enabled = given([{ ...registered, data: { ...(registered.data as object), autoReconnect: false } } as McpEvent, requested('r1'), connected('r1'), lost, { type: 'McpAutoReconnectSet', data: { enabled: true, at: at(10) } }]);
    expect(enabled.nextReconnectAt).to.equal(at(10));
  });
});
