import { expect } from 'chai';
import { mcpServerStreamId } from '../../domain/mcp/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { everythingStdio, mcpTestEnv, MEMORY_JS, startEverythingHttp, startEverythingSse, type HttpMcpServer } from '../support/mcp-servers.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

for (const mode of availableModes()) {
  describe(`MCP connections, tools and resources (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let http: HttpMcpServer;
    let stdioId: string;
    const api = (method: string, path: string, body?: unknown, user: RegisteredUser = owner) => call(svc.baseUrl, method, path, body, user.auth);

    async function register(body: unknown): Promise<string> {
      const res = await api('POST', '/mcp/servers', body);
      expect(res.status, res.text).to.equal(201);
      return res.body.server.id;
    }
    async function connect(id: string) {
      const res = await api('POST', `/mcp/servers/${id}/connect`);
      expect(res.status, res.text).to.equal(200);
      return res.body.server;
    }
    const callTool = (id: string, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
      api('POST', `/mcp/servers/${id}/tools/call`, { name, arguments: args, ...extra });

    before(async () => {
      // Small result cap so truncation is easy to provoke.
      svc = await startTestService(mode, mcpTestEnv({ MCP_MAX_RESULT_BYTES: '4096', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' }));
      owner = await registerUser(svc.baseUrl);
      http = await startEverythingHttp();
      stdioId = await register(everythingStdio());
    });
    after(async () => {
      await svc?.stop();
      await http?.kill();
    });

    it('409 MCP_NOT_CONNECTED before connecting; connect records server info and capabilities', async () => {
      for (const [method, path, body] of [
        ['POST', `/mcp/servers/${stdioId}/tools/call`, { name: 'echo', arguments: { message: 'x' } }],
        ['GET', `/mcp/servers/${stdioId}/tools`],
        ['GET', `/mcp/servers/${stdioId}/resources`],
        ['POST', `/mcp/servers/${stdioId}/resources/read`, { uri: 'demo://resource/static/document/architecture.md' }],
      ] as Array<[string, string, unknown?]>) {
        const res = await api(method, path, body);
        expect(res.status, `${path}: ${res.text}`).to.equal(409);
        expect(res.body.error.code).to.equal('MCP_NOT_CONNECTED');
      }
      const server = await connect(stdioId);
      expect(server.state).to.equal('connected');
      expect(server.serverInfo.name).to.be.a('string').and.not.equal('');
      expect(server.serverInfo.version).to.be.a('string');
      expect(server.capabilities).to.have.property('tools');
      expect(server.capabilities).to.have.property('resources');
      expect(server.transportUsed).to.equal('stdio');
      expect(server.toolCount).to.be.greaterThan(5);
      // Connecting again is a no-op answering the same state.
      expect((await connect(stdioId)).state).to.equal('connected');
      const types = (await svc.services.eventStore.readStream(mcpServerStreamId(stdioId))).map((e) => e.type);
      expect(types).to.deep.equal(['McpServerRegistered', 'McpConnectRequested', 'McpServerConnected']);
    });

    it('lists tools (cached and refreshed) and calls echo, get-sum, get-structured-content; unknown tool → isError', async () => {
      const tools = await api('GET', `/mcp/servers/${stdioId}/tools`);
      expect(tools.status, tools.text).to.equal(200);
      const names = tools.body.tools.map((t: { name: string }) => t.name);
      expect(names).to.include.members(['echo', 'get-sum', 'get-structured-content', 'trigger-long-running-operation']);
      const echoTool = tools.body.tools.find((t: { name: string }) => t.name === 'echo');
      expect(echoTool.inputSchema.properties).to.have.property('message');
      const refreshed = await api('GET', `/mcp/servers/${stdioId}/tools?refresh=true`);
      expect(refreshed.body.tools.map((t: { name: string }) => t.name)).to.deep.equal(names);

      const echo = await callTool(stdioId, 'echo', { message: 'hello mcp' });
      expect(echo.status, echo.text).to.equal(200);
      expect(echo.body.result).to.include({ isError: false, truncated: false, toolName: 'echo' });
      expect(echo.body.result.text).to.include('hello mcp');
      expect(echo.body.result.content[0]).to.include({ type: 'text' });
      expect(echo.body.result.durationMs).to.be.a('number');

      const sum = await callTool(stdioId, 'get-sum', { a: 2, b: 40 });
      expect(sum.body.result.text).to.include('42');

      const structured = await callTool(stdioId, 'get-structured-content', { location: 'Chicago' });
      expect(structured.body.result.structuredContent).to.deep.equal({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });

      const unknown = await callTool(stdioId, 'no-such-tool');
      // The SDK server answers an unknown tool either with isError or a JSON-RPC error.
      if (unknown.status === 200) expect(unknown.body.result.isError).to.equal(true);
      else expect(unknown.body.error.code).to.equal('MCP_PROTOCOL_ERROR');
      const badArgs = await callTool(stdioId, 'get-sum', { a: 'x' });
      if (badArgs.status === 200) expect(badArgs.body.result.isError).to.equal(true);
      else expect(badArgs.body.error.code).to.equal('MCP_PROTOCOL_ERROR');

      // Each call is in the server's history, newest first.
      const history = await api('GET', `/mcp/servers/${stdioId}/history?limit=3&kind=tool_call`);
      expect(history.status, history.text).to.equal(200);
      expect(history.body.items).to.have.length(3);
      const structuredEntry = history.body.items.find((h: { toolName: string }) => h.toolName === 'get-structured-content');
      expect(structuredEntry).to.include({ status: 'completed', isError: false, source: 'api' });
      expect(structuredEntry.arguments).to.deep.equal({ location: 'Chicago' });
      expect(structuredEntry.structuredContent).to.deep.equal({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
      const next = await api('GET', `/mcp/servers/${stdioId}/history?limit=3&cursor=${encodeURIComponent(history.body.nextCursor)}`);
      expect(next.body.items.length).to.be.greaterThan(0);
      expect(next.body.items.map((h: { requestId: string }) => h.requestId)).not.to.include.members(history.body.items.map((h: { requestId: string }) => h.requestId));
    });

    it('concurrent calls on one server all answer', async () => {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => callTool(stdioId, 'echo', { message: `n${i}` })));
      answers.forEach((res, i) => {
        expect(res.status, res.text).to.equal(200);
        expect(res.body.result.text).to.include(`n${i}`);
      });
    });

    it('long-running operation reports progress; a short timeout answers 504 MCP_TIMEOUT', async () => {
      const long = await callTool(stdioId, 'trigger-long-running-operation', { duration: 1, steps: 4 });
      expect(long.status, long.text).to.equal(200);
      expect(long.body.result.text).to.include('Long running operation completed');
      // Every step, the last one included (it arrives in the same read as the result).
      const steps = long.body.result.progress.map((p: { progress: number }) => p.progress);
      expect(steps).to.deep.equal([1, 2, 3, 4]);
      expect(long.body.result.progress.every((p: { total: number }) => p.total === 4)).to.equal(true);
      const history = await api('GET', `/mcp/servers/${stdioId}/history?limit=1`);
      expect(history.body.items[0]).to.include({ toolName: 'trigger-long-running-operation', progressCount: 4 });

      const slow = await callTool(stdioId, 'trigger-long-running-operation', { duration: 3, steps: 1 }, { timeoutMs: 300 });
      expect(slow.status, slow.text).to.equal(504);
      expect(slow.body.error.code).to.equal('MCP_TIMEOUT');
      const failed = await api('GET', `/mcp/servers/${stdioId}/history?limit=1`);
      expect(failed.body.items?.[0], failed.text).to.include({ status: "failed" });
      expect(failed.body.items[0].error.code).to.equal('MCP_TIMEOUT');
      // The connection survives a timed-out call.
      expect((await callTool(stdioId, 'echo', { message: 'still here' })).body.result.text).to.include('still here');
    });

    it('results above MCP_MAX_RESULT_BYTES are truncated with a flag', async () => {
      const big = 'x'.repeat(20_000);
      const res = await callTool(stdioId, 'echo', { message: big });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.result.truncated).to.equal(true);
      expect(res.body.result.text.length).to.be.lessThan(5000);
      // Resource contents too (structure.md is about 12 KB).
      const read = await api('POST', `/mcp/servers/${stdioId}/resources/read`, { uri: 'demo://resource/static/document/structure.md' });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.truncated).to.equal(true);
      expect(Buffer.byteLength(JSON.stringify(read.body.contents))).to.be.at.most(4096);
    });

    it('lists resources and templates and reads a demo:// resource', async () => {
      const list = await api('GET', `/mcp/servers/${stdioId}/resources`);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.resources.length).to.be.greaterThan(0);
      const uris = list.body.resources.map((r: { uri: string }) => r.uri);
      expect(uris.every((u: string) => u.startsWith('demo://'))).to.equal(true);
      expect(list.body.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).to.include('demo://resource/dynamic/text/{resourceId}');

      const read = await api('POST', `/mcp/servers/${stdioId}/resources/read`, { uri: 'demo://resource/dynamic/text/7' });
      expect(read.status, read.text).to.equal(200);
      expect(read.body.contents[0].text).to.include('Resource 7');
      expect(read.body.truncated).to.equal(false);
      const doc = await api('POST', `/mcp/servers/${stdioId}/resources/read`, { uri: uris[0] });
      expect(doc.status, doc.text).to.equal(200);
      expect(doc.body.contents[0].uri).to.equal(uris[0]);
      const history = await api('GET', `/mcp/servers/${stdioId}/history?kind=resource_read`);
      expect(history.body.items[0], history.text).to.include({ kind: 'resource_read', status: 'completed' });
    });

    it('Streamable HTTP: connect, call, disconnect', async () => {
      const id = await register({ name: 'everything-http', transport: 'http', url: http.url, headers: { 'X-Test': 'secret-header' } });
      const server = await connect(id);
      expect(server.transportUsed).to.equal('http');
      const echo = await callTool(id, 'echo', { message: 'over http' });
      expect(echo.body.result.text).to.include('over http');
      const sum = await callTool(id, 'get-sum', { a: 1, b: 2 });
      expect(sum.body.result.text).to.include('3');
      const off = await api('POST', `/mcp/servers/${id}/disconnect`);
      expect(off.status, off.text).to.equal(200);
      expect(off.body.server.state).to.equal('disconnected');
      expect((await callTool(id, 'echo', { message: 'x' })).status).to.equal(409);
    });

    it('a server that fails its handshake: 502 with a code, state error with lastError', async () => {
      const id = await register({ name: 'broken', transport: 'stdio', command: 'node', args: ['-e', 'process.exit(3)'] });
      const res = await api('POST', `/mcp/servers/${id}/connect`);
      expect(res.status, res.text).to.be.oneOf([502, 504]);
      expect(res.body.error.code).to.match(/^MCP_/);
      const server = (await api('GET', `/mcp/servers/${id}`)).body.server;
      expect(server.state).to.equal('error');
      expect(server.lastError.code).to.equal(res.body.error.code);
      expect(server.reconnect.nextAttemptAt, 'not flagged: no reconnect').to.equal(null);
      const refused = await api('POST', '/mcp/servers', { name: 'closed port', transport: 'http', url: 'http://127.0.0.1:9/mcp' });
      const closed = await api('POST', `/mcp/servers/${refused.body.server.id}/connect`);
      expect(closed.status, closed.text).to.equal(502);
    });

    it('SSE: registered as sse, and as http falling back to SSE when Streamable HTTP answers 4xx', async () => {
      const sse = await startEverythingSse();
      try {
        for (const transport of ['sse', 'http']) {
          const id = await register({ name: `everything-${transport}`, transport, url: sse.url });
          const server = await connect(id);
          expect(server.transportUsed, transport).to.equal('sse');
          const echo = await callTool(id, 'echo', { message: `via ${transport}` });
          expect(echo.body.result.text).to.include(`via ${transport}`);
          expect((await api('POST', `/mcp/servers/${id}/disconnect`)).status).to.equal(200);
        }
      } finally {
        await sse.kill();
      }
    });

    it('server-memory over stdio: create and read entities', async () => {
      const id = await register({ name: 'memory', transport: 'stdio', command: process.execPath, args: [MEMORY_JS], env: { MEMORY_FILE_PATH: `/tmp/mcp-memory-${Date.now()}.jsonl` } });
      await connect(id);
      const created = await callTool(id, 'create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] });
      expect(created.status, created.text).to.equal(200);
      expect(created.body.result.isError).to.equal(false);
      const graph = await callTool(id, 'read_graph');
      expect(graph.body.result.text).to.include('Ada');
      await api('POST', `/mcp/servers/${id}/disconnect`);
    });

    it('disconnect ends the stdio process; delete of a connected server disconnects first', async () => {
      const id = await register(everythingStdio({ name: 'to-delete' }));
      await connect(id);
      expect(svc.services.mcp.get(id)).not.to.equal(undefined);
      const res = await api('DELETE', `/mcp/servers/${id}`);
      expect(res.status, res.text).to.equal(200);
      await waitUntil('connection closed', async () => svc.services.mcp.get(id) === undefined);
      const types = (await svc.services.eventStore.readStream(mcpServerStreamId(id))).map((e) => e.type);
      expect(types.slice(-3)).to.deep.equal(['McpDisconnectRequested', 'McpServerDisconnected', 'McpServerDeleted']);
    });

    it('a worker that lost its connection (restart) reopens it lazily on the next call', async () => {
      // What a restarted worker sees: the state says connected, this process holds nothing.
      await svc.services.mcp.drop(stdioId);
      expect(svc.services.mcp.get(stdioId)).to.equal(undefined);
      const echo = await callTool(stdioId, 'echo', { message: 'lazy' });
      expect(echo.status, echo.text).to.equal(200);
      expect(echo.body.result.text).to.include('lazy');
      expect((await api('GET', `/mcp/servers/${stdioId}`)).body.server.state).to.equal('connected');
    });
  });
}
