import { expect } from 'chai';
import { mcpServerStreamId } from '../../domain/mcp/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { mcpTestEnv, startEverythingHttp, type HttpMcpServer } from '../support/mcp-servers.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

/**
 * The reconnection test against server-everything over Streamable HTTP: kill the server
 * process while connected; with auto-reconnect on the state goes to error, then back to connected
 * once the server is restarted on the same port, without a user call; with it off it stays down.
 */
for (const mode of availableModes()) {
  describe(`MCP automatic reconnection (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let http: HttpMcpServer | null = null;
    const api = (method: string, path: string, body?: unknown, s: TestService = svc, user = owner) => call(s.baseUrl, method, path, body, user.auth);
    const stateOf = async (id: string, s: TestService = svc, user = owner) => (await api('GET', `/mcp/servers/${id}`, undefined, s, user)).body.server;

    async function registerAndConnect(s: TestService, user: RegisteredUser, url: string, autoReconnect: boolean): Promise<string> {
      const res = await api('POST', '/mcp/servers', { name: `http ${autoReconnect}`, transport: 'http', url, autoReconnect }, s, user);
      expect(res.status, res.text).to.equal(201);
      const connected = await api('POST', `/mcp/servers/${res.body.server.id}/connect`, undefined, s, user);
      expect(connected.status, connected.text).to.equal(200);
      return res.body.server.id;
    }

    before(async () => {
      svc = await startTestService(mode, mcpTestEnv());
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await http?.kill();
    });

    it('kill the HTTP server: flagged server goes error → connected after restart; unflagged stays down', async () => {
      http = await startEverythingHttp();
      const port = http.port;
      const flagged = await registerAndConnect(svc, owner, http.url, true);
      const plain = await registerAndConnect(svc, owner, http.url, false);

      await http.kill();
      const down = await waitUntil('both in state error', async () => {
        const [a, b] = [await stateOf(flagged), await stateOf(plain)];
        return a.state === 'error' && b.state === 'error' ? [a, b] : null;
      }, 20_000);
      expect(down[0].lastError.code).to.be.a('string');
      expect(down[1].reconnect.nextAttemptAt).to.equal(null);

      // While the server is down, attempts fail and back off (attempts grow).
      await waitUntil('a failed reconnect attempt', async () => ((await stateOf(flagged)).reconnect.attempts >= 2 ? true : null), 20_000);

      http = await startEverythingHttp(port);
      const back = await waitUntil('flagged server connected again', async () => {
        const s = await stateOf(flagged);
        return s.state === 'connected' ? s : null;
      }, 20_000);
      expect(back.lastError).to.equal(null);
      const echo = await api('POST', `/mcp/servers/${flagged}/tools/call`, { name: 'echo', arguments: { message: 'back' } });
      expect(echo.body.result.text).to.include('back');

      // No user call was made: the connect requests after the first were the reconnector's.
      const events = await svc.services.eventStore.readStream(mcpServerStreamId(flagged));
      const requests = events.filter((e) => e.type === 'McpConnectRequested').map((e) => (e.data as { reason: string }).reason);
      expect(requests[0]).to.equal('user');
      expect(requests.slice(1).every((r) => r === 'auto')).to.equal(true);
      expect(events.some((e) => e.type === 'McpConnectionLost')).to.equal(true);

      // Negative check, kept as a window: the reconnect scan (MCP_RECONNECT_SCAN_MS=500) reports nothing when it runs; 1.5 s spans three.
      await new Promise((r) => setTimeout(r, 1500));
      const still = await stateOf(plain);
      expect(still.state).to.equal('error');
      const plainEvents = await svc.services.eventStore.readStream(mcpServerStreamId(plain));
      expect(plainEvents.filter((e) => e.type === 'McpConnectRequested')).to.have.length(1);
    });

    it('pending reconnects are derived from state: a lost timer (restart) is replaced by the scan', async () => {
      http ??= await startEverythingHttp();
      const id = await registerAndConnect(svc, owner, http.url, true);
      const port = http.port;
      await http.kill();
      await waitUntil('error', async () => ((await stateOf(id)).state === 'error' ? true : null), 20_000);
      // What a restarted worker has: no timers at all.
      svc.services.mcp.cancel(`reconnect:${id}`);
      http = await startEverythingHttp(port);
      await waitUntil('connected again through the scan', async () => ((await stateOf(id)).state === 'connected' ? true : null), 20_000);
    });

    it('POST /mcp/servers/auto-reconnect/run reconnects every flagged server that is down and says what it did', async () => {
      // Backoff so long that only the run can bring the server back within the test.
      const slow = await startTestService(mode, mcpTestEnv({ MCP_RECONNECT_BASE_MS: '600000', MCP_RECONNECT_MAX_MS: '600000', MCP_RECONNECT_SCAN_MS: '600000' }));
      try {
        const user = await registerUser(slow.baseUrl);
        http ??= await startEverythingHttp();
        const port = http.port;
        const flagged = await registerAndConnect(slow, user, http.url, true);
        const plain = await registerAndConnect(slow, user, http.url, false);
        const idle = await api('POST', '/mcp/servers', { name: 'never connected', transport: 'http', url: http.url, autoReconnect: true }, slow, user);
        await http.kill();
        await waitUntil('down', async () => ((await stateOf(flagged, slow, user)).state === 'error' ? true : null), 20_000);

        // Still down: the run tries and reports the failure.
        const failing = await api('POST', '/mcp/servers/auto-reconnect/run', undefined, slow, user);
        expect(failing.status, failing.text).to.equal(200);
        const failed = failing.body.results.find((r: { serverId: string }) => r.serverId === flagged);
        expect(failed).to.include({ attempted: true, result: 'failed', state: 'error' });
        expect(failed.error.code).to.be.a('string');

        http = await startEverythingHttp(port);
        const run = await api('POST', '/mcp/servers/auto-reconnect/run', undefined, slow, user);
        expect(run.status, run.text).to.equal(200);
        const byId = Object.fromEntries(run.body.results.map((r: { serverId: string }) => [r.serverId, r]));
        expect(byId[flagged]).to.include({ attempted: true, result: 'connected', state: 'connected', stateBefore: 'error' });
        expect(byId[idle.body.server.id]).to.include({ attempted: false, result: 'skipped', state: 'disconnected' });
        expect(byId[plain], 'unflagged servers are not touched').to.equal(undefined);
        expect(run.body).to.include({ attempted: 1, connected: 1, failed: 0 });
        expect((await stateOf(plain, slow, user)).state).to.equal('error');
        // Another user's run sees none of these.
        const stranger = await registerUser(slow.baseUrl);
        const theirs = await api('POST', '/mcp/servers/auto-reconnect/run', undefined, slow, stranger);
        expect(theirs.body.results).to.deep.equal([]);
      } finally {
        await slow.stop();
      }
    });
  });
}
