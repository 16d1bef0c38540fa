import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

/** Flows as tools of the service's own MCP server (/api/mcp, issue 32 item 5). */

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
type Auth = { auth: Record<string, string> };

async function mcpClient(url: string, auth: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'flows-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
  return client;
}

const INSPECTOR = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');

function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [INSPECTOR, ...args], { timeout: 60_000, env: { ...process.env, npm_config_offline: 'true' } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

for (const mode of availableModes()) {
  describe(`flows as MCP tools: /api/mcp (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let alice: RegisteredUser & Auth;
    let bob: RegisteredUser & Auth;
    let aliceKey: Record<string, string>;
    let flowId: string;
    let mcpUrl: string;
    const flows = flowClient(() => svc);
    const as = (u: Auth, method: string, path: string, body?: unknown) => flows.as(u, method, path, body);

    async function inOrg(user: RegisteredUser, name: string): Promise<RegisteredUser & Auth> {
      const org = await call(svc.baseUrl, 'POST', '/orgs', { name }, user.auth);
      expect(org.status, org.text).to.equal(201);
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.body.organization.id }, user.auth);
      expect(switched.status, switched.text).to.equal(200);
      return { ...user, auth: { Authorization: `Bearer ${switched.body.token}` } };
    }

    before(async () => {
      svc = await startTestService(mode);
      mcpUrl = `${svc.baseUrl}/mcp`;
      alice = await inOrg(await registerUser(svc.baseUrl), `MCP A ${mode}`);
      bob = await inOrg(await registerUser(svc.baseUrl), `MCP B ${mode}`);
      const key = await as(alice, 'POST', '/api-keys', { name: 'mcp client' });
      expect(key.status, key.text).to.equal(201);
      aliceKey = { Authorization: `Bearer ${key.body.key}` };
      flowId = await flows.newFlow(alice, 'Greet someone!');
      const llm = await flows.addNode(alice, flowId, node({ nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'hi {{inputs.who}}' }));
      const after = await flows.addNode(alice, flowId, node({ nodeType: 'transform', template: '{{previous}}' }, 200));
      const c = await as(alice, 'POST', `/flows/${flowId}/connections`, { source: llm.id, target: after.id });
      expect(c.status, c.text).to.equal(201);
      const put = await as(alice, 'PUT', `/flows/${flowId}/mcp`, {
        enabled: true,
        description: 'Greets someone',
        inputSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
      });
      expect(put.status, put.text).to.equal(200);
      expect(put.body.mcp).to.include({ enabled: true, toolName: 'Greet_someone', description: 'Greets someone', inputSchemaSource: 'given' });
    });
    after(async () => svc?.stop());

    it('GET /flows/{flowId}/mcp answers the setting; another tenant gets 404', async () => {
      const got = await as(alice, 'GET', `/flows/${flowId}/mcp`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body.mcp.inputSchema).to.deep.equal({ type: 'object', properties: { who: { type: 'string' } }, required: ['who'] });
      expectError(await as(bob, 'GET', `/flows/${flowId}/mcp`), 404, 'FLOW_NOT_FOUND');
    });

    it("the SDK client lists the tenant's flow and calls it, with node progress; an API key works like a JWT", async () => {
      const client = await mcpClient(mcpUrl, aliceKey);
      try {
        const { tools } = await client.listTools();
        const tool = tools.find((t) => t.name === 'Greet_someone');
        expect(tool, JSON.stringify(tools)).to.not.equal(undefined);
        expect(tool!.description).to.equal('Greets someone');
        expect(tool!.inputSchema).to.deep.include({ type: 'object', required: ['who'] });
        const progress: Array<{ progress: number; total?: number; message?: string }> = [];
        const result = await client.callTool({ name: 'Greet_someone', arguments: { who: 'you' } }, undefined, { onprogress: (p) => progress.push(p) });
        expect(result.isError, JSON.stringify(result)).to.not.equal(true);
        const text = (result.content as Array<{ type: string; text: string }>)[0].text;
        expect(text).to.equal('hi you');
        const structured = result.structuredContent as { processId: string; status: string; outputs: Record<string, unknown> };
        expect(structured.status).to.equal('completed');
        expect(JSON.stringify(structured.outputs)).to.include('hi you');
        expect(progress.length, JSON.stringify(progress)).to.equal(2);
        expect(progress.map((p) => p.progress)).to.deep.equal([1, 2]);
        expect(progress[1].total).to.equal(2);
        // The run is the flow's like any other: GET /processes/{id} has it, started by the caller.
        const proc = await as(alice, 'GET', `/processes/${structured.processId}`);
        expect(proc.status, proc.text).to.equal(200);
        expect(proc.body.process.status).to.equal('completed');
      } finally {
        await client.close();
      }
    });

    it('progress is live: a node that finished is reported while a later one still runs', async () => {
      const slow = await flows.newFlow(alice, 'slow one');
      const first = await flows.addNode(alice, slow, node({ nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'hi {{inputs.who}}' }));
      const wait = await flows.addNode(alice, slow, node({ nodeType: 'delay', delayMs: 800 }, 200));
      expect((await as(alice, 'POST', `/flows/${slow}/connections`, { source: first.id, target: wait.id })).status).to.equal(201);
      expect((await as(alice, 'PUT', `/flows/${slow}/mcp`, { enabled: true })).status).to.equal(200);
      const client = await mcpClient(mcpUrl, alice.auth);
      try {
        const seen: Array<{ at: number; message?: string }> = [];
        const result = await client.callTool({ name: 'slow_one', arguments: { who: 'me' } }, undefined, { onprogress: (p) => seen.push({ at: Date.now(), message: p.message }) });
        const done = Date.now();
        expect(result.isError, JSON.stringify(result)).to.not.equal(true);
        expect(seen.map((p) => p.message)).to.deep.equal([`node ${first.id} completed`, `node ${wait.id} completed`]);
        expect(done - seen[0].at, 'the first node was reported before the delay ended').to.be.greaterThan(400);
      } finally {
        await client.close();
      }
    });

    it('a second organization sees no tool and cannot call the first one\'s (unknown tool, nothing revealed)', async () => {
      const client = await mcpClient(mcpUrl, bob.auth);
      try {
        const { tools } = await client.listTools();
        expect(tools).to.deep.equal([]);
        let error: Error | null = null;
        try {
          await client.callTool({ name: 'Greet_someone', arguments: { who: 'you' } });
        } catch (err) {
          error = err as Error;
        }
        expect(error, 'calling another tenant\'s tool must fail').to.not.equal(null);
        expect(error!.message).to.include('unknown tool');
        expect(error!.message).to.not.include(flowId);
      } finally {
        await client.close();
      }
    });

    it('a failed run is isError with its error', async () => {
      const failing = await flows.newFlow(alice, 'always fails');
      await flows.addNode(alice, failing, node({ nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: 'x' }));
      const put = await as(alice, 'PUT', `/flows/${failing}/mcp`, { enabled: true, toolName: 'fails' });
      expect(put.status, put.text).to.equal(200);
      const client = await mcpClient(mcpUrl, alice.auth);
      try {
        const result = await client.callTool({ name: 'fails', arguments: {} });
        expect(result.isError, JSON.stringify(result)).to.equal(true);
        expect((result.structuredContent as { status: string }).status).to.not.equal('completed');
      } finally {
        await client.close();
      }
    });

    it('401 carries WWW-Authenticate with the protected resource metadata, which is served (RFC 9728); GET and DELETE are 405', async () => {
      const res = await fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).to.equal(401);
      const header = res.headers.get('www-authenticate') ?? '';
      const origin = new URL(svc.baseUrl).origin;
      expect(header).to.equal(`Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/api/mcp"`);
      const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/api/mcp`);
      expect(metadata.status).to.equal(200);
      const doc = (await metadata.json()) as { resource: string; authorization_servers: string[]; bearer_methods_supported: string[] };
      expect(doc.resource).to.equal(`${origin}/api/mcp`);
      expect(doc.authorization_servers).to.deep.equal([origin]);
      expect(doc.bearer_methods_supported).to.deep.equal(['header']);
      const bad = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer fsk_nope.nope' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      expect(bad.status).to.equal(401);
      expect(bad.headers.get('www-authenticate')).to.include('resource_metadata=');
      expect((await fetch(mcpUrl, { headers: aliceKey })).status).to.equal(405);
      expect((await fetch(mcpUrl, { method: 'DELETE', headers: aliceKey })).status).to.equal(405);
    });

    it('PUT /flows/{flowId}/mcp: 400 names the bad schema field, 404 for another tenant, 409 for a name the workspace uses', async () => {
      await flows.refusedWithoutEvents(() => as(alice, 'PUT', `/flows/${flowId}/mcp`, { enabled: true, inputSchema: { type: 'string' } }), 400, 'VALIDATION_FAILED', 'body.inputSchema.type');
      const invalid = await as(alice, 'PUT', `/flows/${flowId}/mcp`, { enabled: true, inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } });
      expectError(invalid, 400, 'VALIDATION_FAILED');
      expect(invalid.body.error.details.fields[0].field).to.match(/^body\.inputSchema/);
      expectError(await as(alice, 'PUT', `/flows/${flowId}/mcp`, { enabled: true, toolName: 'no spaces allowed' }), 400, 'VALIDATION_FAILED', 'body.toolName');
      expectError(await as(bob, 'PUT', `/flows/${flowId}/mcp`, { enabled: true }), 404, 'FLOW_NOT_FOUND');
      const second = await flows.newFlow(alice, 'another');
      const taken = await as(alice, 'PUT', `/flows/${second}/mcp`, { enabled: true, toolName: 'greet_SOMEONE' });
      expectError(taken, 409, 'MCP_TOOL_NAME_TAKEN');
      // Bob's workspace is another tenant: the same name is his to take.
      const bobs = await flows.newFlow(bob, 'Greet someone!');
      const bobPut = await as(bob, 'PUT', `/flows/${bobs}/mcp`, { enabled: true });
      expect(bobPut.status, bobPut.text).to.equal(200);
      expect(bobPut.body.mcp.toolName).to.equal('Greet_someone');
      // A deleted flow gives its name up.
      const third = await flows.newFlow(alice, 'third');
      expect((await as(alice, 'PUT', `/flows/${third}/mcp`, { enabled: true, toolName: 'reused' })).status).to.equal(200);
      expect((await as(alice, 'DELETE', `/flows/${third}`)).status).to.equal(200);
      const reused = await as(alice, 'PUT', `/flows/${second}/mcp`, { enabled: true, toolName: 'reused' });
      expect(reused.status, reused.text).to.equal(200);
      // Turned off: no longer listed.
      expect((await as(alice, 'PUT', `/flows/${second}/mcp`, { enabled: false })).status).to.equal(200);
      const client = await mcpClient(mcpUrl, alice.auth);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).to.include('Greet_someone');
        expect(names).to.not.include('reused');
        expect(names).to.not.include('third');
      } finally {
        await client.close();
      }
    });

    it('the MCP inspector CLI lists and calls the flow (--transport http, --header)', async function () {
      if (!existsSync(INSPECTOR)) {
        console.log(`SKIP inspector CLI: ${INSPECTOR} is not installed (npm install)`);
        this.skip();
      }
      const header = `Authorization: ${aliceKey.Authorization}`;
      const listed = await inspector(['--cli', mcpUrl, '--transport', 'http', '--header', header, '--method', 'tools/list']);
      expect(listed.code, listed.stderr + listed.stdout).to.equal(0);
      expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).to.include('Greet_someone');
      const called = await inspector(['--cli', mcpUrl, '--transport', 'http', '--header', header, '--method', 'tools/call', '--tool-name', 'Greet_someone', '--tool-arg', 'who=you']);
      expect(called.code, called.stderr + called.stdout).to.equal(0);
      const result = JSON.parse(called.stdout);
      expect(result.content[0].text).to.equal('hi you');
      const stranger = await inspector(['--cli', mcpUrl, '--transport', 'http', '--header', `Authorization: ${bob.auth.Authorization}`, '--method', 'tools/list']);
      expect(stranger.code, stranger.stderr).to.equal(0);
      // Bob exposed a flow of his own under the same name (the PUT test): his, not Alice's.
      const strangers = JSON.parse(stranger.stdout).tools as Array<{ name: string; description: string }>;
      expect(strangers.map((t) => t.description)).to.not.include('Greets someone');
    });
  });
}
