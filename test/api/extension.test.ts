import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { call, checkResponse } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { corruptPdf, encryptedPdf, imageOnlyPdf, notAPdf, textPdf } from '../support/extension-pdfs.js';
import { expectError, flowClient } from './flows-support.js';
import { addMember, bearer, createOrg } from './orgs-support.js';
import { startFakeOpenAi } from '../support/fake-llm/index.js';

/** The web extension over real HTTP: pages through flows, direct AI, PDFs, chats (issue 15). */

const offlineLlm = (prompt: string) => ({ type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt } });
const pageSchema = { type: 'object', properties: { url: { type: 'string' }, text: { type: 'string' } } };

/** POST multipart with fetch (FormData), the answer checked against the OpenAPI document like `call`. */
async function postForm(baseUrl: string, path: string, parts: Record<string, string | { bytes: Uint8Array; name: string; type?: string }>, headers: Record<string, string>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value.bytes as Uint8Array<ArrayBuffer>], { type: value.type ?? 'application/pdf' }), value.name);
  }
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', body: form, headers });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  checkResponse('POST', `${baseUrl}${path}`, res.status, res.headers.get('content-type'), text, body);
  return { status: res.status, body, text, headers: res.headers };
}

/** The frames of a text/event-stream answer. */
function sseEvents(text: string): Array<{ event: string; id: string | null; data: any }> {
  return text
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.some((l) => l.startsWith('event: ')))
    .map((lines) => ({
      event: lines.find((l) => l.startsWith('event: '))!.slice(7),
      id: lines.find((l) => l.startsWith('id: '))?.slice(4) ?? null,
      data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)),
    }));
}

for (const mode of availableModes()) {
  describe(`web extension API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    // Chats are listed by creation time: the test moves this clock between creations instead of sleeping.
    const clock = new TestClock();
    const client = flowClient(() => svc);
    const as = (u: RegisteredUser, method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, u.auth);

    before(async () => {
      // 2 MiB of HTML inside JSON needs a request body larger than the 1 MiB default.
      svc = await startTestService(mode, {}, { clock });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    async function extensionFlow(user: RegisteredUser, prompt = 'Title: {{inputs.title}} Text: {{inputs.text}}') {
      const flowId = await client.newFlow(user);
      const node = await client.addNode(user, flowId, offlineLlm(prompt));
      const trig = await as(user, 'PUT', `/flows/${flowId}/trigger`, { enabled: true, inputSchema: pageSchema });
      expect(trig.status, trig.text).to.equal(200);
      return { flowId, nodeId: node.id as string };
    }

    describe('pages through flows', () => {
      it('GET /extension/flows lists only flows with a trigger input schema, with the schema; not another tenant\'s', async () => {
        const { flowId } = await extensionFlow(owner);
        const plain = await client.newFlow(owner);
        await extensionFlow(other);
        const res = await waitUntil('flow listed', async () => {
          const r = await as(owner, 'GET', '/extension/flows?limit=100');
          return r.status === 200 && r.body.items.some((f: { flowId: string }) => f.flowId === flowId) ? r : null;
        });
        const mine = res.body.items.find((f: { flowId: string }) => f.flowId === flowId);
        expect(mine.inputSchema).to.deep.equal(pageSchema);
        expect(res.body.items.map((f: { flowId: string }) => f.flowId)).to.not.include(plain);
        const others = await as(other, 'GET', '/extension/flows');
        expect(others.body.items.map((f: { flowId: string }) => f.flowId)).to.not.include(flowId);
        expectError(await call(svc.baseUrl, 'GET', '/extension/flows'), 401);
      });

      it('POST /extension/process (sync): hostile HTML is read as text, scripts never run nor reach the flow; the process is readable, not by another tenant', async () => {
        const { flowId, nodeId } = await extensionFlow(owner);
        (globalThis as { pwned?: number }).pwned = undefined;
        const html = `<!doctype html><html><head><title>Hostile page</title><script>globalThis.pwned = 1; SECRET_SCRIPT_TEXT</script>
          <style>.x{color:red} STYLE_TEXT</style></head><body onload="globalThis.pwned = 2">
          <nav>menu menu</nav><article><h1>Real heading</h1><p>${'This is the article body that matters. '.repeat(20)}</p>
          <img src="x" onerror="globalThis.pwned = 3"><iframe srcdoc="<script>globalThis.pwned=4</script>IFRAME_TEXT"></iframe>
          <a href="javascript:globalThis.pwned=5">link</a></article></body></html>`;
        const res = await as(owner, 'POST', '/extension/process', { flowId, data: { url: 'https://example.com/a', html, meta: { lang: 'en' } } });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.status).to.equal('completed');
        expect(res.body.source).to.equal('web-extension');
        expect(res.body.page).to.deep.include({ textSource: 'html', truncated: false });
        const output = res.body.nodes.find((n: { nodeId: string }) => n.nodeId === nodeId).output as string;
        expect(output).to.include('This is the article body that matters.');
        expect(output).to.include('Title: Hostile page');
        for (const leaked of ['SECRET_SCRIPT_TEXT', 'STYLE_TEXT', 'IFRAME_TEXT', 'pwned']) expect(output).to.not.include(leaked);
        expect((globalThis as { pwned?: number }).pwned).to.equal(undefined);

        const proc = await as(owner, 'GET', `/extension/processes/${res.body.processId}`);
        expect(proc.status, proc.text).to.equal(200);
        expect(proc.body.process.status).to.equal('completed');
        expect(proc.body.process.nodes[0]).to.include({ nodeId, status: 'completed' });
        expectError(await as(other, 'GET', `/extension/processes/${res.body.processId}`), 404, 'PROCESS_NOT_FOUND');
        expectError(await as(owner, 'GET', `/extension/processes/${randomUUID()}`), 404, 'PROCESS_NOT_FOUND');
      });

      it('POST /extension/process (async) answers 202 with processId; the status is polled to completion; given text wins over HTML', async () => {
        const { flowId, nodeId } = await extensionFlow(owner);
        const res = await as(owner, 'POST', '/extension/process', { flowId, async: true, data: { title: 'T', text: 'given text here', html: '<p>html text</p>' } });
        expect(res.status, res.text).to.equal(202);
        expect(res.body.processId).to.be.a('string');
        const done = await waitUntil('process completed', async () => {
          const r = await as(owner, 'GET', `/extension/processes/${res.body.processId}`);
          return r.status === 200 && r.body.process.status === 'completed' ? r : null;
        }, 30_000);
        expect(done.body.process.nodes.find((n: { nodeId: string }) => n.nodeId === nodeId).output).to.equal('Title: T Text: given text here');
      });

      it('hostile HTML: 100,000 nested elements are answered quickly; over 2 MiB is 413 HTML_TOO_LARGE; text over 200,000 characters is 413 TEXT_TOO_LARGE; another tenant\'s flow 404', async () => {
        const { flowId, nodeId } = await extensionFlow(owner);
        // 1.2 MB: above the global BODY_LIMIT_BYTES (1 MiB), within the route's own limit for page HTML.
        const deep = `<html><body>${'<div><span>'.repeat(50_000)}DEEP_TEXT${'</span></div>'.repeat(50_000)}</body></html>`;
        const started = Date.now();
        const res = await as(owner, 'POST', '/extension/process', { flowId, data: { html: deep } });
        expect(res.status, res.text).to.equal(200);
        expect(Date.now() - started, 'bounded time').to.be.below(20_000);
        expect(res.body.nodes.find((n: { nodeId: string }) => n.nodeId === nodeId).output).to.include('DEEP_TEXT');

        const big = `<html><body>${'<p>x</p>'.repeat(300_000)}</body></html>`; // 2.4 MB
        await client.refusedWithoutEvents(() => as(owner, 'POST', '/extension/process', { flowId, data: { html: big } }), 413, 'HTML_TOO_LARGE');
        await client.refusedWithoutEvents(() => as(owner, 'POST', '/extension/process', { flowId, data: { text: 'y'.repeat(200_001) } }), 413, 'TEXT_TOO_LARGE');
        expectError(await as(other, 'POST', '/extension/process', { flowId, data: { text: 'hi' } }), 404, 'FLOW_NOT_FOUND');
        expectError(await as(owner, 'POST', '/extension/process', { flowId, data: { unknown: 1 } }), 400, 'VALIDATION_FAILED');
      });
    });

    describe('direct AI', () => {
      it('GET /extension/models: default and allowed (offline unless configured)', async () => {
        const res = await as(owner, 'GET', '/extension/models');
        expect(res.status, res.text).to.equal(200);
        expect(res.body.default).to.deep.equal({ provider: 'offline', model: 'offline' });
        expect(res.body.allowed).to.deep.include({ provider: 'offline', model: 'offline' });
      });

      it("an organization's settings choose the default and the allowed list for its members; only manage_settings may change them", async () => {
        const admin = await registerUser(svc.baseUrl);
        const { org } = await createOrg(svc, admin);
        const inOrg = { ...admin, auth: bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, admin.auth)).body.token) };
        expectError(await as(admin, 'GET', '/extension/settings'), 403, 'NO_ACTIVE_ORGANIZATION');
        const before = await as(inOrg, 'GET', '/extension/settings');
        expect(before.status, before.text).to.equal(200);
        expect(before.body.settings).to.deep.include({ orgId: org.id, defaultModel: null, allowedModels: null });
        expectError(await as(inOrg, 'PUT', '/extension/settings', { defaultModel: 'openai:no-such-model', allowedModels: null }), 400, 'UNKNOWN_MODEL');
        expectError(await as(inOrg, 'PUT', '/extension/settings', { defaultModel: 'openai:gpt-4o-mini', allowedModels: ['offline:offline'] }), 400, 'DEFAULT_MODEL_NOT_ALLOWED');
        const put = await as(inOrg, 'PUT', '/extension/settings', { defaultModel: 'offline:offline', allowedModels: ['offline:offline', 'openai:gpt-4o-mini'] });
        expect(put.status, put.text).to.equal(200);
        expect(put.body.settings).to.deep.include({ defaultModel: 'offline:offline', allowedModels: ['offline:offline', 'openai:gpt-4o-mini'], updatedBy: admin.user.id });

        const viewer = await addMember(svc, admin, org.id, 'viewer');
        const viewerInOrg = { ...viewer, auth: bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, viewer.auth)).body.token) };
        const models = await as(viewerInOrg, 'GET', '/extension/models');
        expect(models.body).to.deep.include({ source: 'organization', default: { provider: 'offline', model: 'offline' } });
        expect(models.body.allowed).to.deep.equal([{ provider: 'offline', model: 'offline' }, { provider: 'openai', model: 'gpt-4o-mini' }]);
        expectError(await as(viewerInOrg, 'PUT', '/extension/settings', { defaultModel: null, allowedModels: null }), 403);
        // Outside the organization the service's list applies.
        expect((await as(viewer, 'GET', '/extension/models')).body.source).to.equal('catalogue');
      });

      it('POST /extension/ai answers JSON; with stream: true an event stream meta → delta → done; a model not allowed is 400', async () => {
        const res = await as(owner, 'POST', '/extension/ai', { prompt: 'What is this page about?', context: { url: 'https://e.x', title: 'Page', text: 'Some page text' } });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.output).to.equal('What is this page about?');
        expect(res.body.model.provider).to.equal('offline');
        expect(res.body.context).to.deep.include({ chars: 14, usedChars: 14, truncated: false });

        const streamed = await fetch(`${svc.baseUrl}/extension/ai`, { method: 'POST', headers: { ...owner.auth, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'stream me please', stream: true }) });
        expect(streamed.status).to.equal(200);
        expect(streamed.headers.get('content-type')).to.match(/^text\/event-stream/);
        const events = sseEvents(await streamed.text()).filter((e) => e.event !== 'ping');
        expect(events.map((e) => e.event)).to.deep.equal(['meta', 'delta', 'done']);
        expect(events.map((e) => e.id)).to.deep.equal(['1', '2', '3']);
        expect(events[1]!.data.text).to.equal('stream me please');
        expect(events[2]!.data.output).to.equal('stream me please');

        expectError(await as(owner, 'POST', '/extension/ai', { prompt: 'x', model: 'openai:gpt-4o' }), 400, 'MODEL_NOT_ALLOWED');
        expectError(await as(owner, 'POST', '/extension/ai', { prompt: 'x', model: 'nonsense' }), 400, 'INVALID_MODEL');
        expectError(await as(owner, 'POST', '/extension/ai', { prompt: '' }), 400, 'VALIDATION_FAILED');
        expectError(await call(svc.baseUrl, 'POST', '/extension/ai', { prompt: 'x' }), 401);
      });

      it('POST /extension/ai/pdf reads a multi-page PDF page by page and says how much of it was used', async () => {
        const res = await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes: await textPdf(7), name: 'doc.pdf' }, prompt: 'Summarise the document' }, owner.auth);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.output).to.equal('Summarise the document');
        expect(res.body.document).to.deep.include({ pageCount: 7, pagesUsed: 7, truncated: false });
        expect(res.body.document.chars).to.be.above(7 * 100);
      });

      it("POST /extension/ai/pdf cuts a long PDF to the model's context (300 pages accepted, 301 refused)", async () => {
        const long = await textPdf(300, { linesPerPage: 12 });
        const res = await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes: long, name: 'long.pdf' }, prompt: 'What is on the last page?' }, owner.auth);
        expect(res.status, res.text).to.equal(200);
        const doc = res.body.document;
        expect(doc.pageCount).to.equal(300);
        expect(doc.truncated).to.equal(true);
        expect(doc.pagesUsed).to.be.below(300);
        expect(doc.chars).to.be.at.most(doc.contextChars);
        expect(doc.contextTokens).to.equal(32_000);
        const tooMany = await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes: await textPdf(301, { linesPerPage: 0 }), name: 'x.pdf' }, prompt: 'q' }, owner.auth);
        expectError(tooMany as never, 413, 'PDF_TOO_MANY_PAGES');
      });

      it('POST /extension/ai/pdf: encrypted, corrupt, not-a-PDF and image-only PDFs are 400 PDF_UNREADABLE with the reason', async () => {
        const cases: Array<[string, Uint8Array, string]> = [
          ['encrypted', await encryptedPdf(), 'encrypted'],
          ['corrupt', await corruptPdf(), 'corrupt'],
          ['not a pdf', notAPdf(), 'corrupt'],
          ['image only', await imageOnlyPdf(3), 'no_text'],
        ];
        for (const [what, bytes, reason] of cases) {
          const res = await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes, name: `${what}.pdf` }, prompt: 'q' }, owner.auth);
          expectError(res as never, 400, 'PDF_UNREADABLE');
          expect(res.body.error.details.reason, what).to.equal(reason);
        }
      });

      it('POST /extension/ai/pdf: over 20 MiB is 413 FILE_TOO_LARGE while streaming; no file or no prompt is 400; JSON is 415', async () => {
        const huge = new Uint8Array(20 * 1024 * 1024 + 1024);
        huge.set(Buffer.from('%PDF-1.7\n'));
        const res = await postForm(svc.baseUrl, '/extension/ai/pdf', { prompt: 'q', file: { bytes: huge, name: 'huge.pdf' } }, owner.auth);
        expectError(res as never, 413, 'FILE_TOO_LARGE');
        expectError((await postForm(svc.baseUrl, '/extension/ai/pdf', { prompt: 'q' }, owner.auth)) as never, 400, 'VALIDATION_FAILED', 'body.file');
        expectError((await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes: await textPdf(1), name: 'a.pdf' } }, owner.auth)) as never, 400, 'VALIDATION_FAILED', 'body.prompt');
        expect((await as(owner, 'POST', '/extension/ai/pdf', { prompt: 'q' })).status).to.equal(415);
      });
    });

    describe('chats', () => {
      const messages = (n: number, first = 'Plan a weekend trip to the mountains with friends please') =>
        Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: i === 0 ? first : `message ${i}` }));

      it('create, replace 50 messages (title generated as its own event), 51 refused with nothing changed, versions read back', async () => {
        const created = await as(owner, 'POST', '/extension/chats', {});
        expect(created.status, created.text).to.equal(201);
        const chat = created.body.chat;
        expect(chat).to.deep.include({ source: 'web-extension', title: 'New chat', version: 1, messageCount: 0 });
        expect(chat.messages).to.deep.equal([]);

        const put = await as(owner, 'PUT', `/extension/chats/${chat.chatId}/messages`, { messages: messages(50) });
        expect(put.status, put.text).to.equal(200);
        expect(put.body.chat).to.deep.include({ version: 2, messageCount: 50, title: 'Plan a weekend trip to the' });
        const events = await svc.services.eventStore.readStream(`extchat-${chat.chatId}`);
        expect(events.map((e) => e.type)).to.deep.equal(['ExtensionChatCreated', 'ExtensionChatMessagesReplaced', 'ExtensionChatTitleGenerated']);
        expect(events[2]!.data).to.deep.include({ provider: 'offline', fromVersion: 2 });

        const head = await svc.services.eventStore.headPosition();
        const refused = await as(owner, 'PUT', `/extension/chats/${chat.chatId}/messages`, { messages: messages(51, 'other first words') });
        expectError(refused, 400, 'TOO_MANY_MESSAGES');
        expect(refused.body.error.details).to.deep.include({ count: 51, max: 50 });
        expect(await svc.services.eventStore.headPosition()).to.equal(head);
        const after = await as(owner, 'GET', `/extension/chats/${chat.chatId}`);
        expect(after.body.chat).to.deep.include({ version: 2, messageCount: 50 });
        expect(after.body.chat.messages[0].content).to.equal(messages(1)[0]!.content);

        // A later replacement keeps the generated title (no longer the default).
        const again = await as(owner, 'PUT', `/extension/chats/${chat.chatId}/messages`, { messages: [{ role: 'user', content: 'something else entirely', createdAt: '2026-01-01T00:00:00Z' }] });
        expect(again.body.chat).to.deep.include({ version: 3, title: 'Plan a weekend trip to the' });
        expect(again.body.chat.messages).to.deep.equal([{ role: 'user', content: 'something else entirely', createdAt: '2026-01-01T00:00:00Z' }]);

        const v1 = await as(owner, 'GET', `/extension/chats/${chat.chatId}/versions/1`);
        expect(v1.status, v1.text).to.equal(200);
        expect(v1.body).to.deep.include({ version: 1, latestVersion: 3, title: 'New chat' });
        expect(v1.body.messages).to.deep.equal([]);
        const v2 = await as(owner, 'GET', `/extension/chats/${chat.chatId}/versions/2`);
        expect(v2.body.messages).to.have.length(50);
        expect(v2.body.title).to.equal('Plan a weekend trip to the');
        expectError(await as(owner, 'GET', `/extension/chats/${chat.chatId}/versions/4`), 404, 'CHAT_VERSION_NOT_FOUND');
      });

      it('a renamed chat keeps its name; created with messages, a title is generated at once', async () => {
        const created = await as(owner, 'POST', '/extension/chats', { messages: messages(2, 'Explain quantum tunnelling simply') });
        expect(created.status, created.text).to.equal(201);
        expect(created.body.chat.title).to.equal('Explain quantum tunnelling simply');
        const named = await as(owner, 'POST', '/extension/chats', { title: 'Mine' });
        const renamed = await as(owner, 'PATCH', `/extension/chats/${named.body.chat.chatId}`, { title: 'Renamed' });
        expect(renamed.status, renamed.text).to.equal(200);
        expect(renamed.body.chat.title).to.equal('Renamed');
        const put = await as(owner, 'PUT', `/extension/chats/${named.body.chat.chatId}/messages`, { messages: messages(3) });
        expect(put.body.chat.title).to.equal('Renamed');
        expectError(await as(owner, 'PATCH', `/extension/chats/${named.body.chat.chatId}`, { title: '' }), 400, 'VALIDATION_FAILED');
      });

      it("the same user in another tenant (an organization vs the personal workspace) does not see the other's chats", async () => {
        const user = await registerUser(svc.baseUrl);
        const personal = await as(user, 'POST', '/extension/chats', { title: 'personal' });
        const { org } = await createOrg(svc, user);
        const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, user.auth);
        expect(switched.status, switched.text).to.equal(200);
        const inOrg = { ...user, auth: bearer(switched.body.token) };
        expectError(await as(inOrg, 'GET', `/extension/chats/${personal.body.chat.chatId}`), 404, 'CHAT_NOT_FOUND');
        const orgChat = await as(inOrg, 'POST', '/extension/chats', { title: 'org' });
        expect((await as(inOrg, 'GET', '/extension/chats')).body.items.map((c: { chatId: string }) => c.chatId)).to.deep.equal([orgChat.body.chat.chatId]);
        expect((await as(user, 'GET', '/extension/chats')).body.items.map((c: { chatId: string }) => c.chatId)).to.deep.equal([personal.body.chat.chatId]);
        expectError(await as(user, 'GET', `/extension/chats/${orgChat.body.chat.chatId}`), 404, 'CHAT_NOT_FOUND');
      });

      it('list newest first, paginated; another user (or tenant) gets 404 everywhere; delete', async () => {
        const user = await registerUser(svc.baseUrl);
        const ids: string[] = [];
        for (let i = 0; i < 3; i += 1) {
          const r = await as(user, 'POST', '/extension/chats', { title: `chat ${i}` });
          ids.push(r.body.chat.chatId);
          clock.advance(10);
        }
        const first = await as(user, 'GET', '/extension/chats?limit=2');
        expect(first.status, first.text).to.equal(200);
        expect(first.body.items.map((c: { chatId: string }) => c.chatId)).to.deep.equal([ids[2], ids[1]]);
        expect(first.body.items[0]).to.not.have.property('messages');
        const second = await as(user, 'GET', `/extension/chats?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
        expect(second.body.items.map((c: { chatId: string }) => c.chatId)).to.deep.equal([ids[0]]);
        expect(second.body.nextCursor).to.equal(null);

        const id = ids[0]!;
        expectError(await as(other, 'GET', `/extension/chats/${id}`), 404, 'CHAT_NOT_FOUND');
        expectError(await as(other, 'PATCH', `/extension/chats/${id}`, { title: 'x' }), 404, 'CHAT_NOT_FOUND');
        expectError(await as(other, 'PUT', `/extension/chats/${id}/messages`, { messages: [] }), 404, 'CHAT_NOT_FOUND');
        expectError(await as(other, 'GET', `/extension/chats/${id}/versions/1`), 404, 'CHAT_NOT_FOUND');
        expectError(await as(other, 'DELETE', `/extension/chats/${id}`), 404, 'CHAT_NOT_FOUND');
        expect((await as(other, 'GET', '/extension/chats')).body.items.map((c: { chatId: string }) => c.chatId)).to.not.include(id);
        expectError(await as(user, 'GET', '/extension/chats/not-a-uuid'), 400, 'VALIDATION_FAILED');

        const del = await as(user, 'DELETE', `/extension/chats/${id}`);
        expect(del.status, del.text).to.equal(200);
        expectError(await as(user, 'GET', `/extension/chats/${id}`), 404, 'CHAT_NOT_FOUND');
        expectError(await as(user, 'DELETE', `/extension/chats/${id}`), 404, 'CHAT_NOT_FOUND');
        expect((await as(user, 'GET', '/extension/chats')).body.items.map((c: { chatId: string }) => c.chatId)).to.deep.equal([ids[2], ids[1]]);
      });

      it('chats answer id like every other resource; chatId stays as its deprecated alias (issue 36)', async () => {
        const user = await registerUser(svc.baseUrl);
        const created = await as(user, 'POST', '/extension/chats', { title: 'ids' });
        expect(created.status, created.text).to.equal(201);
        const id = created.body.chat.id;
        expect(id).to.be.a('string');
        expect(created.body.chat.chatId, 'the alias names the same chat').to.equal(id);
        for (const res of [await as(user, 'GET', `/extension/chats/${id}`), await as(user, 'PATCH', `/extension/chats/${id}`, { title: 'renamed' }), await as(user, 'PUT', `/extension/chats/${id}/messages`, { messages: [] })]) {
          expect(res.status, res.text).to.equal(200);
          expect(res.body.chat).to.include({ id, chatId: id });
        }
        expect((await as(user, 'GET', '/extension/chats')).body.items.map((c: { id: string; chatId: string }) => [c.id, c.chatId])).to.deep.equal([[id, id]]);
        expect((await as(user, 'GET', `/extension/chats/${id}/versions/1`)).body).to.include({ id, chatId: id, version: 1 });
        const del = await as(user, 'DELETE', `/extension/chats/${id}`);
        expect(del.status, del.text).to.equal(200);
        expect(del.body).to.deep.equal({ success: true, deleted: true, id, chatId: id });
        const document = (await call(svc.baseUrl, 'GET', '/openapi.json')).body;
        const chatSchema = /"deprecated":true,"description":"deprecated alias of `id`/.test(JSON.stringify(document));
        expect(chatSchema, 'the OpenAPI document marks chatId deprecated').to.equal(true);
      });
    });
  });
}

for (const mode of availableModes()) {
  describe(`web extension API with a real provider's wire format (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
    let user: RegisteredUser;
    const as = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, user.auth);

    before(async () => {
      fake = await startFakeOpenAi();
      svc = await startTestService(mode, { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', LLM_MAX_RETRIES: '0', EXTENSION_DEFAULT_MODEL: 'openai:gpt-4o-mini' });
      user = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await fake?.close();
    });

    it('models: the configured default, and the catalogue of the providers the caller can use', async () => {
      const res = await as('GET', '/extension/models');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.default).to.deep.equal({ provider: 'openai', model: 'gpt-4o-mini' });
      expect(res.body.source).to.equal('catalogue');
      expect(res.body.allowed).to.deep.include({ provider: 'offline', model: 'offline' });
      expect(res.body.allowed.filter((m: { provider: string }) => m.provider === 'openai').length).to.be.above(1);
    });

    it("the PDF's text, page by page, reaches the model with the question", async () => {
      fake.requests.length = 0;
      fake.text = 'It is about foxes.';
      const res = await postForm(svc.baseUrl, '/extension/ai/pdf', { file: { bytes: await textPdf(3, { marker: 'ZEBRA' }), name: 'z.pdf' }, prompt: 'What is it about?' }, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.output).to.equal('It is about foxes.');
      expect(res.body.model).to.deep.include({ provider: 'openai' });
      expect(res.body.document).to.deep.include({ pageCount: 3, pagesUsed: 3, truncated: false, contextTokens: 128_000 });
      const sent = JSON.stringify(fake.requests.at(-1)!.body.messages);
      for (const n of [1, 2, 3]) expect(sent).to.include(`--- Page ${n} ---`).and.include(`Page ${n} of 3 ZEBRA`);
      expect(sent).to.include('What is it about?');
    });

    it('streams the provider\'s deltas as SSE delta events', async () => {
      fake.text = 'one two three four';
      const res = await fetch(`${svc.baseUrl}/extension/ai`, { method: 'POST', headers: { ...user.auth, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'count', stream: true }) });
      expect(res.status).to.equal(200);
      const events = sseEvents(await res.text()).filter((e) => e.event !== 'ping');
      expect(events[0]!.event).to.equal('meta');
      expect(events.at(-1)!.event).to.equal('done');
      const deltas = events.filter((e) => e.event === 'delta');
      expect(deltas.length).to.be.above(1);
      expect(deltas.map((e) => e.data.text).join('')).to.equal('one two three four');
      expect(events.at(-1)!.data.output).to.equal('one two three four');
    });

    it('the default model writes the title; when it fails, the first words stand in and the messages are kept', async () => {
      fake.text = '"Weekend Mountain Trip."';
      const chat = (await as('POST', '/extension/chats', {})).body.chat;
      const put = await as('PUT', `/extension/chats/${chat.chatId}/messages`, { messages: [{ role: 'user', content: 'Plan a trip to the mountains for the weekend' }] });
      expect(put.status, put.text).to.equal(200);
      expect(put.body.chat.title).to.equal('Weekend Mountain Trip');
      const events = await svc.services.eventStore.readStream(`extchat-${chat.chatId}`);
      expect(events.at(-1)!.data).to.deep.include({ provider: 'openai', model: 'gpt-4o-mini' });

      fake.failures = [{ status: 500 }];
      const other = (await as('POST', '/extension/chats', {})).body.chat;
      const put2 = await as('PUT', `/extension/chats/${other.chatId}/messages`, { messages: [{ role: 'user', content: 'Explain how tides work near the coast' }] });
      expect(put2.status, put2.text).to.equal(200);
      expect(put2.body.chat).to.deep.include({ title: 'Explain how tides work near the', messageCount: 1, version: 2 });
    });
  });
}
