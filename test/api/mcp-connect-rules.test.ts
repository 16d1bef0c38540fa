import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { dynamicToolsStdio, everythingStdio, mcpTestEnv, startEverythingHttp, type HttpMcpServer } from '../support/mcp-servers.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

/**
 * What happens after registration: the operator's rules are checked again at every connect (the
 * operator may tighten them after a server was registered), an update of a connected server
 * applies at the next connect, and a server's `notifications/tools/list_changed` refreshes the
 * cached tool list without a user call.
 */
for (const mode of availableModes()) {
  describe(`MCP rules at connect, updates, tool list changes (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let http: HttpMcpServer;
    const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, owner.auth);
    const config = () => svc.services.config as { ALLOW_PRIVATE_NETWORK: boolean; MCP_STDIO_ALLOWLIST: string[] };

    async function register(body: unknown): Promise<string> {
      const res = await api('POST', '/mcp/servers', body);
      expect(res.status, res.text).to.equal(201);
      return res.body.server.id;
    }
    const toolNames = async (id: string) => ((await api('GET', `/mcp/servers/${id}/tools`)).body.tools ?? []).map((t: { name: string }) => t.name);

    before(async () => {
      svc = await startTestService(mode, mcpTestEnv({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' }));
      owner = await registerUser(svc.baseUrl);
      http = await startEverythingHttp();
    });
    after(async () => {
      await svc?.stop();
      await http?.kill();
    });

    it('a loopback URL registered while private networks were allowed is refused at connect once they are not', async () => {
      const id = await register({ name: 'loopback', transport: 'http', url: http.url });
      // The operator turns ALLOW_PRIVATE_NETWORK off (the config of the process holding connections;
      // the worker reads it at every connect, this test service runs API and worker in one process).
      const saved = config().ALLOW_PRIVATE_NETWORK;
      config().ALLOW_PRIVATE_NETWORK = false;
      try {
        const refused = await api('POST', `/mcp/servers/${id}/connect`);
        expect(refused.status, refused.text).to.equal(403);
        expect(refused.body.error.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
        const server = (await api('GET', `/mcp/servers/${id}`)).body.server;
        expect(server.state).to.equal('error');
        expect(server.lastError.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      } finally {
        config().ALLOW_PRIVATE_NETWORK = saved;
      }
      const ok = await api('POST', `/mcp/servers/${id}/connect`);
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.server.state).to.equal('connected');
      await api('POST', `/mcp/servers/${id}/disconnect`);
    });

    it('a stdio command taken off the allowlist after registration is refused at connect, nothing spawned', async () => {
      const id = await register(everythingStdio({ name: 'was allowed' }));
      const saved = config().MCP_STDIO_ALLOWLIST;
      config().MCP_STDIO_ALLOWLIST = [];
      try {
        const refused = await api('POST', `/mcp/servers/${id}/connect`);
        expect(refused.status, refused.text).to.equal(403);
        expect(refused.body.error.code).to.equal('MCP_STDIO_NOT_ALLOWED');
        expect((await api('GET', `/mcp/servers/${id}`)).body.server.lastError.code).to.equal('MCP_STDIO_NOT_ALLOWED');
      } finally {
        config().MCP_STDIO_ALLOWLIST = saved;
      }
    });

    it('an update of a connected server applies at the next connect; the open connection keeps running', async () => {
      const id = await register(everythingStdio({ name: 'switch me' }));
      const first = await api('POST', `/mcp/servers/${id}/connect`);
      expect(first.body.server.serverInfo.name).to.include('everything');
      const updated = await api('PUT', `/mcp/servers/${id}`, { args: dynamicToolsStdio().args });
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.server.state).to.equal('connected');
      // Still the old process answering.
      const echo = await api('POST', `/mcp/servers/${id}/tools/call`, { name: 'echo', arguments: { message: 'old endpoint' } });
      expect(echo.body.result?.text, echo.text).to.include('old endpoint');
      expect((await api('POST', `/mcp/servers/${id}/disconnect`)).status).to.equal(200);
      const again = await api('POST', `/mcp/servers/${id}/connect`);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.server.serverInfo.name).to.equal('dynamic-tools');
      await api('POST', `/mcp/servers/${id}/disconnect`);
    });

    it('lists every page of a server that pages its tool list (connect and refresh)', async () => {
      const id = await register(dynamicToolsStdio({ name: 'paged', env: { EXTRA_TOOLS: '6', TOOLS_PAGE_SIZE: '2' } }));
      const connected = await api('POST', `/mcp/servers/${id}/connect`);
      expect(connected.status, connected.text).to.equal(200);
      expect(connected.body.server.toolCount).to.equal(7);
      const refreshed = await api('GET', `/mcp/servers/${id}/tools?refresh=true`);
      expect(refreshed.body.tools.map((t: { name: string }) => t.name)).to.have.members(['add-tool', 'tool-1', 'tool-2', 'tool-3', 'tool-4', 'tool-5', 'tool-6']);
      await api('POST', `/mcp/servers/${id}/disconnect`);
    });

    it('notifications/tools/list_changed refreshes the cached tool list without a user refresh', async () => {
      const id = await register(dynamicToolsStdio());
      expect((await api('POST', `/mcp/servers/${id}/connect`)).status).to.equal(200);
      expect(await toolNames(id)).to.deep.equal(['add-tool']);
      const added = await api('POST', `/mcp/servers/${id}/tools/call`, { name: 'add-tool', arguments: { name: 'zap' } });
      expect(added.body.result?.text, added.text).to.equal('added zap');
      const names = await waitUntil('the cached list has the new tool', async () => {
        const n = await toolNames(id);
        return n.includes('zap') ? n : null;
      }, 10_000);
      expect(names).to.have.members(['add-tool', 'zap']);
      const zap = await api('POST', `/mcp/servers/${id}/tools/call`, { name: 'zap', arguments: {} });
      expect(zap.body.result?.text, zap.text).to.equal('zap ran');
      expect((await api('GET', `/mcp/servers/${id}`)).body.server.toolCount).to.equal(2);
      await api('POST', `/mcp/servers/${id}/disconnect`);
    });
  });
}
