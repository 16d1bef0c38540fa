import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { call } from '../support/http.js';
import { registerUser, viewOnlyKey, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

/**
 * The key-value store group over real HTTP against the real Redis of .ci/servers.sh (REDIS_URL):
 * validate, presets, and configure-mcp through to server-redis tools called via the MCP API.
 */
const redisUrl = process.env.REDIS_URL;

/** A port where nothing listens: bind one, close it. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const mode of availableModes()) {
  describe(`Key-value store (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let viewOnly: Record<string, string>;
    before(async function () {
      if (!redisUrl) {
        if (process.env.REQUIRE_SERVERS === 'true') throw new Error('REDIS_URL is required when REQUIRE_SERVERS=true');
        console.log('SKIP key-value store API tests: REDIS_URL is not set');
        this.skip();
      }
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true', MCP_STDIO_ALLOWLIST: process.execPath, KV_VALIDATE_TIMEOUT_MS: '3000' });
      owner = await registerUser(svc.baseUrl);
      viewOnly = await viewOnlyKey(svc.baseUrl, owner);
    });
    after(async () => svc?.stop());

    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = owner.auth) => call(svc.baseUrl, method, path, body, headers);

    describe('POST /kv/validate', () => {
      it('validates the real Redis with its version and latency', async () => {
        const res = await api('POST', '/kv/validate', { url: redisUrl });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ success: true, valid: true, tls: false, db: 0 });
        expect(res.body.serverVersion).to.match(/^\d+\.\d+\.\d+/);
        expect(res.body.latencyMs).to.be.a('number').and.to.be.at.least(0).and.below(3000);
        expect(res.body.connectMs).to.be.a('number');
        expect(res.body.mode).to.equal('standalone');
      });

      it('masks the password in the answer', async () => {
        const url = new URL(redisUrl!);
        url.password = 'sup3r-s3cret';
        const res = await api('POST', '/kv/validate', { url: url.href });
        // The test server has no password: Redis accepts AUTH for the default "nopass" user.
        expect(res.status, res.text).to.equal(200);
        expect(res.text).not.to.include('sup3r-s3cret');
        expect(res.body.url).to.include(':****@');
      });

      it('answers 400 KV_CONNECTION_REFUSED for a port where nothing listens', async () => {
        const res = await api('POST', '/kv/validate', { url: `redis://127.0.0.1:${await closedPort()}` });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.success).to.equal(false);
        expect(res.body.error.code).to.equal('KV_CONNECTION_REFUSED');
        expect(res.body.error.details.field).to.equal('body.url');
      });

      it('answers 400 KV_AUTH_FAILED for a wrong user and password, without echoing the password', async () => {
        const url = new URL(redisUrl!);
        url.username = `nobody${randomBytes(3).toString('hex')}`;
        url.password = 'wrong-pass-123';
        const res = await api('POST', '/kv/validate', { url: url.href });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error.code).to.equal('KV_AUTH_FAILED');
        expect(res.text).not.to.include('wrong-pass-123');
      });

      it('answers 400 KV_TIMEOUT when the peer accepts the connection but never answers', async () => {
        const silent = createServer(() => {});
        await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
        try {
          const res = await api('POST', '/kv/validate', { url: `redis://127.0.0.1:${(silent.address() as { port: number }).port}` });
          expect(res.status, res.text).to.equal(400);
          expect(res.body.error.code).to.equal('KV_TIMEOUT');
        } finally {
          silent.close();
        }
      });

      it('answers 400 naming the field for malformed URLs', async () => {
        for (const url of ['not a url', 'http://127.0.0.1:6379', 'redis://127.0.0.1:99999', 'redis://127.0.0.1:6379/abc', 'redis://']) {
          const res = await api('POST', '/kv/validate', { url });
          expect(res.status, `${url}: ${res.text}`).to.equal(400);
          expect(res.body.error.code, url).to.be.oneOf(['KV_INVALID_URL', 'VALIDATION_FAILED']);
          expect(JSON.stringify(res.body.error.details ?? {}), url).to.include('body.url');
        }
        const missing = await api('POST', '/kv/validate', {});
        expect(missing.status).to.equal(400);
        expect(missing.text).to.include('url');
        const extra = await api('POST', '/kv/validate', { url: redisUrl, other: 1 });
        expect(extra.status).to.equal(400);
      });

      it('needs a bearer token and the edit_resources permission', async () => {
        expect((await call(svc.baseUrl, 'POST', '/kv/validate', { url: redisUrl })).status).to.equal(401);
        expect((await api('POST', '/kv/validate', { url: redisUrl }, viewOnly)).status).to.equal(403);
      });
    });

    describe('GET /kv/presets', () => {
      it('lists the local, TLS and password presets', async () => {
        const res = await api('GET', '/kv/presets', undefined, viewOnly);
        expect(res.status, res.text).to.equal(200);
        const ids = res.body.presets.map((p: { id: string }) => p.id);
        expect(ids).to.include.members(['local', 'tls', 'password']);
        const byId = Object.fromEntries(res.body.presets.map((p: { id: string }) => [p.id, p]));
        expect(byId.local.urlTemplate).to.equal('redis://127.0.0.1:6379');
        expect(byId.tls.urlTemplate).to.match(/^rediss:\/\/.*:6380$/);
        expect(byId.password.urlTemplate).to.match(/^redis:\/\/:<password>@/);
        for (const preset of res.body.presets) expect(preset).to.include.keys('name', 'description', 'tls', 'requiresPassword', 'placeholders');
        expect((await call(svc.baseUrl, 'GET', '/kv/presets')).status).to.equal(401);
      });
    });

    describe('POST /kv/configure-mcp', () => {
      it('registers server-redis as a stdio MCP server whose tools work through the MCP API', async () => {
        const res = await api('POST', '/kv/configure-mcp', { url: redisUrl, name: 'Cache' });
        expect(res.status, res.text).to.equal(201);
        const server = res.body.server;
        expect(server).to.include({ name: 'Cache', transport: 'stdio', command: process.execPath, state: 'disconnected', autoReconnect: false });
        // The URL travels in the encrypted env, never in the clear args.
        expect(server.env).to.have.key('REDIS_URL');
        expect(server.env.REDIS_URL).not.to.include('redis://');
        expect(server.args.join(' ')).not.to.include(redisUrl!);

        const got = await api('GET', `/mcp/servers/${server.id}`, undefined, viewOnly);
        expect(got.status, got.text).to.equal(200);

        const connected = await api('POST', `/mcp/servers/${server.id}/connect`);
        expect(connected.status, connected.text).to.equal(200);
        expect(connected.body.server.state).to.equal('connected');
        expect(connected.body.server.serverInfo.name).to.equal('redis');

        const key = `kv-api-test:${randomBytes(4).toString('hex')}`;
        const set = await api('POST', `/mcp/servers/${server.id}/tools/call`, { name: 'set', arguments: { key, value: 'hello-kv' } });
        expect(set.status, set.text).to.equal(200);
        expect(set.body.result.isError).to.equal(false);
        const get = await api('POST', `/mcp/servers/${server.id}/tools/call`, { name: 'get', arguments: { key } });
        expect(get.status, get.text).to.equal(200);
        expect(get.body.result.text).to.equal('hello-kv');
        await api('POST', `/mcp/servers/${server.id}/tools/call`, { name: 'delete', arguments: { key } });
        const disconnected = await api('POST', `/mcp/servers/${server.id}/disconnect`);
        expect(disconnected.status, disconnected.text).to.equal(200);
      });

      it('names the server after the host by default and keeps autoReconnect', async () => {
        const res = await api('POST', '/kv/configure-mcp', { url: redisUrl, autoReconnect: true });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.server.name).to.match(/^Redis 127\.0\.0\.1:\d+$/);
        expect(res.body.server.autoReconnect).to.equal(true);
      });

      it('refuses an unreachable store with 400 and registers nothing', async () => {
        const before = await api('GET', '/mcp/servers');
        const res = await api('POST', '/kv/configure-mcp', { url: `redis://127.0.0.1:${await closedPort()}` });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error.code).to.equal('KV_CONNECTION_REFUSED');
        const after = await api('GET', '/mcp/servers');
        expect(after.body.items.length).to.equal(before.body.items.length);
      });

      it('needs edit_resources', async () => {
        expect((await api('POST', '/kv/configure-mcp', { url: redisUrl }, viewOnly)).status).to.equal(403);
      });
    });
  });

  describe(`Key-value store rules (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      // Operator defaults: no private network, no stdio command allowed.
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('refuses loopback and private hosts unless ALLOW_PRIVATE_NETWORK=true', async () => {
      for (const url of ['redis://127.0.0.1:6379', 'redis://10.0.0.5:6379', 'rediss://[::1]:6380']) {
        const res = await call(svc.baseUrl, 'POST', '/kv/validate', { url }, owner.auth);
        expect(res.status, `${url}: ${res.text}`).to.equal(403);
        expect(res.body.error.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      }
    });

    it('refuses configure-mcp with 403 when node is not on the stdio allowlist', async () => {
      const res = await call(svc.baseUrl, 'POST', '/kv/configure-mcp', { url: 'redis://127.0.0.1:6379' }, owner.auth);
      expect(res.status, res.text).to.equal(403);
      expect(res.body.error.code).to.equal('MCP_STDIO_NOT_ALLOWED');
    });
  });
}
