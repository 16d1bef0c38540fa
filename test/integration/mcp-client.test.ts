import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openMcpConnection, type McpClientOptions, type McpConnection, type McpEndpoint } from '../../infra/mcp/client.js';
import { McpClientError } from '../../infra/mcp/client-errors.js';
import { childPids, everythingPath, memoryServerPath, processState, redisServerPath, startEverythingHttp, type EverythingHttp } from '../support/mcp-client-servers.js';

/**
 * The MCP client wrapper against real MCP servers from npm (no service involved, so no modes):
 * server-everything over stdio, Streamable HTTP and HTTP+SSE, server-memory over stdio, and
 * server-redis over stdio against the Redis of .ci/servers.sh.
 */

const closes: string[] = [];
/** Children that exist before the suite (tsx's esbuild service) are not ours to account for. */
let baselineChildren = new Set<number>();
function options(extra: Partial<McpClientOptions> = {}): McpClientOptions {
  return {
    allowPrivateNetwork: true,
    stdioAllowlist: ['node'],
    connectTimeoutMs: 15_000,
    maxResultBytes: 256 * 1024,
    pingIntervalMs: 0,
    onClose: (reason) => closes.push(reason),
    ...extra,
  };
}

const stdioEverything = (): McpEndpoint => ({ transport: 'stdio', command: process.execPath, args: [everythingPath(), 'stdio'] });

async function rejectsWithCode(work: Promise<unknown>, code: string): Promise<McpClientError> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof McpClientError, `expected McpClientError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but it succeeded`);
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** The behaviour every transport must show against server-everything. */
function everythingSuite(label: string, endpoint: () => McpEndpoint, expectedTransport: string) {
  describe(`server-everything over ${label}`, function () {
    this.timeout(30_000);
    let conn: McpConnection;
    before(async () => {
      conn = await openMcpConnection(endpoint(), options());
    });
    after(async () => conn?.close());

    it('reports the server identity and the transport used', () => {
      assert.equal(conn.identity.name, 'mcp-servers/everything');
      assert.ok(conn.identity.version);
      assert.ok(conn.identity.protocolVersion, 'protocol version negotiated');
      assert.ok(conn.identity.capabilities.tools);
      assert.equal(conn.identity.transportUsed, expectedTransport);
    });

    it('lists tools with their input schemas', async () => {
      const tools = await conn.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ['echo', 'get-sum', 'get-structured-content', 'trigger-long-running-operation']) assert.ok(names.includes(name), name);
      const echo = tools.find((t) => t.name === 'echo')!;
      assert.equal((echo.inputSchema as { type: string }).type, 'object');
      assert.ok(echo.description);
    });

    it('calls echo and get-sum', async () => {
      const echo = await conn.callTool('echo', { message: 'hello there' }, { timeoutMs: 10_000 });
      assert.equal(echo.text, 'Echo: hello there');
      assert.equal(echo.isError, false);
      assert.equal(echo.truncated, false);
      assert.ok(echo.durationMs >= 0);
      const sum = await conn.callTool('get-sum', { a: 2, b: 40 }, { timeoutMs: 10_000 });
      assert.match(sum.text, /42/);
    });

    it('returns structured content', async () => {
      const result = await conn.callTool('get-structured-content', { location: 'Chicago' }, { timeoutMs: 10_000 });
      assert.equal(result.isError, false);
      const structured = result.structuredContent as { temperature: number; conditions: string };
      assert.equal(typeof structured.temperature, 'number');
      assert.equal(typeof structured.conditions, 'string');
    });

    it('reports progress of the long-running operation', async () => {
      const progress: Array<{ progress: number; total?: number }> = [];
      const result = await conn.callTool('trigger-long-running-operation', { duration: 0.6, steps: 3 }, { timeoutMs: 10_000, onProgress: (p) => progress.push(p) });
      assert.match(result.text, /Long running operation completed/);
      // Every step, the last one included (it often arrives in the same read as the result).
      assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3], JSON.stringify(progress));
      assert.ok(progress.every((p) => p.total === 3));
    });

    it('answers a tool error as isError or a protocol error, never a crash', async () => {
      try {
        const result = await conn.callTool('get-sum', { a: 'not a number' }, { timeoutMs: 10_000 });
        assert.equal(result.isError, true);
      } catch (err) {
        assert.ok(err instanceof McpClientError);
        assert.equal(err.code, 'MCP_PROTOCOL_ERROR');
      }
    });

    it('lists demo:// resources and templates and reads one', async () => {
      const list = await conn.listResources();
      assert.ok(list.resources.length > 0);
      assert.ok(list.resources.every((r) => r.uri.startsWith('demo://')));
      assert.ok(list.resourceTemplates.some((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'));
      const read = await conn.readResource('demo://resource/dynamic/text/7', { timeoutMs: 10_000 });
      assert.equal(read.truncated, false);
      assert.equal(read.contents[0].uri, 'demo://resource/dynamic/text/7');
      assert.match(read.contents[0].text ?? '', /7/);
    });

    it('times out a slow call with MCP_TIMEOUT and stays usable', async () => {
      await rejectsWithCode(conn.callTool('trigger-long-running-operation', { duration: 3, steps: 3 }, { timeoutMs: 300 }), 'MCP_TIMEOUT');
      const echo = await conn.callTool('echo', { message: 'still here' }, { timeoutMs: 10_000 });
      assert.equal(echo.text, 'Echo: still here');
    });

    it('aborts a call when the caller signal fires', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await rejectsWithCode(conn.callTool('trigger-long-running-operation', { duration: 3, steps: 3 }, { timeoutMs: 10_000, signal: controller.signal }), 'MCP_ABORTED');
    });
  });
}

describe('MCP client against real servers', function () {
  this.timeout(30_000);

  everythingSuite('stdio', stdioEverything, 'stdio');

  let streamable: EverythingHttp;
  let sse: EverythingHttp;
  before(async () => {
    baselineChildren = new Set(await childPids());
    streamable = await startEverythingHttp('streamableHttp');
    sse = await startEverythingHttp('sse');
  });
  after(async () => {
    await streamable?.kill();
    await sse?.kill();
  });

  everythingSuite('Streamable HTTP', () => ({ transport: 'http', url: streamable.url }), 'http');
  // Registered as `http` at an SSE-only server: the initialize POST gets a 404, the client falls back.
  everythingSuite('http falling back to SSE', () => ({ transport: 'http', url: sse.url }), 'sse');
  everythingSuite('sse', () => ({ transport: 'sse', url: sse.url }), 'sse');

  describe('limits', () => {
    it('truncates a result over maxResultBytes and flags it, without throwing', async () => {
      const conn = await openMcpConnection(stdioEverything(), options({ maxResultBytes: 200 }));
      try {
        const result = await conn.callTool('echo', { message: 'x'.repeat(5000) }, { timeoutMs: 10_000 });
        assert.equal(result.truncated, true);
        assert.ok(Buffer.byteLength(JSON.stringify(result.content)) <= 200, JSON.stringify(result.content));
        assert.match(result.text, /^Echo: x+\n\[truncated to 200 bytes\]$/);
        const image = await conn.callTool('get-tiny-image', {}, { timeoutMs: 10_000 });
        assert.equal(image.truncated, true);
        assert.ok(Buffer.byteLength(JSON.stringify(image.content)) <= 200);
        const resource = await conn.readResource('demo://resource/static/document/architecture.md', { timeoutMs: 10_000 });
        assert.equal(resource.truncated, true);
        assert.ok(Buffer.byteLength(JSON.stringify(resource.contents)) <= 200);
        const kept = resource.contents[0].text ?? '';
        assert.ok(kept.length > 0 && ('# Everything Server'.startsWith(kept) || kept.startsWith('# Everything Server')), kept);
      } finally {
        await conn.close();
      }
    });
  });

  describe('connection loss and close', () => {
    it('notices a killed Streamable HTTP server through the ping and calls onClose once', async () => {
      const server = await startEverythingHttp('streamableHttp');
      const reasons: string[] = [];
      const conn = await openMcpConnection({ transport: 'http', url: server.url }, options({ pingIntervalMs: 200, onClose: (r) => reasons.push(r) }));
      try {
        assert.equal((await conn.callTool('echo', { message: 'a' }, { timeoutMs: 5000 })).text, 'Echo: a');
        // Negative check, kept as a window: the pings (every 200 ms) are not observable from here; 500 ms spans two of them.
        await new Promise((r) => setTimeout(r, 500));
        assert.deepEqual(reasons, [], 'no close while the server runs');
        await server.kill();
        await waitFor(() => reasons.length > 0, 5000, 'onClose');
        // Negative check, kept as a window: a second onClose could only come from a later ping (every 200 ms); 600 ms spans three.
        await new Promise((r) => setTimeout(r, 600));
        assert.equal(reasons.length, 1, 'onClose fires once');
        assert.match(reasons[0], /ping|closed/);
        await rejectsWithCode(conn.callTool('echo', { message: 'b' }, { timeoutMs: 1000 }), 'MCP_CONNECTION_CLOSED');
      } finally {
        await conn.close();
        await server.kill();
      }
    });

    it('notices a killed SSE server', async () => {
      const server = await startEverythingHttp('sse');
      const reasons: string[] = [];
      const conn = await openMcpConnection({ transport: 'sse', url: server.url }, options({ pingIntervalMs: 200, onClose: (r) => reasons.push(r) }));
      try {
        assert.equal((await conn.callTool('echo', { message: 'a' }, { timeoutMs: 5000 })).text, 'Echo: a');
        await server.kill();
        await waitFor(() => reasons.length > 0, 5000, 'onClose');
        assert.equal(reasons.length, 1);
      } finally {
        await conn.close();
        await server.kill();
      }
    });

    it('calls onClose when a stdio child dies', async () => {
      const reasons: string[] = [];
      const before = new Set(await childPids());
      const conn = await openMcpConnection(stdioEverything(), options({ onClose: (r) => reasons.push(r) }));
      const child = (await childPids()).find((pid) => !before.has(pid));
      assert.ok(child, 'a child was spawned');
      process.kill(child, 'SIGKILL');
      await waitFor(() => reasons.length > 0, 5000, 'onClose');
      assert.equal(reasons.length, 1);
      await conn.close();
      await waitFor(async () => (await processState(child)) === null, 5000, 'the child to be reaped');
    });

    it('close() ends the stdio child and leaves no zombie; onClose does not fire', async () => {
      const reasons: string[] = [];
      const before = new Set(await childPids());
      const conn = await openMcpConnection(stdioEverything(), options({ onClose: (r) => reasons.push(r), pingIntervalMs: 100 }));
      const child = (await childPids()).find((pid) => !before.has(pid));
      assert.ok(child);
      assert.ok(['S', 'R'].includes((await processState(child)) ?? ''));
      await conn.close();
      await conn.close(); // twice is fine
      assert.equal(await processState(child), null, 'the child is gone and reaped');
      // Negative check, kept as a window: a stray onClose would come from the ping timer (every 100 ms); 300 ms spans three.
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(reasons, []);
      await rejectsWithCode(conn.listTools(), 'MCP_CONNECTION_CLOSED');
    });
  });

  describe('security rules', () => {
    it('refuses a command that is not allowlisted before spawning anything', async () => {
      const before = (await childPids()).length;
      await rejectsWithCode(openMcpConnection({ transport: 'stdio', command: '/bin/sh', args: ['-c', 'echo pwned'] }, options()), 'MCP_STDIO_NOT_ALLOWED');
      await rejectsWithCode(openMcpConnection(stdioEverything(), options({ stdioAllowlist: [] })), 'MCP_STDIO_NOT_ALLOWED');
      assert.equal((await childPids()).length, before);
    });

    it('refuses loopback and private URLs when private networks are not allowed', async () => {
      for (const url of [streamable.url, 'http://localhost:9/mcp', 'http://10.1.2.3/mcp', 'http://[::1]:9/mcp', 'http://169.254.169.254/latest', 'http://[::ffff:127.0.0.1]:9/mcp']) {
        await rejectsWithCode(openMcpConnection({ transport: 'http', url }, options({ allowPrivateNetwork: false })), 'OUTBOUND_ADDRESS_REFUSED');
      }
      await rejectsWithCode(openMcpConnection({ transport: 'sse', url: sse.url }, options({ allowPrivateNetwork: false })), 'OUTBOUND_ADDRESS_REFUSED');
      await rejectsWithCode(openMcpConnection({ transport: 'http', url: 'file:///etc/passwd' }, options()), 'OUTBOUND_INVALID_URL');
    });

    it('gives the stdio child only the named environment plus a safe minimum', async () => {
      process.env.MCP_CLIENT_TEST_SECRET = 'do-not-leak';
      const conn = await openMcpConnection({ ...stdioEverything(), env: { NAMED_VAR: 'visible' } }, options());
      try {
        const result = await conn.callTool('get-env', {}, { timeoutMs: 10_000 });
        const env = JSON.parse(result.text) as Record<string, string>;
        assert.equal(env.NAMED_VAR, 'visible');
        assert.equal(env.MCP_CLIENT_TEST_SECRET, undefined);
        for (const key of Object.keys(env)) assert.ok(['NAMED_VAR', 'PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'LOGNAME', 'SHELL', 'TERM', 'USER'].includes(key), `unexpected ${key}`);
      } finally {
        delete process.env.MCP_CLIENT_TEST_SECRET;
        await conn.close();
      }
    });

    it('explains a stdio server that dies during the handshake, with its stderr', async () => {
      const err = await rejectsWithCode(
        openMcpConnection({ transport: 'stdio', command: process.execPath, args: ['-e', 'console.error("boom: redis://u:hunter2@db:6379"); process.exit(3)'] }, options()),
        'MCP_CONNECT_FAILED',
      );
      assert.match(err.message, /boom/);
      assert.doesNotMatch(err.message, /hunter2/, 'credentials in stderr are masked');
    });

    it('reports an allowlisted command that does not exist as MCP_CONNECT_FAILED', async () => {
      await rejectsWithCode(openMcpConnection({ transport: 'stdio', command: 'no-such-mcp-server-binary' }, options({ stdioAllowlist: ['no-such-mcp-server-binary'] })), 'MCP_CONNECT_FAILED');
    });

    it('says both answers when Streamable HTTP and the SSE fallback fail', async () => {
      const err = await rejectsWithCode(openMcpConnection({ transport: 'http', url: streamable.url.replace('/mcp', '/nothing-here') }, options()), 'MCP_CONNECT_FAILED');
      assert.match(err.message, /Streamable HTTP answered 404 and the SSE fallback failed/);
    });

    it('times out a handshake that never completes with MCP_TIMEOUT', async () => {
      // A process that reads stdin and never answers.
      const started = Date.now();
      await rejectsWithCode(openMcpConnection({ transport: 'stdio', command: process.execPath, args: ['-e', 'process.stdin.resume()'] }, options({ connectTimeoutMs: 500 })), 'MCP_TIMEOUT');
      assert.ok(Date.now() - started < 5000);
    });

    it('reports a connection refused as MCP_CONNECT_FAILED', async () => {
      const server = await startEverythingHttp('streamableHttp');
      await server.kill();
      await rejectsWithCode(openMcpConnection({ transport: 'http', url: server.url }, options()), 'MCP_CONNECT_FAILED');
    });
  });

  describe('server-memory over stdio', () => {
    it('creates entities and reads the graph back', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mcp-memory-'));
      const file = join(dir, 'memory.jsonl');
      const conn = await openMcpConnection({ transport: 'stdio', command: 'node', args: [memoryServerPath()], env: { MEMORY_FILE_PATH: file } }, options());
      try {
        const tools = (await conn.listTools()).map((t) => t.name);
        assert.ok(tools.includes('create_entities') && tools.includes('read_graph'));
        const created = await conn.callTool('create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] }, { timeoutMs: 10_000 });
        assert.equal(created.isError, false, created.text);
        const graph = await conn.callTool('read_graph', {}, { timeoutMs: 10_000 });
        assert.match(graph.text, /Ada/);
        assert.match(readFileSync(file, 'utf8'), /Ada/);
      } finally {
        await conn.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('server-redis over stdio', () => {
    const redisUrl = process.env.REDIS_URL;
    before(function () {
      if (!redisUrl) {
        if (process.env.REQUIRE_SERVERS === 'true') throw new Error('REDIS_URL is required when REQUIRE_SERVERS=true');
        console.log('SKIP server-redis tests: REDIS_URL is not set');
        this.skip();
      }
    });

    it('sets, gets, lists and deletes a key in the real Redis', async () => {
      const conn = await openMcpConnection({ transport: 'stdio', command: process.execPath, args: [redisServerPath(), redisUrl!] }, options({ stdioAllowlist: [process.execPath] }));
      const key = `mcp-client-test:${randomBytes(4).toString('hex')}`;
      try {
        assert.deepEqual(
          (await conn.listTools()).map((t) => t.name).sort(),
          ['delete', 'get', 'list', 'set'],
        );
        const set = await conn.callTool('set', { key, value: 'forty-two' }, { timeoutMs: 10_000 });
        assert.equal(set.isError, false, set.text);
        assert.match((await conn.callTool('get', { key }, { timeoutMs: 10_000 })).text, /forty-two/);
        assert.match((await conn.callTool('list', { pattern: 'mcp-client-test:*' }, { timeoutMs: 10_000 })).text, new RegExp(key));
        await conn.callTool('delete', { key }, { timeoutMs: 10_000 });
        assert.doesNotMatch((await conn.callTool('get', { key }, { timeoutMs: 10_000 })).text, /forty-two/);
      } finally {
        await conn.close();
      }
    });
  });
});

describe('MCP client leaves no children behind', () => {
  it('has no live child process of this test run left', async function () {
    this.timeout(10_000);
    // The HTTP servers of the suite were killed in its after hook; stdio children closed per test.
    const ours = async () => (await childPids()).filter((pid) => !baselineChildren.has(pid));
    await waitFor(async () => (await ours()).length === 0, 5000, `no children (left: ${(await ours()).join(', ')})`);
    assert.equal(closes.length, 0, `no unexpected onClose: ${closes.join('; ')}`);
  });
});
