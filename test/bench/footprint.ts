/**
 * `npm run bench -- footprint` (issue 30 item 5): the embedded default after a long life. A seed
 * service records one real instance of each kind (a 2-node sync run, a flow with its edits, a
 * document); their streams are then cloned with fresh ids straight into the log until it holds
 * BENCH_FOOTPRINT_EVENTS events (default 1,000,000: about 70 % run events, the rest flows and
 * documents). Then `dist/app/main.js` (what `npm start` runs) starts on that log twice: the
 * first start projects the whole log into empty read models (DATA_DIR/read-models.db); the
 * restart after it resumes at the checkpoints: time to `/api/health` and to the read models
 * caught up, RSS after each, RSS per additional run, and disk per run (log and read models).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { NewEvent } from '../../ports/event-store.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { buildDistIfStale, startBuiltServiceProcess, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { now, tempDir, type Report } from './support.js';
import { heapProbeNodeArgs } from '../soak/sampler.js';

const BENCH = 'footprint';
const EVENTS = Number(process.env.BENCH_FOOTPRINT_EVENTS ?? 1_000_000);
const EXTRA_RUNS = Number(process.env.BENCH_FOOTPRINT_EXTRA_RUNS ?? 3_000);
/** Runs before the growth is measured: enough to fill the bounded caches (runs projector 2,048 states, command handler 500 settled per decider). */
const WARM_RUNS = Number(process.env.BENCH_FOOTPRINT_WARM_RUNS ?? 3_000);
/** Issue 30's aims on this machine. */
const AIM_RSS_MB = 300;
const AIM_RESTART_MS = 3_000;
const AIM_RSS_PER_RUN_KB = 0.5;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

export async function benchFootprint(report: Report): Promise<void> {
  const dir = tempDir('footprint');
  const operator = `footprint-${Date.now()}@example.test`;
  // Retention off: its sweep (30 s after each start) would prune the cloned runs of the one seed
  // flow while memory is measured; what it costs is `npm run bench -- retention`'s to measure.
  const retention: Record<string, string> = process.env.BENCH_FOOTPRINT_RETENTION === 'on' ? {} : { RUN_HISTORY_KEEP_DAYS: '0', RUN_HISTORY_KEEP_LAST: '0' };
  const env = { DATA_DIR: dir.path, LOG_LEVEL: process.env.BENCH_FOOTPRINT_LOG_LEVEL ?? 'silent', PORT: '0', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ADMIN_EMAILS: operator, ...retention };
  let service: ServiceProcess | null = null;
  try {
    // 1. One real instance of each kind, recorded by the service itself.
    service = await startServiceProcess(env);
    const user = await registerUser(service.baseUrl, { email: operator });
    const flowId = await twoNodeFlow(service.baseUrl, user.auth);
    const run = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'seed' } }, user.auth);
    if (run.status !== 200) throw new Error(`seed run answered ${run.status}: ${run.text.slice(0, 200)}`);
    const coll = await call(service.baseUrl, 'POST', '/db/collections', { name: 'notes' }, user.auth);
    if (coll.status !== 201) throw new Error(`collection answered ${coll.status}: ${coll.text.slice(0, 200)}`);
    const doc = await call(service.baseUrl, 'POST', '/db/collections/notes/documents', { document: { title: 'seed', body: 'a note of a few words', tags: ['a', 'b'] } }, user.auth);
    if (doc.status !== 201) throw new Error(`document answered ${doc.status}: ${doc.text.slice(0, 200)}`);
    await stop(service);
    service = null;
    console.log(`footprint: seed instances recorded; cloning them to ${EVENTS.toLocaleString('en-US')} events`);

    // 2. Clone those streams with fresh ids until the log holds EVENTS events.
    const store = new SqliteEventStore(join(dir.path, 'events.db'), { durability: 'process' });
    const all = await store.readAll();
    const byStream = new Map<string, RecordedEvent[]>();
    for (const e of all) byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e]);
    const runStream = `run-${run.body.processId}`;
    const flowStream = `flow-${flowId}`;
    const docId = doc.body.document._id as string;
    const docStream = [...byStream.keys()].find((s) => s.includes(docId));
    if (!docStream) throw new Error(`no stream of the log names the seeded document ${docId}`);
    const templates: Array<{ stream: string; id: string; every: number }> = [
      { stream: runStream, id: run.body.processId, every: 1 },
      { stream: flowStream, id: flowId, every: 20 },
      { stream: docStream, id: docId, every: 4 },
    ];
    const seeded = now();
    let unit = 0;
    let events = all.length;
    let runs = 1;
    while (events < EVENTS) {
      const batch: Array<Promise<unknown>> = [];
      for (let i = 0; i < 500 && events < EVENTS; i++, unit++) {
        for (const t of templates) {
          if (unit % t.every !== 0) continue;
          const fresh = randomUUID();
          const cloned = byStream.get(t.stream)!.map((e) => clone(e, t.id, fresh));
          batch.push(store.append(t.stream.replace(t.id, fresh), cloned, 'no_stream'));
          events += cloned.length;
          if (t.stream === runStream) runs++;
        }
      }
      await Promise.all(batch);
      if (unit % 20_000 < 500) console.log(`footprint: ${events.toLocaleString('en-US')} events`);
    }
    await store.close();
    const seedSeconds = (now() - seeded) / 1000;
    const diskBytes = statSync(join(dir.path, 'events.db')).size;

    console.log(`footprint: log seeded (${events.toLocaleString('en-US')} events); first start projects it into empty read models`);
    // 3. A first start on that log projects all of it (read-models.db is empty); then a restart,
    // which resumes every projector at its checkpoint: health, then the read models caught up.
    buildDistIfStale();
    const cold = now();
    service = await startBuiltServiceProcess(env, 600_000);
    const coldMs = await waitForProjections(service.baseUrl, user.auth, cold);
    const rssCold = rssMb(service.child.pid!);
    await stop(service);
    service = null;
    const readModelBytes = statSync(join(dir.path, 'read-models.db')).size;
    console.log(`footprint: projected in ${(coldMs / 1000).toFixed(1)} s; restarting`);
    const t0 = now();
    // BENCH_FOOTPRINT_PROFILE_DIR: a CPU profile of the restarted process (what its start-up costs).
    const profile = process.env.BENCH_FOOTPRINT_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_FOOTPRINT_PROFILE_DIR}`] : [];
    service = await startBuiltServiceProcess(env, 600_000, profile);
    for (;;) {
      const h = await fetch(`${service.baseUrl}/health`).catch(() => null);
      if (h?.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const healthMs = now() - t0;
    const rssAtHealth = rssMb(service.child.pid!);
    const caughtUpMs = await waitForProjections(service.baseUrl, user.auth, t0);
    const rssCaughtUp = rssMb(service.child.pid!);
    report.figure(BENCH, 'first start: the whole log projected into empty read models', coldMs, 'ms', { note: `RSS then ${rssCold.toFixed(0)} MB; read-models.db ${(readModelBytes / 1024 / 1024).toFixed(0)} MB` });
    const note = `${events.toLocaleString('en-US')} events (${runs.toLocaleString('en-US')} runs) seeded in ${seedSeconds.toFixed(0)} s`;
    report.figure(BENCH, `restart to /api/health at ${events.toLocaleString('en-US')} events`, healthMs, 'ms', { target: { op: '<=', value: AIM_RESTART_MS }, note });
    report.figure(BENCH, 'restart to the read models caught up (every projection at lag 0)', caughtUpMs, 'ms');
    report.figure(BENCH, 'RSS at /api/health after the restart', rssAtHealth, 'MB', { target: { op: '<=', value: AIM_RSS_MB } });
    report.figure(BENCH, 'RSS with the read models caught up', rssCaughtUp, 'MB', { target: { op: '<=', value: AIM_RSS_MB } });
    report.figure(BENCH, 'disk per run (events.db / runs, flows and documents included)', diskBytes / runs / 1024, 'KB', { digits: 2, note: `events.db ${(diskBytes / 1024 / 1024).toFixed(0)} MB` });
    report.figure(BENCH, 'disk per run of the read models (read-models.db / runs)', readModelBytes / runs / 1024, 'KB', { digits: 2 });

    // 4. Growth per additional run (sync runs over the API, c=8), in a service started again with
    // the heap probe (full GCs on SIGUSR2), after WARM runs have filled the bounded caches: what
    // the service keeps per run, not garbage V8 has not collected yet.
    await stop(service);
    service = await startBuiltServiceProcess(env, 600_000, ['--import', 'tsx', ...heapProbeNodeArgs()]);
    const probed = service;
    const runSync = async (n: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next++ < n) {
            const res = await call(probed.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'more' } }, user.auth);
            if (res.status !== 200) throw new Error(`run answered ${res.status}: ${res.text.slice(0, 200)}`);
          }
        }),
      );
    };
    await runSync(WARM_RUNS);
    const before = await heapProbe(probed);
    await runSync(EXTRA_RUNS);
    const after = await heapProbe(probed);
    const perRun = (a: number, b: number) => (b - a) / 1024 / EXTRA_RUNS;
    report.figure(BENCH, `live heap growth per additional run (${EXTRA_RUNS} sync runs after ${WARM_RUNS}, full GC at both ends)`, perRun(before.heapUsed, after.heapUsed), 'KB', {
      digits: 2,
      target: { op: '<=', value: AIM_RSS_PER_RUN_KB },
      note: `${mb(before.heapUsed)} → ${mb(after.heapUsed)} MB`,
    });
    report.figure(BENCH, 'RSS growth per additional run (same runs, after the same GCs)', perRun(before.rss, after.rss), 'KB', {
      digits: 2,
      note: `${mb(before.rss)} → ${mb(after.rss)} MB; V8's committed heap ${mb(before.heapTotal)} → ${mb(after.heapTotal)} MB (freed pages are returned to the OS lazily)`,
    });
  } catch (err) {
    // A service that died mid-bench says why on its stderr (BENCH_FOOTPRINT_LOG_LEVEL=warn for its logs).
    if (service) {
      const exit = await Promise.race([service.exited, new Promise((r) => setTimeout(() => r('still running'), 1000))]);
      console.log(`footprint: the service (${JSON.stringify(exit)}); its stderr:\n${service.stderr().slice(-4000)}\nstdout tail:\n${service.stdout().slice(-4000)}`);
    }
    throw err;
  } finally {
    if (service) await stop(service);
    dir.cleanup();
  }
}

function clone(e: RecordedEvent, oldId: string, newId: string): NewEvent {
  const swap = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll(oldId, newId));
  return { id: randomUUID(), type: e.type, data: swap(e.data), metadata: swap(e.metadata), schemaVersion: e.schemaVersion };
}

/** A flow of two transform nodes in a line (its name says which bench made it). */
export async function twoNodeFlow(baseUrl: string, auth: Record<string, string>, name = 'footprint'): Promise<string> {
  const created = await call(baseUrl, 'POST', '/flows', { name }, auth);
  const flowId = created.body.flow.id as string;
  const ids: string[] = [];
  for (const [i, data] of [{ nodeType: 'transform', template: 'topic {{inputs.topic}}' }, { nodeType: 'transform', template: 'said {{previous}}' }].entries()) {
    const added = await call(baseUrl, 'POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: i * 100, y: 0 }, data }, auth);
    if (added.status !== 201) throw new Error(`node answered ${added.status}: ${added.text.slice(0, 200)}`);
    ids.push(added.body.node.id);
  }
  const c = await call(baseUrl, 'POST', `/flows/${flowId}/connections`, { source: ids[0], target: ids[1] }, auth);
  if (c.status !== 201) throw new Error(`connection answered ${c.status}: ${c.text.slice(0, 200)}`);
  return flowId;
}

/** Until every projection reports lag 0 (GET /admin/projections): the read models replayed the whole seeded log. */
async function waitForProjections(baseUrl: string, auth: Record<string, string>, t0: number): Promise<number> {
  for (;;) {
    const res = await call(baseUrl, 'GET', '/admin/projections', undefined, auth);
    if (res.status !== 200) throw new Error(`GET /admin/projections answered ${res.status}: ${res.text.slice(0, 200)}`);
    if ((res.body.projections as Array<{ lag: number }>).every((p) => p.lag === 0)) return now() - t0;
    if (now() - t0 > 600_000) throw new Error('the read models did not catch up within 10 minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  await service.exited;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

/** A full GC in the service, then its memory (test/soak/heap-probe.ts answers SIGUSR2 on stdout). */
async function heapProbe(service: ServiceProcess): Promise<{ heapUsed: number; heapTotal: number; rss: number }> {
  const seen = service.stdout().length;
  service.child.kill('SIGUSR2');
  const deadline = now() + 30_000;
  for (;;) {
    const m = /\{"heapProbe":(\{[^}]*\})\}/.exec(service.stdout().slice(seen));
    if (m) return JSON.parse(m[1]) as { heapUsed: number; heapTotal: number; rss: number };
    if (now() > deadline) throw new Error('the heap probe did not answer SIGUSR2 in 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
