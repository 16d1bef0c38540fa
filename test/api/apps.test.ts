import { expect } from 'chai';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg, expectError } from './orgs-support.js';

/** Apps over HTTP (issue 16): CRUD, contract and linked flow, builder chat (offline scaffold, JSON and SSE), tenancy and roles. */
type Auth = Record<string, string>;

const contract = {
  input: { type: 'object', required: ['topic'], properties: { topic: { type: 'string', title: 'Topic' }, words: { type: 'integer', minimum: 1 } } },
  output: { type: 'object', properties: { summary: { type: 'string' } } },
};

/** The named events of a text/event-stream body, in order. */
function sseEvents(text: string): Array<{ event: string; id: string | null; data: any }> {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n'))
    .filter((lines) => lines.some((l) => l.startsWith('event: ')))
    .map((lines) => ({
      event: lines.find((l) => l.startsWith('event: '))!.slice(7),
      id: lines.find((l) => l.startsWith('id: '))?.slice(4) ?? null,
      data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)),
    }));
}

for (const mode of availableModes()) {
  describe(`apps API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let stranger: RegisteredUser;
    const api = (method: string, path: string, auth: Auth, body?: unknown, headers: Auth = {}) => call(svc.baseUrl, method, path, body, { ...auth, ...headers });

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      stranger = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    async function createApp(auth: Auth, body: Record<string, unknown> = { name: 'Summariser' }) {
      const res = await api('POST', '/apps', auth, body);
      expect(res.status, res.text).to.equal(201);
      expect(res.headers.get('etag')).to.equal(`"${res.body.app.version}"`);
      return res.body.app as { id: string; version: number; [k: string]: any };
    }

    it('creates, lists with pages, gets with an ETag, updates with If-Match and deletes', async () => {
      const a = await createApp(owner.auth, { name: 'First', description: 'one', contract });
      expect(a).to.deep.include({ name: 'First', description: 'one', flowId: null, fileCount: 0, totalBytes: 0, versionCount: 0, version: 0 });
      expect(a.contract).to.deep.equal(contract);
      const b = await createApp(owner.auth, { name: 'Second' });
      expect(b.contract).to.deep.equal({ input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} } });

      const page1 = await api('GET', '/apps?limit=1', owner.auth);
      expect(page1.status, page1.text).to.equal(200);
      expect(page1.body.items).to.have.length(1);
      const page2 = await api('GET', `/apps?limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`, owner.auth);
      expect([...page1.body.items, ...page2.body.items].map((i: { id: string }) => i.id).sort()).to.deep.equal([a.id, b.id].sort());

      const got = await api('GET', `/apps/${a.id}`, owner.auth);
      expect(got.status, got.text).to.equal(200);
      expect(got.headers.get('etag')).to.equal('"0"');
      const renamed = await api('PUT', `/apps/${a.id}`, owner.auth, { name: 'Renamed' }, { 'If-Match': '"0"' });
      expect(renamed.status, renamed.text).to.equal(200);
      expect(renamed.body.app).to.deep.include({ name: 'Renamed', description: 'one', version: 1 });
      expectError(await api('PUT', `/apps/${a.id}`, owner.auth, { name: 'Stale' }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      expectError(await api('PUT', `/apps/${a.id}`, owner.auth, { name: 'x' }, { 'If-Match': 'soon' }), 400, 'VALIDATION_FAILED');
      expectError(await api('POST', '/apps', owner.auth, { name: '' }), 400, 'VALIDATION_FAILED');

      const deleted = await api('DELETE', `/apps/${b.id}`, owner.auth);
      expect(deleted.status, deleted.text).to.equal(200);
      expectError(await api('GET', `/apps/${b.id}`, owner.auth), 404, 'APP_NOT_FOUND');
      expect((await api('GET', '/apps', owner.auth)).body.items.map((i: { id: string }) => i.id)).to.not.include(b.id);
    });

    it('refuses a contract that is not a valid JSON Schema, naming the side', async () => {
      const bad = await api('POST', '/apps', owner.auth, { name: 'Bad', contract: { input: { type: 'objekt' }, output: {} } });
      expectError(bad, 400, 'APP_CONTRACT_INVALID');
      expect(bad.body.error.details.side).to.equal('input');
      const app = await createApp(owner.auth);
      const res = await api('PUT', `/apps/${app.id}/contract`, owner.auth, { input: { type: 'object' }, output: { type: 'object', properties: { a: { minLength: -1 } } } });
      expectError(res, 400, 'APP_CONTRACT_INVALID');
      expect(res.body.error.details.side).to.equal('output');
      expectError(await api('PUT', `/apps/${app.id}/contract`, owner.auth, { input: { type: 'string' }, output: {} }), 400, 'APP_CONTRACT_INVALID');
      expect((await api('GET', `/apps/${app.id}`, owner.auth)).body.app.version, 'nothing written').to.equal(0);
    });

    it('links a flow the caller can run and reports where it does not match the contract; creates a matching flow', async () => {
      const app = await createApp(owner.auth, { name: 'Summariser', contract });
      const flow = await api('POST', '/flows', owner.auth, { name: 'hand made' });
      expect(flow.status, flow.text).to.equal(201);
      const flowId = flow.body.flow.id;
      const node = await api('POST', `/flows/${flowId}/nodes`, owner.auth, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'input', inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' }, topic: { type: 'number' } } } } });
      expect(node.status, node.text).to.equal(201);

      const theirs = await api('POST', '/flows', stranger.auth, { name: 'not yours' });
      expectError(await api('POST', `/apps/${app.id}/flow`, owner.auth, { flowId: theirs.body.flow.id }), 404, 'FLOW_NOT_FOUND');
      expectError(await api('POST', `/apps/${app.id}/flow`, owner.auth, { flowId: 'no-such-flow' }), 404, 'FLOW_NOT_FOUND');

      const linked = await api('POST', `/apps/${app.id}/flow`, owner.auth, { flowId });
      expect(linked.status, linked.text).to.equal(200);
      expect(linked.body.app.flowId).to.equal(flowId);
      expect(linked.body.flow).to.deep.include({ linked: true, flowId, matches: false });
      expect(linked.body.flow.mismatches.map((m: any) => [m.side, m.code, m.path])).to.deep.equal([
        ['input', 'INPUT_TYPE_DIFFERS', '/properties/topic'],
        ['input', 'INPUT_NOT_DECLARED_BY_FLOW', '/properties/words'],
        ['input', 'INPUT_REQUIRED_BY_FLOW', '/properties/text'],
        ['output', 'NO_OUTPUT_NODE', ''],
      ]);
      const got = await api('GET', `/apps/${app.id}/contract`, owner.auth);
      expect(got.status, got.text).to.equal(200);
      expect(got.body.contract).to.deep.equal(contract);
      expect(got.body.flow.mismatches).to.have.length(4);

      // Saving a contract the flow matches: the answer says so.
      const fitting = { input: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }, output: { type: 'object' } };
      const saved = await api('PUT', `/apps/${app.id}/contract`, owner.auth, fitting, { 'If-Match': `"${got.body.version}"` });
      expect(saved.status, saved.text).to.equal(200);
      expect(saved.body.flow).to.deep.include({ linked: true, matches: true, mismatches: [] });
      expectError(await api('PUT', `/apps/${app.id}/contract`, owner.auth, contract, { 'If-Match': `"${got.body.version}"` }), 412, 'PRECONDITION_FAILED');

      const unlinked = await api('DELETE', `/apps/${app.id}/flow`, owner.auth);
      expect(unlinked.status, unlinked.text).to.equal(200);
      expect(unlinked.body).to.deep.include({ previousFlowId: flowId });
      expect(unlinked.body.app.flowId).to.equal(null);
      expectError(await api('DELETE', `/apps/${app.id}/flow`, owner.auth), 409, 'APP_FLOW_NOT_LINKED');

      // A flow made from the contract matches it, and is the caller's flow.
      await api('PUT', `/apps/${app.id}/contract`, owner.auth, contract);
      const made = await api('POST', `/apps/${app.id}/flow/create`, owner.auth, {});
      expect(made.status, made.text).to.equal(201);
      expect(made.body.app.flowId).to.equal(made.body.flowId);
      expect(made.body.flow).to.deep.include({ linked: true, matches: true, mismatches: [] });
      const madeFlow = await api('GET', `/flows/${made.body.flowId}`, owner.auth);
      expect(madeFlow.status, madeFlow.text).to.equal(200);
      const types = madeFlow.body.flow.nodes.map((n: any) => [n.data.nodeType, n.data.outputKey ?? null]);
      expect(types).to.deep.equal([['input', null], ['output', 'summary']]);
      expect(madeFlow.body.flow.nodes[0].data.inputSchema).to.deep.equal(contract.input);
      expect(madeFlow.body.flow.edges).to.have.length(1);
    });

    it('the offline builder writes the deterministic scaffold as one change (JSON), and streams the same answer as SSE', async () => {
      const app = await createApp(owner.auth, { name: 'Summariser', contract });
      const res = await api('POST', `/apps/${app.id}/builder/chat`, owner.auth, { message: 'make me a page' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ provider: 'offline', written: ['index.html', 'app.js', 'style.css'], deleted: [], version: 1 });
      expect(res.body.reply).to.match(/scaffold/);
      const files = await api('GET', `/apps/${app.id}/files`, owner.auth);
      expect(files.body.files.map((f: any) => f.path)).to.deep.equal(['app.js', 'index.html', 'style.css']);
      const html = files.body.files.find((f: any) => f.path === 'index.html').content as string;
      expect(html).to.include('name="topic" required').and.include('name="words"').and.include('src="app-client.js"');
      const events = (await svc.services.eventStore.readStream(`app-${app.id}`)).map((e) => e.type);
      expect(events).to.deep.equal(['AppCreated', 'AppFilesChanged']);

      // Again, streamed: the scaffold is already there, so nothing is applied.
      const streamed = await fetch(`${svc.baseUrl}/apps/${app.id}/builder/chat`, { method: 'POST', headers: { ...owner.auth, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'again', stream: true }) });
      expect(streamed.status).to.equal(200);
      expect(streamed.headers.get('content-type')).to.match(/^text\/event-stream/);
      const frames = sseEvents(await streamed.text());
      expect(frames.map((f) => f.event)).to.deep.equal(['builder.started', 'builder.completed']);
      expect(frames.map((f) => f.id)).to.deep.equal(['1', '2']);
      expect(frames[1].data).to.deep.include({ success: true, provider: 'offline', written: [], version: 1 });

      // On a fresh app the stream reports the change.
      const other = await createApp(owner.auth, { name: 'Other', contract });
      const second = await fetch(`${svc.baseUrl}/apps/${other.id}/builder/chat`, { method: 'POST', headers: { ...owner.auth, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'go', stream: true }) });
      const secondFrames = sseEvents(await second.text());
      expect(secondFrames.map((f) => f.event)).to.deep.equal(['builder.started', 'files.applied', 'builder.completed']);
      expect(secondFrames[1].data).to.deep.equal({ written: ['index.html', 'app.js', 'style.css'], deleted: [], version: 1 });

      // An unknown app is a plain 404 even when streaming.
      expectError(await api('POST', '/apps/nope/builder/chat', owner.auth, { message: 'x', stream: true }), 404, 'APP_NOT_FOUND');
    });

    it('answers another tenant 404; in an organization viewers read and cannot write (403), editors write', async () => {
      const mine = await createApp(owner.auth, { name: 'Private', contract });
      for (const [method, path, body] of [
        ['GET', `/apps/${mine.id}`, undefined],
        ['PUT', `/apps/${mine.id}`, { name: 'x' }],
        ['DELETE', `/apps/${mine.id}`, undefined],
        ['GET', `/apps/${mine.id}/files`, undefined],
        ['PUT', `/apps/${mine.id}/files`, { files: [{ path: 'a.js', content: '1' }] }],
        ['POST', `/apps/${mine.id}/builder/chat`, { message: 'hi' }],
        ['GET', `/apps/${mine.id}/contract`, undefined],
        ['PUT', `/apps/${mine.id}/contract`, contract],
        ['POST', `/apps/${mine.id}/flow/create`, {}],
        ['DELETE', `/apps/${mine.id}/flow`, undefined],
        ['GET', `/apps/${mine.id}/versions`, undefined],
        ['POST', `/apps/${mine.id}/versions`, {}],
      ] as const) {
        expectError(await api(method, path, stranger.auth, body), 404, 'APP_NOT_FOUND');
      }
      expect((await api('GET', '/apps', stranger.auth)).body.items.map((i: { id: string }) => i.id)).to.not.include(mine.id);

      const boss = await registerUser(svc.baseUrl);
      const { org } = await createOrg(svc, boss);
      const editor = await addMember(svc, boss, org.id, 'editor');
      const viewer = await addMember(svc, boss, org.id, 'viewer');
      const inOrg = async (u: RegisteredUser) => bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, u.auth)).body.token);
      const [bossAuth, editorAuth, viewerAuth] = [await inOrg(boss), await inOrg(editor), await inOrg(viewer)];
      const shared = await createApp(bossAuth, { name: 'Team app' });
      expectError(await api('GET', `/apps/${shared.id}`, boss.auth), 404, 'APP_NOT_FOUND'); // the boss's personal workspace is another tenant
      expect((await api('GET', `/apps/${shared.id}`, viewerAuth)).status).to.equal(200);
      expect((await api('GET', `/apps/${shared.id}/files`, viewerAuth)).status).to.equal(200);
      expect((await api('GET', '/apps', viewerAuth)).body.items.map((i: { id: string }) => i.id)).to.deep.equal([shared.id]);
      for (const [method, path, body] of [
        ['POST', '/apps', { name: 'no' }],
        ['PUT', `/apps/${shared.id}`, { name: 'no' }],
        ['PUT', `/apps/${shared.id}/files`, { files: [{ path: 'a.js', content: '1' }] }],
        ['POST', `/apps/${shared.id}/builder/chat`, { message: 'hi' }],
        ['POST', `/apps/${shared.id}/versions`, {}],
        ['DELETE', `/apps/${shared.id}`, undefined],
      ] as const) {
        expectError(await api(method, path, viewerAuth, body), 403);
      }
      const written = await api('PUT', `/apps/${shared.id}/files`, editorAuth, { files: [{ path: 'index.html', content: '<p>team</p>' }] });
      expect(written.status, written.text).to.equal(200);
      expect((await api('GET', `/apps/${shared.id}`, bossAuth)).body.app.fileCount).to.equal(1);
    });
  });
}

describe('apps builder with a real provider (fake OpenAI over HTTP)', function () {
  this.timeout(120_000);
  let fake: FakeLlmServer;
  let svc: TestService;
  let owner: RegisteredUser;
  const api = (method: string, path: string, auth: Auth, body?: unknown) => call(svc.baseUrl, method, path, body, auth);

  before(async () => {
    fake = await startFakeOpenAi();
    svc = await startTestService('embedded', { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0' });
    owner = await registerUser(svc.baseUrl);
  });
  after(async () => {
    await svc?.stop();
    await fake?.close();
  });

  it('applies the model\'s file operations as one change, and refuses the whole change when one breaks a rule', async () => {
    const created = await api('POST', '/apps', owner.auth, { name: 'Edited', contract });
    const appId = created.body.app.id as string;
    await api('PUT', `/apps/${appId}/files`, owner.auth, { files: [{ path: 'old.css', content: 'a{}' }] });

    fake.toolCall = { name: 'edit_app_files', input: { reply: 'Added a heading and removed the old stylesheet.', write: [{ path: 'index.html', content: '<h1>Hi</h1>' }, { path: './js/app.js', content: 'go()' }], delete: ['old.css'] } };
    const res = await api('POST', `/apps/${appId}/builder/chat`, owner.auth, { message: 'add a heading' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({ provider: 'openai', reply: 'Added a heading and removed the old stylesheet.', written: ['index.html', 'js/app.js'], deleted: ['old.css'], version: 2 });
    expect(res.body.usage.totalTokens).to.be.greaterThan(0);
    const sent = fake.requests[fake.requests.length - 1].body;
    expect(sent.tools.map((t: any) => t.function.name)).to.deep.equal(['edit_app_files']);
    expect(JSON.stringify(sent.messages)).to.include('old.css').and.include('topic').and.include('add a heading');
    const files = await api('GET', `/apps/${appId}/files`, owner.auth);
    expect(files.body.files.map((f: any) => f.path)).to.deep.equal(['index.html', 'js/app.js']);

    fake.toolCall = { name: 'edit_app_files', input: { reply: 'oops', write: [{ path: 'ok.js', content: '1' }, { path: '../../etc/x.js', content: '2' }] } };
    const refused = await api('POST', `/apps/${appId}/builder/chat`, owner.auth, { message: 'break out' });
    expectError(refused, 400, 'APP_PATH_TRAVERSAL');
    expect(refused.body.error.details.path).to.equal('../../etc/x.js');
    expect((await api('GET', `/apps/${appId}`, owner.auth)).body.app.version, 'nothing written').to.equal(2);

    fake.toolCall = { name: 'edit_app_files', input: { reply: 'malformed', write: 'index.html' } };
    expectError(await api('POST', `/apps/${appId}/builder/chat`, owner.auth, { message: 'x' }), 422, 'BUILDER_ANSWER_INVALID');
  });
});
