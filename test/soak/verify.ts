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

  let pendingRuns = acked.asyncRuns;
  const runProblems = await eventually(deadline, async () => {
    const still: typeof pendingRuns = [];
    const problems = await inBatches(pendingRuns, 16, async (run) => {
      const res = await call(baseUrl, 'GET', `/processes/${run.processId}`, undefined, run.auth);
      if (res.status !== 200) return still.push(run), `run ${run.processId}: GET answered ${res.status}`;
      if (!FINAL_RUN.has(res.body.process.status)) return still.push(run), `run ${run.processId}: still ${res.body.process.status}`;
      if (res.body.process.status !== 'completed') return `run ${run.processId}: ended ${res.body.process.status}`;
      return null;
    });
    pendingRuns = still;
    return problems;
  });
  results.push({ name: 'every async run reached a final state (completed)', checked: acked.asyncRuns.length, problems: runProblems });

  const docProblems = await inBatches(acked.documents, 16, async (d) => {
    const res = await call(baseUrl, 'GET', `/db/collections/${d.collection}/documents/${d.id}`, undefined, d.auth);
    if (res.status !== 200) return `document ${d.collection}/${d.id}: GET answered ${res.status}`;
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
