import { expect } from 'chai';
import { call } from '../support/http.js';
import { TestClock } from '../support/clock.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg, expectError } from './orgs-support.js';
import { flowClient, transformNode } from './flows-support.js';
import { FakeLlmServer } from '../support/fake-llm/index.js';
import { openAiWire } from '../support/fake-llm/openai.js';

/** App instances over HTTP (issue 16, "App tools"): CRUD, data patches and their concurrency, files, playbook, conversation, linked flows, access. */
type Auth = Record<string, string>;
const card = (id: string, status = 'todo', title = `Card ${id}`) => ({ id, title, status, labels: [], assignee: null, due: null, order: 10 });
const board = (cards: unknown[] = []) => ({
  columns: [
    { id: 'todo', title: 'To do', order: 0 },
    { id: 'doing', title: 'In progress', order: 1 },
    { id: 'done', title: 'Done', order: 2 },
  ],
  cards,
});
const fieldsOf = (res: { body: any }) => (res.body?.error?.details?.fields ?? []).map((f: { field: string }) => f.field);

for (const mode of availableModes()) {
  describe(`app instances API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    const clock = new TestClock();
    let owner: RegisteredUser;
    let stranger: RegisteredUser;
    const api = (method: string, path: string, auth: Auth, body?: unknown, headers: Auth = {}) => call(svc.baseUrl, method, path, body, { ...auth, ...headers });
    const flows = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode, {}, { clock });
      owner = await registerUser(svc.baseUrl);
      stranger = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    async function create(auth: Auth, body: Record<string, unknown>) {
      const res = await api('POST', '/app-instances', auth, body);
      expect(res.status, res.text).to.equal(201);
      expect(res.headers.get('etag')).to.equal(`"${res.body.instance.version}"`);
      return res.body.instance as { id: string; version: number; data: any; [k: string]: any };
    }
    const patch = (auth: Auth, id: string, body: unknown, headers: Auth = {}) => api('PATCH', `/app-instances/${id}/data`, auth, body, headers);
    const jsonPatch = (auth: Auth, id: string, ops: unknown[], headers: Auth = {}) => patch(auth, id, ops, { 'content-type': 'application/json-patch+json', ...headers });

    it('creates with the type\'s initial data, lists by type with pages, gets with an ETag, replaces with If-Match and deletes', async () => {
      const kanban = await create(owner.auth, { type: 'kanban', name: 'Sprint board' });
      expect(kanban).to.deep.include({ type: 'kanban', name: 'Sprint board', appId: null, linkedFlowIds: [], files: [], conversation: [], version: 0 });
      expect(kanban.data).to.deep.equal(board());
      const jobs = await create(owner.auth, { type: 'job_tracker', name: 'Job hunt', data: { applications: [{ id: 'a1', company: 'ACME', position: 'Engineer', status: 'applied', appliedAt: '2026-01-31' }] } });
      expect(jobs.data.applications).to.have.length(1);
      const third = await create(owner.auth, { type: 'kanban', name: 'Another board' });

      const page1 = await api('GET', '/app-instances?type=kanban&limit=1', owner.auth);
      expect(page1.status, page1.text).to.equal(200);
      expect(page1.body.items).to.have.length(1);
      expect(page1.body.items[0]).to.not.have.property('data');
      const page2 = await api('GET', `/app-instances?type=kanban&limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`, owner.auth);
      expect([...page1.body.items, ...page2.body.items].map((i: { id: string }) => i.id).sort()).to.deep.equal([kanban.id, third.id].sort());
      const all = await api('GET', '/app-instances', owner.auth);
      expect(all.body.items.map((i: { id: string }) => i.id)).to.include.members([kanban.id, jobs.id, third.id]);
      expectError(await api('GET', '/app-instances?type=spreadsheet', owner.auth), 400, 'VALIDATION_FAILED');

      const got = await api('GET', `/app-instances/${jobs.id}`, owner.auth);
      expect(got.status, got.text).to.equal(200);
      expect(got.headers.get('etag')).to.equal('"0"');
      expect(got.body.instance.data).to.deep.equal(jobs.data);

      const replaced = await api('PUT', `/app-instances/${kanban.id}`, owner.auth, { name: 'Renamed', data: board([card('c1')]) }, { 'If-Match': '"0"' });
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.body.instance).to.deep.include({ name: 'Renamed', version: 1 });
      expect(replaced.headers.get('etag')).to.equal('"1"');
      expectError(await api('PUT', `/app-instances/${kanban.id}`, owner.auth, { name: 'Stale', data: board() }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      expectError(await api('PUT', `/app-instances/${kanban.id}`, owner.auth, { name: 'x', data: board() }, { 'If-Match': 'yesterday' }), 400, 'VALIDATION_FAILED');
      const badPut = await api('PUT', `/app-instances/${kanban.id}`, owner.auth, { name: 'x', data: board([card('c1', 'archive')]) });
      expectError(badPut, 400, 'DATA_SCHEMA_VIOLATION');
      expect(fieldsOf(badPut)).to.deep.equal(['data.cards.0.status']);

      const deleted = await api('DELETE', `/app-instances/${third.id}`, owner.auth);
      expect(deleted.status, deleted.text).to.equal(200);
      expectError(await api('GET', `/app-instances/${third.id}`, owner.auth), 404, 'APP_INSTANCE_NOT_FOUND');
      expectError(await patch(owner.auth, third.id, { settings: {} }), 404, 'APP_INSTANCE_NOT_FOUND');
      const after = await api('GET', '/app-instances?type=kanban', owner.auth);
      expect(after.body.items.map((i: { id: string }) => i.id)).to.not.include(third.id);
    });

    it('refuses bad input naming the field: unknown type, data against the schema, missing name', async () => {
      expectError(await api('POST', '/app-instances', owner.auth, { type: 'spreadsheet', name: 'x' }), 400, 'VALIDATION_FAILED');
      const missing = await api('POST', '/app-instances', owner.auth, { type: 'kanban' });
      expectError(missing, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(missing)).to.include('body.name');
      const wrong = await api('POST', '/app-instances', owner.auth, { type: 'kanban', name: 'x', data: board([{ ...card('c1'), title: 42 }]) });
      expectError(wrong, 400, 'DATA_SCHEMA_VIOLATION');
      expect(wrong.body.error.details.fields[0]).to.deep.include({ field: 'data.cards.0.title', pointer: '/cards/0/title' });
      const job = await api('POST', '/app-instances', owner.auth, { type: 'job_tracker', name: 'x', data: { applications: [{ id: 'a', company: 'ACME', position: 'Dev', status: 'hired' }] } });
      expectError(job, 400, 'DATA_SCHEMA_VIOLATION');
      expect(fieldsOf(job)).to.deep.equal(['data.applications.0.status']);
      expectError(await api('POST', '/app-instances', owner.auth, { type: 'kanban', name: 'x', linkedFlowIds: ['no-such-flow'] }), 404, 'FLOW_NOT_FOUND');
      // One write carries at most 768 KiB of data (under Kafka's 1 MiB message); a file at most 512 KiB.
      const big = await api('POST', '/app-instances', owner.auth, { type: 'kanban', name: 'big', data: { ...board(), settings: { blob: 'x'.repeat(800 * 1024) } } });
      expectError(big, 413, 'WRITE_TOO_LARGE');
      const inst = await create(owner.auth, { type: 'kanban', name: 'small' });
      const file = await api('POST', `/app-instances/${inst.id}/files`, owner.auth, { path: 'big.bin', content: Buffer.alloc(600 * 1024, 1).toString('base64') });
      expectError(file, 413, 'FILE_TOO_LARGE');
    });

    it('patches data by JSON Merge Patch (default) and JSON Patch (application/json-patch+json), checked against the schema', async () => {
      const inst = await create(owner.auth, { type: 'kanban', name: 'Patch me', data: board([card('a'), card('b')]) });
      const merged = await patch(owner.auth, inst.id, { settings: { color: 'blue' } }, { 'If-Match': '"0"' });
      expect(merged.status, merged.text).to.equal(200);
      expect(merged.body.instance.data.settings).to.deep.equal({ color: 'blue' });
      expect(merged.headers.get('etag')).to.equal('"1"');
      const viaMergeType = await patch(owner.auth, inst.id, { settings: null }, { 'content-type': 'application/merge-patch+json' });
      expect(viaMergeType.status, viaMergeType.text).to.equal(200);
      expect(viaMergeType.body.instance.data).to.not.have.property('settings');

      const moved = await jsonPatch(owner.auth, inst.id, [
        { op: 'test', path: '/cards/1/id', value: 'b' },
        { op: 'replace', path: '/cards/1/status', value: 'done' },
        { op: 'add', path: '/cards/-', value: card('c', 'doing') },
      ]);
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body.instance.data.cards.map((c: { id: string; status: string }) => `${c.id}:${c.status}`)).to.deep.equal(['a:todo', 'b:done', 'c:doing']);
      const version = moved.body.instance.version;

      const bad = await jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/cards/0/due', value: 'tomorrow' }]);
      expectError(bad, 400, 'DATA_SCHEMA_VIOLATION');
      expect(fieldsOf(bad)).to.deep.equal(['data.cards.0.due']);
      const badMerge = await patch(owner.auth, inst.id, { cards: [{ id: 'x', title: 'no status' }] });
      expectError(badMerge, 400, 'DATA_SCHEMA_VIOLATION');
      expect(fieldsOf(badMerge)).to.deep.equal(['data.cards.0.status']);
      expectError(await jsonPatch(owner.auth, inst.id, [{ op: 'test', path: '/cards/0/id', value: 'zzz' }]), 409, 'PATCH_TEST_FAILED');
      const unresolvable = await jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/nothing/there', value: 1 }]);
      expectError(unresolvable, 409, 'PATCH_CONFLICT');
      expectError(await jsonPatch(owner.auth, inst.id, [{ op: 'fly', path: '/cards' }]), 400, 'INVALID_PATCH');
      expectError(await patch(owner.auth, inst.id, [{ op: 'remove', path: '/cards/0' }]), 400, 'VALIDATION_FAILED');
      expectError(await jsonPatch(owner.auth, inst.id, { cards: [] } as never), 400, 'VALIDATION_FAILED');
      const unchanged = await api('GET', `/app-instances/${inst.id}`, owner.auth);
      expect(unchanged.body.instance.version, 'refused patches changed nothing').to.equal(version);
      const noop = await patch(owner.auth, inst.id, {});
      expect(noop.status).to.equal(200);
      expect(noop.body.instance.version).to.equal(version);
    });

    it('concurrent patches to different fields both land (also with the same If-Match); to the same field the second gets 412', async () => {
      const inst = await create(owner.auth, { type: 'kanban', name: 'Race', data: board([card('a'), card('b'), card('c')]) });
      // Different cards, both from version 0, sent at once.
      const [one, two] = await Promise.all([
        jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/cards/0/title', value: 'A!' }], { 'If-Match': '"0"' }),
        jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/cards/1/title', value: 'B!' }], { 'If-Match': '"0"' }),
      ]);
      expect([one.status, two.status], `${one.text} ${two.text}`).to.deep.equal([200, 200]);
      let now = (await api('GET', `/app-instances/${inst.id}`, owner.auth)).body.instance;
      expect(now.data.cards.map((c: { title: string }) => c.title)).to.deep.equal(['A!', 'B!', 'Card c']);
      expect(now.version).to.equal(2);

      // The same field from the same version: the first lands, the second is 412 naming the place.
      const first = await patch(owner.auth, inst.id, { settings: { owner: 'ana' } }, { 'If-Match': '"2"' });
      expect(first.status, first.text).to.equal(200);
      const second = await patch(owner.auth, inst.id, { settings: { owner: 'bob' } }, { 'If-Match': '"2"' });
      expectError(second, 412, 'PRECONDITION_FAILED');
      expect(second.body.error.details.conflicts[0]).to.deep.equal({ path: '/settings/owner', changedPath: '/settings' });
      // Sent at once: exactly one wins.
      const [x, y] = await Promise.all([
        jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/cards/2/title', value: 'X' }], { 'If-Match': '"3"' }),
        jsonPatch(owner.auth, inst.id, [{ op: 'replace', path: '/cards/2/title', value: 'Y' }], { 'If-Match': '"3"' }),
      ]);
      expect([x.status, y.status].sort(), `${x.text} ${y.text}`).to.deep.equal([200, 412]);

      // Without If-Match every patch lands, each applied to the data the one before left.
      const adds = await Promise.all(Array.from({ length: 6 }, (_, i) => jsonPatch(owner.auth, inst.id, [{ op: 'add', path: '/cards/-', value: card(`n${i}`) }])));
      expect(adds.map((r) => r.status), adds.map((r) => r.text).join('\n')).to.deep.equal([200, 200, 200, 200, 200, 200]);
      now = (await api('GET', `/app-instances/${inst.id}`, owner.auth)).body.instance;
      expect(now.data.cards.map((c: { id: string }) => c.id).filter((id: string) => id.startsWith('n')).sort()).to.deep.equal(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    });

    it('keeps a conversation, lists linked flows with their last run, and writes an offline playbook', async () => {
      const flowId = await flows.newFlow(owner);
      await flows.addNode(owner, flowId, transformNode());
      const inst = await create(owner.auth, { type: 'kanban', name: 'Ops board', linkedFlowIds: [flowId] });
      const linked = await api('GET', `/app-instances/${inst.id}/flows`, owner.auth);
      expect(linked.status, linked.text).to.equal(200);
      expect(linked.body.items).to.have.length(1);
      expect(linked.body.items[0]).to.deep.include({ flowId, found: true, lastRun: null });
      const run = await api('POST', `/flows/${flowId}/run`, owner.auth, { inputs: { x: 1 } });
      expect(run.status, run.text).to.equal(200);
      // The last run comes from the runs' read model, which may trail the run's answer.
      const after = await waitUntil('the run in the read model', async () => {
        const listed = await api('GET', `/app-instances/${inst.id}/flows`, owner.auth);
        return listed.body.items?.[0]?.lastRun?.status === 'completed' ? listed : null;
      });
      expect(after.body.items[0].lastRun).to.deep.include({ processId: run.body.processId, status: 'completed' });

      const msg = await api('POST', `/app-instances/${inst.id}/messages`, owner.auth, { role: 'user', content: 'Please triage the new cards' });
      expect(msg.status, msg.text).to.equal(201);
      expect(msg.body.message).to.deep.include({ role: 'user', content: 'Please triage the new cards', by: owner.user.id });
      expectError(await api('POST', `/app-instances/${inst.id}/messages`, owner.auth, { role: 'robot', content: 'x' }), 400, 'VALIDATION_FAILED');
      const got = await api('GET', `/app-instances/${inst.id}`, owner.auth);
      expect(got.body.instance.conversation.map((m: { content: string }) => m.content)).to.deep.equal(['Please triage the new cards']);

      const book = await api('POST', `/app-instances/${inst.id}/playbook`, owner.auth, { provider: 'offline' });
      expect(book.status, book.text).to.equal(200);
      expect(book.body.playbook).to.deep.include({ provider: 'offline', offline: true });
      expect(book.body.playbook.markdown).to.match(/^# Playbook: Ops board/);
      expect(book.body.playbook.markdown).to.include(flowId);
      const again = await api('POST', `/app-instances/${inst.id}/playbook`, owner.auth, {});
      expect(again.body.playbook.markdown, 'no provider configured: the same template').to.equal(book.body.playbook.markdown);
    });

    it('uploads files, serves them through signed URLs that expire (403 URL_EXPIRED) and re-signs them', async () => {
      const inst = await create(owner.auth, { type: 'job_tracker', name: 'With files' });
      const content = Buffer.from('name,company\nAna,ACME\n');
      const up = await api('POST', `/app-instances/${inst.id}/files`, owner.auth, { path: 'exports/list.csv', content: content.toString('base64'), contentType: 'text/csv' });
      expect(up.status, up.text).to.equal(201);
      expect(up.body.file).to.deep.include({ path: 'exports/list.csv', size: content.length, contentType: 'text/csv' });
      const origin = new URL(svc.baseUrl).origin;
      const fetchUrl = (url: string) => fetch(new URL(url, origin));
      const first = await fetchUrl(up.body.file.url);
      expect(first.status).to.equal(200);
      expect(Buffer.from(await first.arrayBuffer()).equals(content)).to.equal(true);

      expectError(await api('POST', `/app-instances/${inst.id}/files`, owner.auth, { path: '../escape.txt', content: 'aGk=' }), 400, 'INVALID_FILE_PATH');
      expectError(await api('POST', `/app-instances/${inst.id}/files`, owner.auth, { path: 'a\\b.txt', content: 'aGk=' }), 400, 'INVALID_FILE_PATH');
      expectError(await api('POST', `/app-instances/${inst.id}/files`, owner.auth, { path: 'x.txt', content: 'not base64!' }), 400, 'VALIDATION_FAILED');

      const signed = await api('POST', `/app-instances/${inst.id}/files/re-sign`, owner.auth, { paths: ['exports/list.csv'], expiresInSeconds: 60 });
      expect(signed.status, signed.text).to.equal(200);
      expect(signed.body.files).to.have.length(1);
      const url = signed.body.files[0].url as string;
      expect((await fetchUrl(url)).status).to.equal(200);
      clock.advance(61_000);
      const expired = await fetchUrl(url);
      expect(expired.status).to.equal(403);
      expect(((await expired.json()) as any).error.code).to.equal('URL_EXPIRED');
      const fresh = await api('POST', `/app-instances/${inst.id}/files/re-sign`, owner.auth, {});
      expect(fresh.status, fresh.text).to.equal(200);
      expect(fresh.body.files.map((f: { path: string }) => f.path)).to.deep.equal(['exports/list.csv']);
      const again = await fetchUrl(fresh.body.files[0].url);
      expect(again.status).to.equal(200);
      expect(Buffer.from(await again.arrayBuffer()).equals(content)).to.equal(true);
      expectError(await api('POST', `/app-instances/${inst.id}/files/re-sign`, owner.auth, { paths: ['nope.txt'] }), 404, 'FILE_NOT_FOUND');

      const got = await api('GET', `/app-instances/${inst.id}`, owner.auth);
      expect(got.body.instance.files.map((f: { path: string }) => f.path)).to.deep.equal(['exports/list.csv']);
      expect(got.body.instance.files[0]).to.not.have.property('key');
      const removed = await api('DELETE', `/app-instances/${inst.id}/files?path=${encodeURIComponent('exports/list.csv')}`, owner.auth);
      expect(removed.status, removed.text).to.equal(200);
      expect((await fetchUrl(fresh.body.files[0].url)).status, 'the object is gone with the file').to.equal(404);
    });

    it('answers another tenant 404; in an organization viewers read and editors write', async () => {
      const mine = await create(owner.auth, { type: 'kanban', name: 'Private' });
      for (const [method, path, body] of [
        ['GET', `/app-instances/${mine.id}`, undefined],
        ['PUT', `/app-instances/${mine.id}`, { name: 'x', data: board() }],
        ['PATCH', `/app-instances/${mine.id}/data`, { settings: {} }],
        ['DELETE', `/app-instances/${mine.id}`, undefined],
        ['POST', `/app-instances/${mine.id}/playbook`, {}],
        ['POST', `/app-instances/${mine.id}/files/re-sign`, {}],
        ['POST', `/app-instances/${mine.id}/messages`, { role: 'user', content: 'hi' }],
        ['GET', `/app-instances/${mine.id}/flows`, undefined],
      ] as const) {
        expectError(await api(method, path, stranger.auth, body), 404, 'APP_INSTANCE_NOT_FOUND');
      }
      expect((await api('GET', '/app-instances', stranger.auth)).body.items.map((i: { id: string }) => i.id)).to.not.include(mine.id);

      const boss = await registerUser(svc.baseUrl);
      const { org } = await createOrg(svc, boss);
      const editor = await addMember(svc, boss, org.id, 'editor');
      const viewer = await addMember(svc, boss, org.id, 'viewer');
      const inOrg = async (u: RegisteredUser) => bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, u.auth)).body.token);
      const [bossAuth, editorAuth, viewerAuth] = [await inOrg(boss), await inOrg(editor), await inOrg(viewer)];
      const shared = await create(bossAuth, { type: 'kanban', name: 'Team board' });
      expectError(await api('GET', `/app-instances/${shared.id}`, owner.auth), 404, 'APP_INSTANCE_NOT_FOUND');
      expectError(await api('GET', `/app-instances/${shared.id}`, boss.auth), 404, 'APP_INSTANCE_NOT_FOUND'); // the boss's personal workspace is another tenant

      expect((await api('GET', `/app-instances/${shared.id}`, viewerAuth)).status).to.equal(200);
      expect((await api('GET', '/app-instances', viewerAuth)).body.items.map((i: { id: string }) => i.id)).to.deep.equal([shared.id]);
      expect((await api('POST', `/app-instances/${shared.id}/playbook`, viewerAuth, {})).status).to.equal(200);
      expect((await api('POST', `/app-instances/${shared.id}/files/re-sign`, viewerAuth, {})).status).to.equal(200);
      expect((await api('GET', `/app-instances/${shared.id}/flows`, viewerAuth)).status).to.equal(200);
      expectError(await api('POST', '/app-instances', viewerAuth, { type: 'kanban', name: 'nope' }), 403, 'FORBIDDEN');
      expectError(await patch(viewerAuth, shared.id, { settings: {} }), 403, 'FORBIDDEN');
      expectError(await api('PUT', `/app-instances/${shared.id}`, viewerAuth, { name: 'x', data: board() }), 403, 'FORBIDDEN');
      expectError(await api('DELETE', `/app-instances/${shared.id}`, viewerAuth), 403, 'FORBIDDEN');
      expectError(await api('POST', `/app-instances/${shared.id}/messages`, viewerAuth, { role: 'user', content: 'hi' }), 403, 'FORBIDDEN');
      expectError(await api('POST', `/app-instances/${shared.id}/files`, viewerAuth, { path: 'a.txt', content: 'aGk=' }), 403, 'FORBIDDEN');

      const edited = await jsonPatch(editorAuth, shared.id, [{ op: 'add', path: '/cards/-', value: card('e1') }]);
      expect(edited.status, edited.text).to.equal(200);
      expect((await api('POST', `/app-instances/${shared.id}/messages`, editorAuth, { role: 'assistant', content: 'added e1' })).status).to.equal(201);
      const seen = await api('GET', `/app-instances/${shared.id}`, viewerAuth);
      expect(seen.body.instance.data.cards.map((c: { id: string }) => c.id)).to.deep.equal(['e1']);
    });
  });
}

describe('app instances API: the playbook written by a configured provider (OpenAI wire, local fake)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let fake: FakeLlmServer;
  before(async () => {
    fake = await new FakeLlmServer(openAiWire).start();
    svc = await startTestService('embedded', { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0' });
  });
  after(async () => {
    await svc?.stop();
    await fake?.close();
  });

  it('asks the first configured provider with the instance\'s facts and answers its markdown; offline still gives the template', async () => {
    const user = await registerUser(svc.baseUrl);
    const created = await call(svc.baseUrl, 'POST', '/app-instances', { type: 'job_tracker', name: 'Hunt 2026' }, user.auth);
    expect(created.status, created.text).to.equal(201);
    const id = created.body.instance.id;
    fake.text = '# Playbook\n\nKeep the tracker current.';
    const res = await call(svc.baseUrl, 'POST', `/app-instances/${id}/playbook`, {}, user.auth);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.playbook).to.deep.include({ provider: 'openai', offline: false, markdown: '# Playbook\n\nKeep the tracker current.' });
    expect(res.body.playbook.usage.totalTokens).to.be.greaterThan(0);
    const asked = fake.requestsTo('/chat/completions');
    expect(asked).to.have.length(1);
    const prompt = JSON.stringify(asked[0].body.messages);
    expect(prompt).to.include('Hunt 2026').and.to.include('JobApplication');
    const offline = await call(svc.baseUrl, 'POST', `/app-instances/${id}/playbook`, { provider: 'offline' }, user.auth);
    expect(offline.body.playbook).to.deep.include({ provider: 'offline', offline: true });
    expect(fake.requestsTo('/chat/completions'), 'the offline template asks no model').to.have.length(1);
  });
});
