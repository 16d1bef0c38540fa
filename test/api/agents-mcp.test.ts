import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { everythingStdio, mcpTestEnv } from '../support/mcp-servers.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

/** An agent's `mcp_tool`: the tool reaches the model with the input schema the server published, and runs on the connected server. */
for (const mode of availableModes()) {
  describe(`agents with MCP tools (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    const api = (method: string, path: string, body?: unknown, user: RegisteredUser = owner) => call(svc.baseUrl, method, path, body, user.auth);

    before(async () => {
      svc = await startTestService(mode, mcpTestEnv({ LOG_LEVEL: 'silent' }));
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('calls the MCP tool with the model\'s arguments; its published schema is checked first; another tenant\'s server gives no tool', async () => {
      const registered = await api('POST', '/mcp/servers', everythingStdio());
      expect(registered.status, registered.text).to.equal(201);
      const serverId = registered.body.server.id;
      expect((await api('POST', `/mcp/servers/${serverId}/connect`)).status).to.equal(200);
      const agent = (await api('POST', '/agents', { name: 'mcp', provider: 'offline', model: 'offline', tools: [{ kind: 'mcp_tool', serverId, tool: 'echo' }] })).body.agent;
      const session = (await api('POST', `/agents/${agent.id}/sessions`, {})).body.session;
      const sent = await api('POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'call echo {"message":"hello from the agent"}' });
      expect(sent.status, sent.text).to.equal(200);
      const m = sent.body.message;
      expect(m.toolCalls[0].result.isError, m.toolCalls[0].result.content).to.equal(false);
      expect(m.answer.text).to.include('hello from the agent');
      // `message` is required by echo's published schema.
      const bad = (await api('POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'call echo {}' })).body.message;
      expect(bad.toolCalls[0].result).to.include({ isError: true, skipped: 'invalid_arguments' });
      expect(bad.toolCalls[0].result.content).to.include('message');

      const theirs = (await api('POST', '/agents', { name: 'x', provider: 'offline', model: 'offline', tools: [{ kind: 'mcp_tool', serverId, tool: 'echo' }] }, other)).body.agent;
      const theirSession = (await api('POST', `/agents/${theirs.id}/sessions`, {}, other)).body.session;
      const refused = (await api('POST', `/agents/${theirs.id}/sessions/${theirSession.id}/messages`, { content: 'call echo {"message":"x"}' }, other)).body.message;
      expect(refused.toolCalls).to.deep.equal([]);
    });
  });
}
