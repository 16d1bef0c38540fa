/**
 * `npm run bench -- retention` (issue 30, item 2's aim: "pruning keeps the disk flat under a
 * steady load once the retention window is full"). `dist/app/main.js` (what `npm start` runs)
 * with RUN_HISTORY_KEEP_LAST = two rounds of runs and a one-second sweep; rounds of sync runs of a
 * 2-node flow (c=8) whose input and node outputs are BENCH_RETENTION_PAYLOAD (1,000) characters. After each round, once the sweep has pruned what fell out of the window, the
 * data folder is measured (log, read models, their WAL files: those stay at their checkpoint size
 * once the first round filled them). Same-run reference: round 2, when every run is still whole
 * (round 1 also fills the WAL files). A pruned run still adds its summary, by design: RunHistoryPruned
 * in the log and the summary document in the read model; the bench prints their stored size.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { buildDistIfStale, startBuiltServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { twoNodeFlow } from './footprint.js';
import { tempDir, type Report } from './support.js';

const BENCH = 'retention';
const ROUND = Number(process.env.BENCH_RETENTION_ROUND ?? 1_000);
const ROUNDS = Number(process.env.BENCH_RETENTION_ROUNDS ?? 7);
/** Characters of the run's input, which each node's output repeats (an LLM answer is a few KB; 0: a tiny run). */
const PAYLOAD = Number(process.env.BENCH_RETENTION_PAYLOAD ?? 1_000);

const folderBytes = (dir: string) => readdirSync(dir).reduce((sum, f) => sum + (statSync(join(dir, f)).isFile() ? statSync(join(dir, f)).size : 0), 0);

export async function benchRetention(report: Report): Promise<void> {
  buildDistIfStale();
  const dir = tempDir('retention');
  const email = `retention-${Date.now()}@example.test`;
  const env = { DATA_DIR: dir.path, LOG_LEVEL: 'silent', PORT: '0', RUN_HISTORY_KEEP_LAST: String(2 * ROUND), RUN_HISTORY_SWEEP_MS: '1000', ADMIN_EMAILS: email };
  let service: ServiceProcess | null = null;
  try {
    service = await startBuiltServiceProcess(env, 120_000);
    const svc = service;
    const user = await registerUser(svc.baseUrl, { email });
    const flowId = await twoNodeFlow(svc.baseUrl, user.auth, 'retention');
    const overview = async () => (await call(svc.baseUrl, "GET", "/system/overview", undefined, user.auth)).body.service.eventLog as { events: number };
    let eventsPerRun = 0;
    const start = folderBytes(dir.path);
    let previous = start;
    const growth: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const before = (await overview()).events;
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next++ < ROUND) {
            const res = await call(svc.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: `r${round} ${'x'.repeat(PAYLOAD)}` } }, user.auth);
            if (res.status !== 200) throw new Error(`run answered ${res.status}: ${res.text.slice(0, 200)}`);
          }
        }),
      );
      if (round === 1) eventsPerRun = ((await overview()).events - before) / ROUND;
      // The window holds 2 × ROUND whole runs; every older run is one event (its summary).
      const expected = Math.min(round, 2) * ROUND * eventsPerRun + Math.max(0, round - 2) * ROUND + 50;
      const deadline = Date.now() + 120_000;
      while ((await overview()).events > expected) {
        if (Date.now() > deadline) throw new Error(`the sweep did not prune round ${round} within 2 minutes`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const bytes = folderBytes(dir.path);
      growth.push(bytes - previous);
      const files = readdirSync(dir.path).filter((f) => statSync(join(dir.path, f)).isFile()).map((f) => `${f} ${(statSync(join(dir.path, f)).size / 1024 / 1024).toFixed(1)}`);
      console.log(`retention: round ${round}: ${(await overview()).events} events, data folder ${(bytes / 1024 / 1024).toFixed(1)} MB (+${((bytes - previous) / 1024).toFixed(0)} KB): ${files.join(', ')} MB`);
      previous = bytes;
    }
    // What a pruned run holds at least: its summary event and its summary document, as stored.
    const Database = (await import('better-sqlite3')).default;
    const events = new Database(join(dir.path, 'events.db'), { readonly: true });
    const summaryEvent = (events.prepare("SELECT AVG(LENGTH(data) + LENGTH(metadata) + LENGTH(id) + LENGTH(stream_id)) AS b FROM events WHERE type = 'RunHistoryPruned'").get() as { b: number }).b;
    const eventsFree = events.pragma('freelist_count', { simple: true }) as number;
    events.close();
    const models = new Database(join(dir.path, 'read-models.db'), { readonly: true });
    // Pruned runs' documents only: their folded state (JSON text inside the stored body) says historyPruned.
    const sizes = (models.prepare("SELECT body FROM rm_docs WHERE coll = 'processes'").all() as Array<{ body: Buffer }>)
      .filter((r) => r.body.includes('"historyPruned":{"at"'))
      .map((r) => r.body.length);
    const docs = { b: sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length), lo: Math.min(...sizes), hi: Math.max(...sizes) };
    const modelsFree = models.pragma('freelist_count', { simple: true }) as number;
    const perColl = models.prepare('SELECT coll, COUNT(*) AS n, SUM(LENGTH(body)) AS b FROM rm_docs GROUP BY coll ORDER BY b DESC LIMIT 6').all();
    const lookups = models.prepare('SELECT coll, COUNT(*) AS n FROM rm_lookup GROUP BY coll ORDER BY n DESC LIMIT 6').all();
    models.close();
    console.log(`retention: a summary event ${summaryEvent.toFixed(0)} B; pruned runs' documents ${docs.lo}–${docs.hi} B (mean ${docs.b.toFixed(0)}); free pages: events.db ${eventsFree}, read-models.db ${modelsFree}`);
    console.log(`retention: read-model documents ${JSON.stringify(perColl)}; lookups ${JSON.stringify(lookups)}`);
    const whole = growth[1] / ROUND / 1024;
    const steady = growth.slice(3);
    const pruned = steady.reduce((a, b) => a + b, 0) / steady.length / ROUND / 1024;
    const summary = (summaryEvent + docs.b) / 1024;
    report.figure(BENCH, `disk per run while every run is whole (round 2 of ${ROUND} runs; the reference)`, whole, 'KB', { digits: 2, note: `${eventsPerRun.toFixed(1)} events per run; input and each node's output ≈ ${PAYLOAD} characters` });
    // Issue 30's aim, "flat once the window is full", read as at most 5 % of what a whole run adds.
    report.figure(BENCH, `disk per run once the window (${2 * ROUND} runs) is full (rounds 4–${ROUNDS})`, pruned, 'KB', {
      digits: 2,
      target: { op: '<=', value: Number((whole * 0.05).toFixed(2)) },
      note: `${((pruned / whole) * 100).toFixed(0)} % of a whole run; per round: ${growth.map((g) => (g / 1024).toFixed(0)).join(', ')} KB`,
    });
    report.figure(BENCH, 'what a pruned run keeps by design: its summary event + summary document, as stored', summary, 'KB', {
      digits: 2,
      note: `the rest of the growth (${(pruned - summary).toFixed(2)} KB) is indexes and partly filled pages`,
    });
  } finally {
    if (service) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    dir.cleanup();
  }
}

