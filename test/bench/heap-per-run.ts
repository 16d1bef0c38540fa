/**
 * `npx tsx test/bench/heap-per-run.ts [runs]`: live heap per additional sync run, after full GCs.
 * The service runs with test/soak/heap-probe.ts (SIGUSR2: GC, then the live heap on stdout, and a
 * heap snapshot when HEAP_PROBE_SNAPSHOT_DIR is set) so growth is what the service keeps, not
 * garbage V8 has not collected yet. Diff the snapshots with test/soak/heap-diff.ts.
 */
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess } from '../support/service-process.js';
import { tempDir } from './support.js';

const RUNS = Number(process.argv[2] ?? 2000);
/** Runs before the first probe: enough to fill the bounded caches (runs projector 2,048, command handler 500 settled per decider). */
const WARM = Number(process.argv[3] ?? 3000);
const dir = tempDir('heap-per-run');
const env: Record<string, string> = { DATA_DIR: dir.path, LOG_LEVEL: 'warn', PORT: '0', RATE_LIMIT_AUTH_PER_MINUTE: '1000' };
if (process.env.HEAP_PROBE_SNAPSHOT_DIR) env.HEAP_PROBE_SNAPSHOT_DIR = process.env.HEAP_PROBE_SNAPSHOT_DIR;
const service = await startServiceProcess(env, [], 60_000, ['--expose-gc', '--import', join(import.meta.dirname, '..', 'soak', 'heap-probe.ts')]);
try {
  const user = await registerUser(service.baseUrl);
  const flow = await call(service.baseUrl, 'POST', '/flows', { name: 'heap' }, user.auth);
  const flowId = flow.body.flow.id as string;
  const ids: string[] = [];
  for (const [i, data] of [{ nodeType: 'transform', template: 'topic {{inputs.topic}}' }, { nodeType: 'transform', template: 'said {{previous}}' }].entries()) {
    const added = await call(service.baseUrl, 'POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: i * 100, y: 0 }, data }, user.auth);
    ids.push(added.body.node.id);
  }
  await call(service.baseUrl, 'POST', `/flows/${flowId}/connections`, { source: ids[0], target: ids[1] }, user.auth);
  const runs = async (n: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next++ < n) {
        const res = await call(service.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { topic: 'more' } }, user.auth);
        if (res.status !== 200) throw new Error(`run answered ${res.status}: ${res.text.slice(0, 200)}`);
      }
    }));
  };
  const probe = async () => {
    const seen = service.stdout().length;
    service.child.kill('SIGUSR2');
    for (;;) {
      const m = /\{"heapProbe":(\{[^}]*\})\}/.exec(service.stdout().slice(seen));
      if (m) return JSON.parse(m[1]) as { heapUsed: number; heapTotal: number; external: number; rss: number };
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await runs(WARM);
  await new Promise((r) => setTimeout(r, 1000));
  const a = await probe();
  await runs(RUNS);
  await new Promise((r) => setTimeout(r, 1000));
  const b = await probe();
  console.log(`live heap ${(a.heapUsed / 1048576).toFixed(1)} → ${(b.heapUsed / 1048576).toFixed(1)} MB over ${RUNS} runs: ${((b.heapUsed - a.heapUsed) / RUNS / 1024).toFixed(2)} KB/run; RSS ${(a.rss / 1048576).toFixed(0)} → ${(b.rss / 1048576).toFixed(0)} MB: ${((b.rss - a.rss) / RUNS / 1024).toFixed(2)} KB/run; heap committed ${(a.heapTotal / 1048576).toFixed(0)} → ${(b.heapTotal / 1048576).toFixed(0)} MB; external ${(a.external / 1048576).toFixed(1)} → ${(b.external / 1048576).toFixed(1)} MB`);
} finally {
  service.child.kill('SIGTERM');
  await service.exited;
  dir.cleanup();
}
