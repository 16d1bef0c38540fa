/**
 * Memory: the hot paths of POST /api/db/memory.
 *  a) search latency (p50, p99) over 10,000 memories of one tenant, on the embedded read store and,
 *     when MONGODB_URL is set, on the MongoDB-wire server: the whole tenant (every memory a
 *     candidate source) and one subject (`scope.userId`, 1,000 memories); lexical BM25, and hybrid
 *     with 256-dimension vectors already stored (the provider call itself is not counted);
 *     the read model is filled through the real projector (events made here, no bus). Searches
 *     use the per-process index (memory-index.ts) as the API does: warm (no change between
 *     searches), right after one memory changed (the index fetches the change) and cold (the
 *     whole index loaded, as after a restart);
 *  b) save throughput over HTTP (POST /api/db/memory, 8 concurrent), embedded, and distributed
 *     (Kafka + MongoDB) when both servers are configured. A save answers once its event is in the
 *     log; a read waits for the projection to reach the log's newest memory event (read-your-writes
 *     by position), so the bench also times the first search after the load (how long the
 *     projection took to catch up) and prints saves/s until searchable: the saves of the load over
 *     the load's time plus that wait, i.e. what the projection sustains.
 * Issue 18's aim: saves on Kafka + MongoDB-wire within 2× of embedded, in the same run (the ratio
 * distributed ÷ embedded, target ≥ 0.5), for saves answered and for saves searchable.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import type { ReadStore } from '../../ports/read-store.js';
import { MEMORIES, MEMORY_TENANTS, memoryProjector, tenantKeyOf } from '../../projections/memory.js';
import { searchMemories } from '../../projections/memory-search.js';
import { registerUser } from '../support/identity.js';
import { startTestService, type Mode, type TestService } from '../support/test-service.js';
import { runLoad } from './load.js';
import { call } from '../support/http.js';
import { fmt, latency, now, settle, type Report } from './support.js';

const BENCH = 'memory';
const MEMORIES_COUNT = 10_000;
const SUBJECTS = 10;
const QUERIES = 200;
const DIMENSIONS = 256;

/** Deterministic PRNG (mulberry32) so every run searches the same corpus. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pra', 'den', 'gol', 'mar', 'tes', 'lin', 'bor', 'quo'];
function vocabulary(size: number, rand: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rand() * 3);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''));
  }
  return [...words];
}
/** Zipf-like pick: a few words are everywhere, most are rare, as in real text. */
const zipf = (words: string[], rand: () => number) => words[Math.floor(Math.pow(words.length, rand())) - 1];

function corpus() {
  const rand = prng(42);
  const words = vocabulary(5_000, rand);
  const texts = Array.from({ length: MEMORIES_COUNT }, () => Array.from({ length: 8 + Math.floor(rand() * 12) }, () => zipf(words, rand)).join(' '));
  const queries = Array.from({ length: QUERIES }, () => Array.from({ length: 2 + Math.floor(rand() * 2) }, () => zipf(words, rand)).join(' '));
  const vector = () => {
    const v = Array.from({ length: DIMENSIONS }, () => rand() - 0.5);
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return v.map((x) => x / norm);
  };
  return { texts, queries, vector };
}

const tenant = { userId: 'bench-owner', orgId: null, workspaceId: null };

async function fill(store: ReadStore, data: ReturnType<typeof corpus>): Promise<number> {
  await memoryProjector.setup(store);
  const start = now();
  const at = new Date(Date.UTC(2026, 0, 1)).getTime();
  let position = 0;
  const batch: Promise<void>[] = [];
  for (const [i, text] of data.texts.entries()) {
    const memoryId = `bench-${i}`;
    const recorded: RecordedEvent = {
      id: randomUUID(), type: 'MemorySaved', streamId: `memory-${memoryId}`, revision: 0, position: ++position, schemaVersion: 1,
      data: {
        memoryId, text, metadata: { n: i % 7 }, subject: { userId: `subject-${i % SUBJECTS}`, agentId: null, runId: null },
        ownerId: tenant.userId, orgId: null, workspaceId: null, embedding: { model: 'bench', vector: data.vector() },
        at: new Date(at + i * 1000).toISOString(), by: tenant.userId, source: 'bench',
      },
      metadata: { actorId: tenant.userId, orgId: null, workspaceId: null, correlationId: 'bench', causationId: null, requestId: null, occurredAt: new Date(at).toISOString() },
    };
    batch.push(memoryProjector.project(recorded, store));
    if (batch.length === 64) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  return (MEMORIES_COUNT / (now() - start)) * 1000;
}

/**
 * Searches right after a change: one memory updated through the projector before each search (the
 * index fetches what changed and rebuilds its postings), and cold (a new epoch: the whole tenant
 * is loaded again, as after a restart or a rebuild).
 */
async function changeLatencies(report: Report, label: string, store: ReadStore, data: ReturnType<typeof corpus>, runs: number) {
  const base = { tenant, scope: {}, limit: 10, maxCandidates: 10_000, maxCached: 100_000, lexicalWeight: 0.5, queryVector: null };
  const tenantId = tenantKeyOf({ ownerId: tenant.userId, orgId: null, workspaceId: null });
  for (const cold of [false, true]) {
    const samples: number[] = [];
    for (const [i, query] of data.queries.slice(0, runs).entries()) {
      if (cold) await store.collection(MEMORY_TENANTS).updateOne({ _id: tenantId }, { $set: { epoch: randomUUID() } });
      else await memoryProjector.project(updateEvent(i, data.texts[(i * 7) % data.texts.length]), store);
      const start = now();
      await searchMemories(store, { ...base, query });
      samples.push(now() - start);
    }
    const l = latency(samples);
    const name = cold ? 'cold (whole index loaded)' : 'right after one memory changed';
    report.figure(BENCH, `search p50 ${name}: ${label}, 10,000, BM25`, l.p50, 'ms', { digits: 1, note: `${runs} searches` });
    report.figure(BENCH, `search p99 ${name}: ${label}, 10,000, BM25`, l.p99, 'ms', { digits: 1 });
  }
}

let updates = 0;
function updateEvent(i: number, text: string): RecordedEvent {
  const memoryId = `bench-${i}`;
  const at = new Date(Date.UTC(2026, 1, 1) + ++updates * 1000).toISOString();
  return {
    id: randomUUID(), type: 'MemoryUpdated', streamId: `memory-${memoryId}`, revision: updates, position: 1_000_000 + updates, schemaVersion: 1,
    data: { memoryId, previousText: '', text: `${text} changed`, previousMetadata: {}, metadata: { n: 1 }, at, by: tenant.userId, source: 'bench' },
    metadata: { actorId: tenant.userId, orgId: null, workspaceId: null, correlationId: 'bench', causationId: null, requestId: null, occurredAt: at },
  };
}

/**
 * The MongoDB-wire read model as the projector left it in the embedded store, copied document by
 * document (64 in flight): FerretDB projects the 30,000 writes of 10,000 saves too slowly for the
 * benchmark's time budget, and the search only reads `memories` and `memory_tenants`.
 */
async function copyReadModel(from: ReadStore, to: ReadStore): Promise<number> {
  await memoryProjector.setup(to);
  const start = now();
  for (const name of [MEMORIES, MEMORY_TENANTS]) {
    const docs = await from.collection(name).find({});
    for (let i = 0; i < docs.length; i += 64) await Promise.all(docs.slice(i, i + 64).map((d) => to.collection(name).insertOne(d)));
  }
  return (MEMORIES_COUNT / (now() - start)) * 1000;
}

async function searchLatencies(report: Report, label: string, store: ReadStore, data: ReturnType<typeof corpus>) {
  const cases = [
    { name: 'whole tenant (10,000)', scope: {} },
    { name: 'one subject (1,000)', scope: { userId: 'subject-3' } },
  ];
  for (const c of cases) {
    for (const hybrid of [false, true]) {
      const samples: number[] = [];
      let scanned = 0;
      for (const [i, query] of data.queries.entries()) {
        const start = now();
        const result = await searchMemories(store, {
          tenant, scope: c.scope, query, limit: 10, maxCandidates: 10_000, maxCached: 100_000, lexicalWeight: 0.5,
          queryVector: hybrid ? { model: 'bench', vector: data.vector() } : null,
        });
        if (i >= 20) samples.push(now() - start); // the first ones warm caches and JIT
        scanned += result.candidatesScanned;
      }
      const l = latency(samples);
      const name = `${label}, ${c.name}, ${hybrid ? 'hybrid' : 'BM25'}`;
      report.figure(BENCH, `search p50: ${name}`, l.p50, 'ms', { digits: 1, note: `${Math.round(scanned / data.queries.length)} candidates scanned on average` });
      report.figure(BENCH, `search p99: ${name}`, l.p99, 'ms', { digits: 1 });
      await settle();
    }
  }
}

interface SaveFigures {
  answered: number;
  searchable: number;
}

async function benchSaves(report: Report, mode: Mode): Promise<SaveFigures | null> {
  let svc: TestService | null = null;
  try {
    svc = await startTestService(mode, { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const user = await registerUser(svc.baseUrl);
    const url = new URL(svc.baseUrl);
    const body = JSON.stringify({ operation: 'save', scope: { userId: 'bench' }, text: 'Alice drinks two cups of black coffee every morning before work', metadata: { topic: 'food' } });
    const result = await runLoad({ host: url.hostname, port: Number(url.port), method: 'POST', paths: ['/api/db/memory'], body, headers: user.auth, concurrency: 8, warmupMs: 1_000, durationMs: 4_000 });
    if (result.failures > 0) report.info(BENCH, `save load: ${result.failures} failures, first: ${result.firstFailure}`);
    // The first search after the load waits until the projection reached the last save.
    const searchStarted = now();
    const search = await call(svc.baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: 'bench' }, query: 'coffee', limit: 1 }, user.auth);
    const catchUpMs = now() - searchStarted;
    if (search.status !== 200 || search.headers.get('x-read-model') !== 'current') report.info(BENCH, `search after the load: ${search.status}, X-Read-Model ${search.headers.get('x-read-model')}`);
    const l = latency(result.latencies);
    const figures = { answered: (result.requests / result.elapsedMs) * 1000, searchable: (result.requests / (result.elapsedMs + catchUpMs)) * 1000 };
    report.figure(BENCH, `saves/s over HTTP, ${mode} (8 concurrent, answered once in the log)`, figures.answered, '/s');
    report.figure(BENCH, `save latency p50, ${mode}`, l.p50, 'ms', { digits: 1 });
    report.figure(BENCH, `save latency p99, ${mode}`, l.p99, 'ms', { digits: 1 });
    report.figure(BENCH, `first search after the load (projection catching up), ${mode}`, catchUpMs, 'ms');
    report.figure(BENCH, `saves/s until searchable, ${mode}`, figures.searchable, '/s', { note: `${fmt(result.requests)} saves in ${fmt(result.elapsedMs)} ms + ${fmt(catchUpMs)} ms until the search showed them` });
    return figures;
  } catch (err) {
    report.fail(BENCH, `saves, ${mode}: ${(err as Error).message}`);
    return null;
  } finally {
    await svc?.stop();
  }
}

export async function benchMemory(report: Report): Promise<void> {
  // MEMORY_BENCH=saves: only the save figures and their same-run ratios (the search part takes minutes on a loaded machine).
  if (process.env.MEMORY_BENCH === 'saves') return benchSaveRatios(report);
  const data = corpus();
  report.info(BENCH, `${MEMORIES_COUNT} memories of 8–19 words (Zipf over 5,000 words), ${SUBJECTS} subjects, ${QUERIES} queries of 2–3 words, vectors of ${DIMENSIONS} dims`);

  const embedded = new MemoryReadStore();
  report.figure(BENCH, 'projection fill rate, embedded read store', await fill(embedded, data), 'memories/s');
  await searchLatencies(report, 'embedded', embedded, data);
  await changeLatencies(report, 'embedded', embedded, data, 30);

  if (process.env.MONGODB_URL) {
    const dbName = `bench_memory_${randomUUID().slice(0, 8)}`;
    const mongo = await MongoReadStore.connect(process.env.MONGODB_URL, dbName);
    try {
      report.figure(BENCH, 'read model copy into MongoDB-wire (insertOne, 64 in flight)', await copyReadModel(embedded, mongo), 'memories/s');
      await searchLatencies(report, 'MongoDB-wire', mongo, data);
      await changeLatencies(report, 'MongoDB-wire', mongo, data, 5);
    } finally {
      await mongo.close();
      const client = await new MongoClient(process.env.MONGODB_URL).connect();
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  } else {
    report.skip(BENCH, 'search on MongoDB', 'MONGODB_URL is not set');
  }
  await embedded.close();
  await benchSaveRatios(report);
}

async function benchSaveRatios(report: Report): Promise<void> {
  const embeddedSaves = await benchSaves(report, 'embedded');
  if (process.env.MONGODB_URL && process.env.KAFKA_BROKERS) {
    await settle();
    const distributedSaves = await benchSaves(report, 'distributed');
    for (const kind of ['answered', 'searchable'] as const) {
      const label = `saves/s ${kind === 'answered' ? 'answered' : 'until searchable'}, Kafka + MongoDB ÷ embedded`;
      if (!embeddedSaves || !distributedSaves) report.skip(BENCH, label, 'a configuration failed (see above)', WITHIN_2X, '×');
      else {
        report.figure(BENCH, label, distributedSaves[kind] / embeddedSaves[kind], '×', {
          digits: 2, target: WITHIN_2X, note: `${fmt(distributedSaves[kind])} /s distributed vs ${fmt(embeddedSaves[kind])} /s embedded, same run`,
        });
      }
    }
  } else report.skip(BENCH, 'saves/s, Kafka + MongoDB ÷ embedded', 'MONGODB_URL and KAFKA_BROKERS are not both set', WITHIN_2X, '×');
}

/** Issue 18: the distributed figure within 2× of embedded, i.e. distributed ÷ embedded ≥ 0.5. */
const WITHIN_2X = { op: '>=', value: 0.5 } as const;
