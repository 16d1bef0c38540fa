import { expect } from 'chai';
import { mcpServerStreamId } from '../../domain/mcp/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { everythingStdio, mcpTestEnv } from '../support/mcp-servers.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const SECRET = 'sk-live-very-secret-value-123456';

for (const mode of availableModes()) {
  describe(`MCP registry (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let strict: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    const api = (method: string, path: string, body?: unknown, user: RegisteredUser = owner) => call(svc.baseUrl, method, path, body, user.auth);

    before(async () => {
      svc = await startTestService(mode, mcpTestEnv());
      // The production defaults: no stdio command allowed, no private network.
      strict = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', MCP_STDIO_ALLOWLIST: 'npx' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await strict?.stop();
    });

    it('register, get, list, update, delete; secrets encrypted in the log and masked in answers', async () => {
      const created = await api('POST', '/mcp/servers', everythingStdio({ env: { API_TOKEN: SECRET, MODE: 'test' }, autoReconnect: true }));
      expect(created.status, created.text).to.equal(201);
      const server = created.body.server;
      expect(server).to.include({ name: 'everything', transport: 'stdio', command: 'node', state: 'disconnected', autoReconnect: true, url: null, lastError: null, serverInfo: null });
      expect(server.env).to.deep.equal({ API_TOKEN: '••••', MODE: '••••' });
      expect(created.text).not.to.include(SECRET);

      const raw = await svc.services.eventStore.readStream(mcpServerStreamId(server.id));
      expect(raw[0].type).to.equal('McpServerRegistered');
      expect(JSON.stringify(raw)).not.to.include(SECRET);
      const sealed = (raw[0].data as { env: Record<string, string> }).env.API_TOKEN;
      expect(svc.services.sealedBox.open(sealed)).to.equal(SECRET);

      const got = await api('GET', `/mcp/servers/${server.id}`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body.server).to.deep.equal(server);

      const list = await api('GET', '/mcp/servers?limit=10');
      expect(list.status, list.text).to.equal(200);
      expect(list.body.items.map((s: { id: string }) => s.id)).to.include(server.id);
      expect(list.text).not.to.include(SECRET);
      const otherList = await api('GET', '/mcp/servers', undefined, other);
      expect(otherList.body.items.map((s: { id: string }) => s.id)).not.to.include(server.id);

      // A masked value sent back keeps the stored secret; a new value replaces it.
      const updated = await api('PUT', `/mcp/servers/${server.id}`, { name: 'renamed', env: { API_TOKEN: '••••', EXTRA: 'plain-2' } });
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.server).to.include({ name: 'renamed' });
      expect(updated.body.server.env).to.deep.equal({ API_TOKEN: '••••', EXTRA: '••••' });
      const afterUpdate = await svc.services.eventStore.readStream(mcpServerStreamId(server.id));
      const env = (afterUpdate.at(-1)!.data as { env: Record<string, string> }).env;
      expect(svc.services.sealedBox.open(env.API_TOKEN)).to.equal(SECRET);
      expect(svc.services.sealedBox.open(env.EXTRA)).to.equal('plain-2');
      expect(JSON.stringify(afterUpdate)).not.to.include('plain-2');

      const off = await api('POST', `/mcp/servers/${server.id}/auto-reconnect/disable`);
      expect(off.status, off.text).to.equal(200);
      expect(off.body.server.autoReconnect).to.equal(false);
      const on = await api('POST', `/mcp/servers/${server.id}/auto-reconnect/enable`);
      expect(on.body.server.autoReconnect).to.equal(true);

      const deleted = await api('DELETE', `/mcp/servers/${server.id}`);
      expect(deleted.status, deleted.text).to.equal(200);
      expect((await api('GET', `/mcp/servers/${server.id}`)).status).to.equal(404);
    });

    it("another user's server answers 404 on every operation", async () => {
      const created = await api('POST', '/mcp/servers', everythingStdio());
      const id = created.body.server.id;
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/mcp/servers/${id}`],
        ['PUT', `/mcp/servers/${id}`, { name: 'x' }],
        ['DELETE', `/mcp/servers/${id}`],
        ['POST', `/mcp/servers/${id}/connect`],
        ['POST', `/mcp/servers/${id}/disconnect`],
        ['GET', `/mcp/servers/${id}/tools`],
        ['POST', `/mcp/servers/${id}/tools/call`, { name: 'echo', arguments: { message: 'x' } }],
        ['GET', `/mcp/servers/${id}/resources`],
        ['POST', `/mcp/servers/${id}/resources/read`, { uri: 'demo://x' }],
        ['POST', `/mcp/servers/${id}/auto-reconnect/enable`],
        ['POST', `/mcp/servers/${id}/auto-reconnect/disable`],
        ['GET', `/mcp/servers/${id}/history`],
      ];
      for (const [method, path, body] of calls) {
        const res = await api(method, path, body, other);
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
        expect(res.body.error.code).to.equal('MCP_SERVER_NOT_FOUND');
      }
      expect((await api('GET', `/mcp/servers/${id}`)).status).to.equal(200);
    });

    it('permissions: a view_resources key may read but not register, connect or call', async () => {
      const created = await api('POST', '/mcp/servers', everythingStdio());
      const key = await api('POST', '/api-keys', { name: 'read only', scopes: ['view_resources'] });
      expect(key.status, key.text).to.equal(201);
      const viewOnly = { Authorization: `Bearer ${key.body.key}` };
      expect((await call(svc.baseUrl, 'GET', `/mcp/servers/${created.body.server.id}`, undefined, viewOnly)).status).to.equal(200);
      for (const [method, path, body] of [
        ['POST', '/mcp/servers', everythingStdio()],
        ['POST', `/mcp/servers/${created.body.server.id}/connect`],
        ['POST', `/mcp/servers/${created.body.server.id}/tools/call`, { name: 'echo', arguments: {} }],
        ['POST', '/mcp/servers/auto-reconnect/run'],
      ] as Array<[string, string, unknown?]>) {
        const res = await call(svc.baseUrl, method, path, body, viewOnly);
        expect(res.status, `${path}: ${res.text}`).to.equal(403);
      }
      expect((await call(svc.baseUrl, 'GET', '/mcp/servers')).status).to.equal(401);
    });

    it('bad input: 400 naming the field', async () => {
      const noCommand = await api('POST', '/mcp/servers', { name: 'x', transport: 'stdio' });
      expect(noCommand.status).to.equal(400);
      expect(noCommand.body.error).to.deep.include({ code: 'MCP_INVALID_CONFIG' });
      expect(noCommand.body.error.details.field).to.equal('body.command');
      const noUrl = await api('POST', '/mcp/servers', { name: 'x', transport: 'http' });
      expect(noUrl.body.error.details.field).to.equal('body.url');
      const unknown = await api('POST', '/mcp/servers', { ...everythingStdio(), bogus: 1 });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.code).to.equal('VALIDATION_FAILED');
      const badTransport = await api('POST', '/mcp/servers', { name: 'x', transport: 'ftp', url: 'http://example.com' });
      expect(badTransport.body.error.details.fields[0].field).to.equal('body.transport');
      const badEnv = await api('POST', '/mcp/servers', everythingStdio({ env: { 'BAD-NAME': 'x' } }));
      expect(badEnv.status).to.equal(400);
      const badUrl = await api('POST', '/mcp/servers', { name: 'x', transport: 'http', url: 'ftp://example.com' });
      expect(badUrl.status).to.equal(400);
    });

    it('a stdio command off the allowlist: 403 MCP_STDIO_NOT_ALLOWED, nothing appended', async () => {
      const user = await registerUser(strict.baseUrl);
      const head = await strict.services.eventStore.headPosition();
      const res = await call(strict.baseUrl, 'POST', '/mcp/servers', everythingStdio(), user.auth);
      expect(res.status, res.text).to.equal(403);
      expect(res.body.error.code).to.equal('MCP_STDIO_NOT_ALLOWED');
      expect(await strict.services.eventStore.headPosition()).to.equal(head);
      const bash = await call(svc.baseUrl, 'POST', '/mcp/servers', { name: 'x', transport: 'stdio', command: '/bin/sh', args: ['-c', 'id'] }, owner.auth);
      expect(bash.status).to.equal(403);
      expect(bash.body.error.code).to.equal('MCP_STDIO_NOT_ALLOWED');
      // Updating a server to a command off the list is refused the same way.
      const ok = await api('POST', '/mcp/servers', everythingStdio());
      const update = await api('PUT', `/mcp/servers/${ok.body.server.id}`, { command: 'bash' });
      expect(update.status).to.equal(403);
      expect(update.body.error.code).to.equal('MCP_STDIO_NOT_ALLOWED');
    });

    it('a private or loopback URL is refused without ALLOW_PRIVATE_NETWORK', async () => {
      const user = await registerUser(strict.baseUrl);
      for (const url of ['http://127.0.0.1:3001/mcp', 'http://localhost:3001/mcp', 'http://10.1.2.3/mcp', 'http://169.254.169.254/latest', 'http://[::1]:80/mcp']) {
        const res = await call(strict.baseUrl, 'POST', '/mcp/servers', { name: 'x', transport: 'http', url }, user.auth);
        expect(res.status, `${url}: ${res.text}`).to.equal(403);
        expect(res.body.error.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      }
      const sse = await call(strict.baseUrl, 'POST', '/mcp/servers', { name: 'x', transport: 'sse', url: 'http://192.168.1.1/sse' }, user.auth);
      expect(sse.body.error.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      // Allowed where the operator allows private networks.
      const allowed = await api('POST', '/mcp/servers', { name: 'x', transport: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: `Bearer ${SECRET}` } });
      expect(allowed.status, allowed.text).to.equal(201);
      expect(allowed.body.server.headers).to.deep.equal({ Authorization: '••••' });
      expect(JSON.stringify(await svc.services.eventStore.readStream(mcpServerStreamId(allowed.body.server.id)))).not.to.include(SECRET);
    });
  });
}
