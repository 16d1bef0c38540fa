import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { startFakeEmbeddings, type FakeEmbeddingsServer } from '../support/fake-llm/embeddings.js';
import { MEMORIES, QUERIES, recallAtK } from './memory-quality-set.js';

/** Floors: measured values are printed; a change to the tokenizer or ranking that drops below fails. */
const LEXICAL_FLOOR = 0.8;
const HYBRID_FLOOR = 0.9;

async function loadSet(svc: TestService, user: RegisteredUser): Promise<Map<string, string>> {
  const res = await call(
    svc.baseUrl,
    'POST',
    '/db/memory/batch',
    { operations: MEMORIES.map((m) => ({ operation: 'save', scope: { userId: m.userId }, text: m.text, metadata: { topic: m.topic, label: m.id } })) },
    user.auth,
  );
  expect(res.status, res.text).to.equal(200);
  return new Map(res.body.results.map((r: { memory: { id: string } }, i: number) => [r.memory.id, MEMORIES[i].id]));
}

async function rankings(svc: TestService, user: RegisteredUser, labels: Map<string, string>) {
  const out: string[][] = [];
  let ranking = '';
  for (const q of QUERIES) {
    const res = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', query: q.query, scope: q.userId ? { userId: q.userId } : {}, limit: 5 }, user.auth);
    expect(res.status, res.text).to.equal(200);
    ranking = res.body.ranking;
    out.push(res.body.results.map((r: { id: string }) => labels.get(r.id)!));
  }
  return { out, ranking };
}

function report(name: string, out: string[][]) {
  const recall = recallAtK(out, QUERIES, 5);
  const misses = QUERIES.filter((q, i) => q.relevant.some((id) => !out[i].includes(id))).map((q) => q.query);
  console.log(`      ${name}: recall@5 = ${recall.toFixed(3)} over ${QUERIES.length} queries, ${MEMORIES.length} memories; missed: ${misses.join(' | ') || 'none'}`);
  return recall;
}

for (const mode of availableModes()) {
  describe(`memory search quality (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let fake: FakeEmbeddingsServer;
    after(async () => {
      await svc?.stop();
      await fake?.close();
    });

    it(`lexical BM25: recall@5 ≥ ${LEXICAL_FLOOR} on the labelled set`, async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      const user = await registerUser(svc.baseUrl);
      const labels = await loadSet(svc, user);
      const { out, ranking } = await rankings(svc, user, labels);
      expect(ranking).to.equal('bm25');
      expect(report('lexical', out)).to.be.at.least(LEXICAL_FLOOR);
      await svc.stop();
      svc = undefined as never;
    });

    it(`hybrid BM25 + embeddings (fake OpenAI-compatible /embeddings on loopback): recall@5 ≥ ${HYBRID_FLOOR}, and a provider failure degrades to BM25`, async () => {
      fake = await startFakeEmbeddings();
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', MEMORY_EMBEDDINGS_URL: fake.baseUrl, MEMORY_EMBEDDINGS_API_KEY: 'sk-test', MEMORY_EMBEDDINGS_MODEL: 'toy-embed' });
      const user = await registerUser(svc.baseUrl);
      const labels = await loadSet(svc, user);
      expect(fake.requests[0]).to.deep.include({ model: 'toy-embed', authorization: 'Bearer sk-test' });
      const { out, ranking } = await rankings(svc, user, labels);
      expect(ranking).to.equal('hybrid');
      expect(report('hybrid', out)).to.be.at.least(HYBRID_FLOOR);

      // No shared word, found by meaning.
      const sleep = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: 'chen' }, query: 'trouble sleeping', limit: 1 }, user.auth);
      expect(labels.get(sleep.body.results[0].id)).to.equal('c-sleep');
      expect(sleep.body.results[0].scores.semantic).to.be.greaterThan(0);

      fake.failNext(1);
      const degraded = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: 'alice' }, query: 'coffee', limit: 1 }, user.auth);
      expect(degraded.status, degraded.text).to.equal(200);
      expect(degraded.body.ranking).to.equal('bm25');
      expect(degraded.body.warning).to.match(/semantic ranking unavailable/);
      expect(labels.get(degraded.body.results[0].id)).to.equal('a-coffee');
      fake.failNext(1);
      const saved = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'save', scope: { userId: 'alice' }, text: 'Alice naps after lunch' }, user.auth);
      expect(saved.status, saved.text).to.equal(200);
      expect(saved.body.embedded, 'saved without a vector when the provider fails').to.equal(false);
    });
  });
}
