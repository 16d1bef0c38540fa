/**
 * The soak's end checks: everything the service acknowledged under load is there afterwards.
 * Each check waits (bounded) for asynchronous work to finish, then lists what is still wrong.
 */
import { call } from '../support/http.js';
import type { Acknowledged } from './mix.js';

const FINAL_RUN = new Set(['completed', 'failed', 'stopped', 'timed_out']);

export interface CheckResult {
  name: string;
  checked: number;
  problems: string[];
}

async function eventually(deadline: number, attempt: () => Promise<string[]>): Promise<string[]> {
  let problems = await attempt();
  while (problems.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1_000));
    problems = await attempt();
  }
  return problems;
}

/**
 * Checks items until none is pending or the deadline passed. `check` answers null (fine), a
 * problem that waiting cannot change (kept for the report), or `{ pending }` (checked again).
 */
async function untilSettled<T>(deadline: number, items: T[], check: (item: T) => Promise<string | { pending: string } | null>): Promise<string[]> {
  const final: string[] = [];
  let pending = items;
  let waiting: string[] = [];
  for (;;) {
    const still: T[] = [];
    waiting = [];
    await inBatches(pending, 16, async (item) => {
      const found = await check(item);
      if (typeof found === 'string') final.push(found);
      else if (found) still.push(item), waiting.push(found.pending);
      return null;
    });
    pending = still;
    if (!pending.length || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return [...final, ...waiting];
}

async function inBatches<T>(items: T[], size: number, each: (item: T) => Promise<string | null>): Promise<string[]> {
  const problems: string[] = [];
  for (let i = 0; i < items.length; i += size) {
    const found = await Promise.all(items.slice(i, i + size).map(each));
    for (const p of found) if (p) problems.push(p);
  }
  return problems;
}

export async function verify(baseUrl: string, acked: Acknowledged, waitMs: number): Promise<CheckResult[]> {
  const deadline = Date.now() + waitMs;
  const results: CheckResult[] = [];

  const runProblems = await untilSettled(deadline, acked.asyncRuns, async (run) => {
    const res = await call(baseUrl, 'GET', `/processes/${run.processId}`, undefined, run.auth);
    if (res.status !== 200) return { pending: `run ${run.processId}: GET answered ${res.status}` };
    if (!FINAL_RUN.has(res.body.process.status)) return { pending: `run ${run.processId}: still ${res.body.process.status}` };
    return res.body.process.status === 'completed' ? null : `run ${run.processId}: ended ${res.body.process.status}`;
  });
  results.push({ name: 'every async run reached a final state (completed)', checked: acked.asyncRuns.length, problems: runProblems });

  // A write answered with `X-Read-Model: pending` (its projection was behind, e.g. during a fault)
  // may show a little later; one still missing when the wait is over is lost.
  const docProblems = await untilSettled(deadline, acked.documents, async (d) => {
    const res = await call(baseUrl, 'GET', `/db/collections/${d.collection}/documents/${d.id}`, undefined, d.auth);
    if (res.status !== 200) return { pending: `document ${d.collection}/${d.id}: GET answered ${res.status}` };
    return JSON.stringify(res.body.document) === JSON.stringify({ _id: d.id, ...d.document }) ? null : `document ${d.collection}/${d.id}: differs: ${res.text.slice(0, 200)}`;
  });
  results.push({ name: 'every acknowledged document is readable as written', checked: acked.documents.length, problems: docProblems });

  const memoryProblems = await inBatches(acked.memories, 16, async (m) => {
    const res = await call(baseUrl, 'GET', `/db/memory/${m.id}/history`, undefined, m.auth);
    return res.status === 200 ? null : `memory ${m.id}: history answered ${res.status}`;
  });
  results.push({ name: 'every acknowledged memory is readable', checked: acked.memories.length, problems: memoryProblems });

  const targets = [...acked.messagesTo.entries()];
  const deliveryProblems = await eventually(deadline, async () => {
    const problems: string[] = [];
    for (const [sessionId, { auth, count }] of targets) {
      const all: Array<{ id: string; status: string }> = [];
      let cursor: string | null = null;
      do {
        const res = await call(baseUrl, 'GET', `/messaging/sessions/${sessionId}/webhook/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, undefined, auth);
        if (res.status !== 200) {
          problems.push(`deliveries of ${sessionId}: ${res.status}`);
          break;
        }
        all.push(...res.body.items);
        cursor = res.body.nextCursor;
      } while (cursor);
      const pending = all.filter((d) => d.status === 'pending').length;
      if (all.length < count) problems.push(`session ${sessionId}: ${count} messages sent, ${all.length} deliveries recorded`);
      if (pending > 0) problems.push(`session ${sessionId}: ${pending} deliveries still pending`);
    }
    return problems;
  });
  results.push({ name: 'every webhook delivery is delivered or recorded as failed', checked: targets.reduce((n, [, t]) => n + t.count, 0), problems: deliveryProblems });
  return results;
}

/**
 * Flows are checked with their owner's credential. A flow may show a later edit than the last one
 * acknowledged (an edit durable in the log whose answer a kill cut off), never an earlier one.
 */
export async function verifyFlows(baseUrl: string, flows: Array<{ flowId: string; acked: number; attempted: number; auth: Record<string, string> }>): Promise<CheckResult> {
  const problems = await inBatches(flows, 16, async (f) => {
    const res = await call(baseUrl, 'GET', `/flows/${f.flowId}`, undefined, f.auth);
    if (res.status !== 200) return `flow ${f.flowId}: GET answered ${res.status}`;
    const shown = Number(/ v(\d+)$/.exec(res.body.flow.name)?.[1] ?? -1);
    return shown >= f.acked && shown <= f.attempted ? null : `flow ${f.flowId}: shows edit ${shown}, last acknowledged ${f.acked}, last attempted ${f.attempted}`;
  });
  return { name: 'every flow shows its last acknowledged edit (or a later attempted one)', checked: flows.length, problems };
}
