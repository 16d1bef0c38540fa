import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { everythingStdio, mcpTestEnv } from '../support/mcp-servers.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

for (const mode of availableModes()) {
  describe(`mcp_tool node in a flow run (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    let serverId: string;
    const client = flowClient(() => svc);
    const as = (u: RegisteredUser, method: string, path: string, body?: unknown) => client.as(u, method, path, body);

    before(async () => {
      svc = await startTestService(mode, mcpTestEnv());
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
      const res = await as(owner, 'POST', '/mcp/servers', everythingStdio());
      serverId = res.body.server.id;
      const connected = await as(owner, 'POST', `/mcp/servers/${serverId}/connect`);
      expect(connected.status, connected.text).to.equal(200);
    });
    after(async () => svc?.stop());

    async function flowWith(user: RegisteredUser, data: Record<string, unknown>) {
      const flowId = await client.newFlow(user);
      const tool = await client.addNode(user, flowId, node({ nodeType: 'mcp_tool', ...data }));
      const after = await client.addNode(user, flowId, node({ nodeType: 'transform', template: 'tool said: {{previous}}' }, 200));
      const c = await as(user, 'POST', `/flows/${flowId}/connections`, { source: tool.id, target: after.id });
      expect(c.status, c.text).to.equal(201);
      return { flowId, tool, after };
    }

    it('runs get-sum with templated arguments end to end; output is the text, metadata the rest', async () => {
      const { flowId, tool, after } = await flowWith(owner, { mcpServerId: serverId, toolName: 'get-sum', arguments: { a: '{{inputs.a}}', b: '{{inputs.b}}' } });
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { a: 19, b: 23 } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('completed');
      const byId = Object.fromEntries(res.body.nodes.map((x: { nodeId: string }) => [x.nodeId, x]));
      expect(byId[tool.id].status).to.equal('completed');
      expect(byId[tool.id].output).to.include('42');
      expect(byId[after.id].output).to.include('tool said:').and.include('42');
      const proc = await as(owner, 'GET', `/processes/${res.body.processId}`);
      const toolNode = proc.body.process.nodes.find((n: { nodeId: string }) => n.nodeId === tool.id);
      expect(toolNode.metadata, JSON.stringify(toolNode)).to.include({ serverId, toolName: 'get-sum', isError: false, truncated: false });
      expect(toolNode.metadata.durationMs).to.be.a('number');
      // The call is in the server's history (a read model the run does not wait for), attributed to the run.
      const entry = await waitUntil('the call in the server history', async () => {
        const history = await as(owner, 'GET', `/mcp/servers/${serverId}/history?limit=5`);
        const found = history.body.items?.find((h: { processId: string | null }) => h.processId === res.body.processId);
        return found?.status === 'completed' ? found : null;
      });
      expect(entry).to.include({ source: 'flow', toolName: 'get-sum', nodeId: tool.id, status: 'completed' });
      expect(entry.arguments).to.deep.equal({ a: 19, b: 23 });
    });

    it('structured content goes to the metadata; an async run goes through the worker', async () => {
      const { flowId, tool } = await flowWith(owner, { mcpServerId: serverId, toolName: 'get-structured-content', arguments: { location: '{{inputs.city}}' } });
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { city: 'New York' }, async: true });
      expect(res.status, res.text).to.equal(202);
      const done = await waitUntil('run completed', async () => {
        const p = await as(owner, 'GET', `/processes/${res.body.processId}`);
        return ['completed', 'failed'].includes(p.body.process?.status) ? p.body.process : null;
      });
      expect(done.status).to.equal('completed');
      const toolNode = done.nodes.find((n: { nodeId: string }) => n.nodeId === tool.id);
      expect(toolNode.metadata.structuredContent, JSON.stringify(toolNode)).to.deep.equal({ temperature: 33, conditions: 'Cloudy', humidity: 82 });
    });

    it('a tool error fails the node with MCP_TOOL_ERROR; another owner\'s server is not found; disconnected → MCP_NOT_CONNECTED', async () => {
      const failing = await flowWith(owner, { mcpServerId: serverId, toolName: 'get-sum', arguments: { a: 'not a number', b: 1 } });
      const res = await as(owner, 'POST', `/flows/${failing.flowId}/run`, { inputs: {} });
      expect(res.body.status, res.text).to.equal('failed');
      const failedNode = res.body.nodes.find((n: { nodeId: string }) => n.nodeId === failing.tool.id);
      expect(JSON.stringify(failedNode)).to.match(/MCP_TOOL_ERROR|MCP_PROTOCOL_ERROR/);

      const stranger = await flowWith(other, { mcpServerId: serverId, toolName: 'echo', arguments: { message: 'x' } });
      const theirs = await as(other, 'POST', `/flows/${stranger.flowId}/run`, { inputs: {} });
      expect(theirs.body.status, theirs.text).to.equal('failed');
      expect(JSON.stringify(theirs.body.nodes)).to.include('MCP_SERVER_NOT_FOUND');

      const second = await as(owner, 'POST', '/mcp/servers', everythingStdio({ name: 'never connected' }));
      const idle = await flowWith(owner, { mcpServerId: second.body.server.id, toolName: 'echo', arguments: { message: 'x' } });
      const notConnected = await as(owner, 'POST', `/flows/${idle.flowId}/run`, { inputs: {} });
      expect(JSON.stringify(notConnected.body.nodes)).to.include('MCP_NOT_CONNECTED');
    });

    it('stopping the run while the node waits: the node stops waiting and the remote call is cancelled', async () => {
      const { flowId } = await flowWith(owner, { mcpServerId: serverId, toolName: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } });
      const started = Date.now();
      const res = await as(owner, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
      expect(res.status, res.text).to.equal(202);
      const processId = res.body.processId;
      const historyEntry = async () => {
        const h = await as(owner, 'GET', `/mcp/servers/${serverId}/history?limit=20`);
        return h.body.items.find((x: { processId: string | null }) => x.processId === processId) ?? null;
      };
      // The call has reached the server (it reports progress) before the stop.
      await waitUntil('the call reports progress', async () => ((await historyEntry())?.progressCount >= 1 ? true : null), 15_000);
      const stop = await as(owner, 'POST', `/flows/${flowId}/stop`);
      expect(stop.status, stop.text).to.equal(200);
      const proc = await waitUntil('run stopped', async () => {
        const p = await as(owner, 'GET', `/processes/${processId}`);
        return ['stopped', 'completed', 'failed'].includes(p.body.process?.status) ? p.body.process : null;
      }, 8_000);
      expect(proc.status).to.equal('stopped');
      // The worker aborted the call (MCP notifications/cancelled) instead of letting it run its 10 s.
      const entry = await waitUntil('the call recorded as aborted', async () => {
        const e = await historyEntry();
        return e?.status === 'failed' ? e : null;
      }, 8_000);
      expect(entry.error.code).to.equal('MCP_ABORTED');
      expect(Date.now() - started).to.be.below(9_000);
      // The connection is still usable.
      const echo = await as(owner, 'POST', `/mcp/servers/${serverId}/tools/call`, { name: 'echo', arguments: { message: 'after stop' } });
      expect(echo.body.result?.text, echo.text).to.include('after stop');
    });
  });
}
