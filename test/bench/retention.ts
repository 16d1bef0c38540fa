/**
 * `npm run bench -- retention` (issue 30, item 2's aim: "pruning keeps the disk flat under a
 * steady load once the retention window is full"). `dist/infra/main.js` (what `npm start` runs)
 * with RUN_HISTORY_KEEP_LAST = one round of runs and a one-second sweep; rounds of sync runs of a
 * 2-node flow (c=8). After each round, once the sweep has pruned what fell out of the window, the
 * disk the data folder takes (log, read models, WAL files) is measured. Same-run reference: the
 * first round, when nothing is pruned yet (every run whole); the aim compares the growth per run
 * once the window is full with it. What a pruned run still adds is its summary: RunHistoryPruned
 * in the log and the summary in the read model.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { buildDistIfStale, startBuiltServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { tempDir, type Report } from './support.js';

const BENCH = 'retention';
const ROUND = Number(process.env.BENCH_RETENTION_ROUND ?? 1_000);
const ROUNDS = Number(process.env.BENCH_RETENTION_ROUNDS ?? 6);
/** Once the window is full, a pruned run may add at most this share of what a whole run adds. */
const AIM_SHARE = 0.25;

const folderBytes = (dir: string) => readdirSync(dir).reduce((sum, f) => sum + (statSync(join(dir, f)).isFile() ? statSync(join(dir, f)).size : 0), 0);

export async function benchRetention(report: Report): Promise<void> {
  buildDistIfStale();
  const dir = tempDir('retention');
  const email = `retention-${Date.now()}@example.test`;
  const env = { DATA_DIR: dir.path, LOG_LEVEL: 'silent', PORT: '0', RUN_HISTORY_KEEP_LAST: String(ROUND), RUN_HISTORY_SWEEP_MS: '1000', ADMIN_EMAILS: email };
  let service: ServiceProcess | null = null;
  try {
    service = await startBuiltServiceProcess(env, 120_000);
    const svc = service;
    const user = await registerUser(svc.baseUrl, { email });
    const flowId = await twoNodeFlow(svc.baseUrl, user.auth);
    const overview = async () => (await call(svc.baseUrl, 'GET', '/system/overview', undefined, user.auth)).body.eventLog as { events: number };
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
            const res = await call(svc.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: `r${round}` } }, user.auth);
            if (res.status !== 200) throw new Error(`run answered ${res.status}: ${res.text.slice(0, 200)}`);
          }
        }),
      );
      if (round === 1) eventsPerRun = ((await overview()).events - before) / ROUND;
      // The window holds ROUND whole runs; every older run is one event (its summary).
      const expected = ROUND * eventsPerRun + (round - 1) * ROUND + 50;
      const deadline = Date.now() + 120_000;
      while ((await overview()).events > expected) {
        if (Date.now() > deadline) throw new Error(`the sweep did not prune round ${round} within 2 minutes`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const bytes = folderBytes(dir.path);
      growth.push(bytes - previous);
      console.log(`retention: round ${round}: ${(await overview()).events} events, data folder ${(bytes / 1024 / 1024).toFixed(1)} MB (+${((bytes - previous) / 1024).toFixed(0)} KB)`);
      previous = bytes;
    }
    const whole = growth[0] / ROUND / 1024;
    const steady = growth.slice(2);
    const pruned = steady.reduce((a, b) => a + b, 0) / steady.length / ROUND / 1024;
    report.figure(BENCH, `disk per run while every run is whole (round 1 of ${ROUND} runs; the reference)`, whole, 'KB', { digits: 2, note: `${eventsPerRun.toFixed(1)} events per run` });
    report.figure(BENCH, `disk per run once the window (${ROUND} runs) is full (rounds 3–${ROUNDS})`, pruned, 'KB', {
      digits: 2,
      target: { op: '<=', value: Number((whole * AIM_SHARE).toFixed(2)) },
      note: `${((pruned / whole) * 100).toFixed(0)} % of a whole run; per round: ${growth.map((g) => (g / 1024).toFixed(0)).join(', ')} KB`,
    });
  } finally {
    if (service) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    dir.cleanup();
  }
}

async function twoNodeFlow(baseUrl: string, auth: Record<string, string>): Promise<string> {
  const created = await call(baseUrl, 'POST', '/flows', { name: 'retention' }, auth);
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
