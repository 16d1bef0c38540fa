import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from './flows-support.js';

for (const mode of availableModes()) {
  describe(`memory API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', MEMORY_BATCH_MAX_OPERATIONS: '5', MEMORY_MAX_TEXT_LENGTH: '500' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    const memory = (body: unknown, who: RegisteredUser = owner) => call(svc.baseUrl, 'POST', '/db/memory', body, who.auth);
    const batch = (operations: unknown[], who: RegisteredUser = owner) => call(svc.baseUrl, 'POST', '/db/memory/batch', { operations }, who.auth);
    const history = (id: string, who: RegisteredUser = owner) => call(svc.baseUrl, 'GET', `/db/memory/${id}/history`, undefined, who.auth);
    async function save(text: string, scope: Record<string, string> = { userId: 'alice' }, metadata?: Record<string, unknown>) {
      const res = await memory({ operation: 'save', scope, text, ...(metadata ? { metadata } : {}) });
      expect(res.status, res.text).to.equal(200);
      return res.body.memory as { id: string; text: string; metadata: Record<string, unknown>; scope: Record<string, string | null>; version: number };
    }
    const head = () => svc.services.eventStore.headPosition();

    it('save answers the memory; search finds it ranked with scores, scoped and filtered', async () => {
      const coffee = await save('Alice drinks her coffee black every morning', { userId: 'alice', agentId: 'barista' }, { topic: 'food', priority: 2 });
      expect(coffee).to.deep.include({ text: 'Alice drinks her coffee black every morning', metadata: { topic: 'food', priority: 2 }, version: 0 });
      expect(coffee.scope).to.deep.equal({ userId: 'alice', agentId: 'barista', runId: null });
      const tea = await save('Alice sometimes likes green tea, not coffee with milk', { userId: 'alice' }, { topic: 'food', priority: 1 });
      const ski = await save('Alice goes skiing in the Alps in winter', { userId: 'alice' }, { topic: 'travel' });
      await save('Bob drinks coffee with lots of sugar', { userId: 'bob' }, { topic: 'food' });

      const res = await memory({ operation: 'search', scope: { userId: 'alice' }, query: 'What coffee does she drink?' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ success: true, operation: 'search', ranking: 'bm25', truncated: false });
      const ids = res.body.results.map((r: { id: string }) => r.id);
      expect(ids[0]).to.equal(coffee.id);
      expect(ids).to.include(tea.id).and.not.include(ski.id);
      expect(res.body.results[0].score).to.be.greaterThan(res.body.results[1].score);
      expect(res.body.results[0].scores).to.have.property('bm25').that.is.a('number');

      const filtered = await memory({ operation: 'search', scope: { userId: 'alice' }, query: 'coffee', filters: { priority: { $in: [1, 3] } } });
      expect(filtered.body.results.map((r: { id: string }) => r.id)).to.deep.equal([tea.id]);
      const byAgent = await memory({ operation: 'search', scope: { agentId: 'barista' }, query: 'coffee', limit: 5 });
      expect(byAgent.body.results.map((r: { id: string }) => r.id)).to.deep.equal([coffee.id]);
      const everyone = await memory({ operation: 'search', query: 'coffee sugar' });
      expect(everyone.body.results[0].text).to.equal('Bob drinks coffee with lots of sugar');
    });

    it('update and delete keep a history readable per memory (old and new text, when, by whom)', async () => {
      const m = await save('Carol lives in Lyon', { userId: 'carol' }, { kind: 'home' });
      const up = await memory({ operation: 'update', memoryId: m.id, text: 'Carol moved to Paris' });
      expect(up.status, up.text).to.equal(200);
      expect(up.body.memory).to.deep.include({ id: m.id, text: 'Carol moved to Paris', metadata: { kind: 'home' }, version: 1 });
      expect(up.body.changed).to.equal(true);
      const same = await memory({ operation: 'update', memoryId: m.id, text: 'Carol moved to Paris' });
      expect(same.body.changed, 'an unchanged update appends nothing').to.equal(false);
      const meta = await memory({ operation: 'update', memoryId: m.id, metadata: { kind: 'home', confirmed: true } });
      expect(meta.body.memory.metadata).to.deep.equal({ kind: 'home', confirmed: true });
      const found = await memory({ operation: 'search', scope: { userId: 'carol' }, query: 'Paris' });
      expect(found.body.results.map((r: { id: string }) => r.id)).to.deep.equal([m.id]);
      expect((await memory({ operation: 'search', scope: { userId: 'carol' }, query: 'Lyon' })).body.results).to.deep.equal([]);

      const del = await memory({ operation: 'delete', memoryId: m.id });
      expect(del.body).to.deep.equal({ success: true, operation: 'delete', deleted: 1, memoryIds: [m.id], more: false });
      expectError(await memory({ operation: 'delete', memoryId: m.id }), 404, 'MEMORY_NOT_FOUND');
      expectError(await memory({ operation: 'update', memoryId: m.id, text: 'x' }), 404, 'MEMORY_NOT_FOUND');
      expect((await memory({ operation: 'search', scope: { userId: 'carol' }, query: 'Paris' })).body.results).to.deep.equal([]);

      const h = await history(m.id);
      expect(h.status, h.text).to.equal(200);
      expect(h.body.deleted).to.equal(true);
      expect(h.body.items.map((e: { action: string }) => e.action)).to.deep.equal(['saved', 'updated', 'updated', 'deleted']);
      expect(h.body.items[1]).to.deep.include({ seq: 1, previousText: 'Carol lives in Lyon', text: 'Carol moved to Paris', by: owner.user.id, source: 'api' });
      expect(h.body.items[3]).to.deep.include({ previousText: 'Carol moved to Paris', text: null });
      expect(h.body.items[0].at).to.be.a('string');
    });

    it('delete by scope removes every memory of that scope and only those; it needs a scope field', async () => {
      const a = await save('Dan likes jazz', { userId: 'dan', runId: 'r1' });
      const b = await save('Dan likes blues', { userId: 'dan', runId: 'r2' });
      const c = await save('Dan plays guitar', { userId: 'dan', runId: 'r2' });
      const res = await memory({ operation: 'delete', scope: { userId: 'dan', runId: 'r2' } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.deleted).to.equal(2);
      expect(res.body.memoryIds).to.have.members([b.id, c.id]);
      const left = await memory({ operation: 'search', scope: { userId: 'dan' }, query: 'Dan likes guitar blues jazz' });
      expect(left.body.results.map((r: { id: string }) => r.id)).to.deep.equal([a.id]);
      const before = await head();
      expectError(await memory({ operation: 'delete', scope: {} }), 400, 'VALIDATION_FAILED', 'body.memoryId');
      expectError(await memory({ operation: 'delete' }), 400, 'VALIDATION_FAILED', 'body.memoryId');
      expect(await head()).to.equal(before);
    });

    it("another tenant's memory answers 404 and never shows in its search", async () => {
      const m = await save('Eve keeps a secret diary about owls', { userId: 'eve' });
      expectError(await memory({ operation: 'update', memoryId: m.id, text: 'stolen' }, other), 404, 'MEMORY_NOT_FOUND');
      expectError(await memory({ operation: 'delete', memoryId: m.id }, other), 404, 'MEMORY_NOT_FOUND');
      expectError(await history(m.id, other), 404, 'MEMORY_NOT_FOUND');
      expect((await memory({ operation: 'search', scope: { userId: 'eve' }, query: 'secret diary owls' }, other)).body.results).to.deep.equal([]);
      expect((await memory({ operation: 'delete', scope: { userId: 'eve' } }, other)).body.deleted).to.equal(0);
      expect((await memory({ operation: 'search', scope: { userId: 'eve' }, query: 'owls' })).body.results.map((r: { id: string }) => r.id)).to.deep.equal([m.id]);
      // A scope that does not match is "not found" too.
      expectError(await memory({ operation: 'update', memoryId: m.id, scope: { userId: 'mallory' }, text: 'x' }), 404, 'MEMORY_NOT_FOUND');
      expectError(await history('no-such-memory'), 404, 'MEMORY_NOT_FOUND');
    });

    it('a batch runs in order; a failing middle operation stops it, says which, and earlier ones stay', async () => {
      const ok = await batch([
        { operation: 'save', scope: { userId: 'frank' }, text: 'Frank is allergic to peanuts' },
        { operation: 'search', scope: { userId: 'frank' }, query: 'peanut allergy' },
      ]);
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.results.map((r: { index: number; operation: string }) => [r.index, r.operation])).to.deep.equal([[0, 'save'], [1, 'search']]);
      expect(ok.body.results[1].results[0].id, 'a later operation sees an earlier write').to.equal(ok.body.results[0].memory.id);

      const res = await batch([
        { operation: 'save', scope: { userId: 'frank' }, text: 'Frank has a cat named Miso' },
        { operation: 'update', memoryId: 'missing-memory', text: 'nothing' },
        { operation: 'save', scope: { userId: 'frank' }, text: 'Frank never gets here' },
      ]);
      expectError(res, 404, 'BATCH_OPERATION_FAILED');
      expect(res.body.error.details).to.deep.include({ index: 1, operation: 'update' });
      expect(res.body.error.details.error.code).to.equal('MEMORY_NOT_FOUND');
      expect(res.body.error.details.completed).to.have.length(1);
      const found = await memory({ operation: 'search', scope: { userId: 'frank' }, query: 'cat Miso never gets here' });
      expect(found.body.results.map((r: { text: string }) => r.text)).to.deep.equal(['Frank has a cat named Miso']);
    });

    it('bad input is a 400 naming the field, and appends nothing', async () => {
      const before = await head();
      expectError(await memory({ operation: 'remember', text: 'x' }), 400, 'VALIDATION_FAILED', 'body.operation');
      expectError(await memory({ operation: 'save', scope: {}, text: 'x' }), 400, 'VALIDATION_FAILED', 'body.scope');
      expectError(await memory({ operation: 'save', scope: { userId: 'u' }, text: '   ' }), 400, 'VALIDATION_FAILED', 'body.text');
      expectError(await memory({ operation: 'save', scope: { userId: 'u' }, text: 'x'.repeat(501) }), 400, 'VALIDATION_FAILED', 'body.text');
      expectError(await memory({ operation: 'save', scope: { userId: 'u' }, text: 'x', metadata: { nested: { a: 1 } } }), 400, 'VALIDATION_FAILED', 'body.metadata.nested');
      expectError(await memory({ operation: 'save', scope: { userId: 'u' }, text: 'x', color: 'red' }), 400, 'VALIDATION_FAILED', 'body.color');
      expectError(await memory({ operation: 'search', query: 'x', filters: { a: { $where: 'sleep(1)' } } }), 400, 'VALIDATION_FAILED');
      expectError(await memory({ operation: 'search', query: 'x', limit: 101 }), 400, 'VALIDATION_FAILED', 'body.limit');
      expectError(await memory({ operation: 'update', memoryId: 'bad id!', text: 'x' }), 400, 'VALIDATION_FAILED', 'body.memoryId');
      expectError(await memory({ operation: 'update', memoryId: 'abc' }), 400, 'VALIDATION_FAILED', 'body.text');
      expectError(await batch([]), 400, 'VALIDATION_FAILED', 'body.operations');
      expectError(await batch(Array.from({ length: 6 }, () => ({ operation: 'search', query: 'x' }))), 400, 'VALIDATION_FAILED', 'body.operations');
      expectError(
        await batch([{ operation: 'save', scope: { userId: 'u' }, text: 'fine' }, { operation: 'save', scope: { userId: 'u' }, text: 'x'.repeat(501) }]),
        400,
        'VALIDATION_FAILED',
        'body.operations.1.text',
      );
      expect(await head(), 'nothing appended').to.equal(before);
      expectError(await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', query: 'x' }), 401);
    });
  });
}
