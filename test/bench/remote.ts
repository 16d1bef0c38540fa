/**
 * Remote terminals: latency through the long poll with 100 connected terminals (simulated CLI
 * clients in this process, over HTTP on loopback). Each client long-polls `prompts/next?wait=30`,
 * and on a prompt posts one step then the answer, then polls again. The web side sends prompts to
 * terminals in turn (a few in flight) and times, from just before `POST …/prompts`:
 *   prompt → first step   (the step's POST answered, i.e. recorded)
 *   prompt → answer       (the answer's POST answered)
 * Embedded configuration; the whole run takes about 10–15 s.
 */
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startTestService } from '../support/test-service.js';
import { latency, now, type Report } from './support.js';

const BENCH = 'remote terminals';

export interface RemoteBenchOptions {
  terminals: number;
  /** Prompts in flight at once (each to a different terminal). */
  concurrency: number;
  /** The measuring phase stops after this long… */
  budgetMs: number;
  /** …but not before this many prompts were answered. */
  minPrompts: number;
  maxPrompts: number;
}

export const defaults: RemoteBenchOptions = { terminals: 100, concurrency: 4, budgetMs: 8_000, minPrompts: 50, maxPrompts: 400 };

export async function benchRemote(report: Report, o: RemoteBenchOptions = defaults): Promise<void> {
  const svc = await startTestService('embedded', { REMOTE_POLL_MAX_WAIT_SECONDS: '30' });
  const stop = new AbortController();
  try {
    const user = await registerUser(svc.baseUrl);
    const token = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'bench' }, user.auth);
    const cli = { Authorization: `Bearer ${token.body.token as string}`, 'content-type': 'application/json' };
    const web = user.auth;
    const terminalIds: string[] = [];
    for (let i = 0; i < o.terminals; i++) {
      const res = await call(svc.baseUrl, 'POST', '/remote/terminals', { name: `bench-${i}`, host: 'bench' }, cli);
      if (res.status !== 201) throw new Error(`register answered ${res.status}: ${res.text}`);
      terminalIds.push(res.body.terminal.id);
    }
    const firstStepAt = new Map<string, number>();
    const answeredAt = new Map<string, number>();
    const waiters = new Map<string, () => void>();

    // The simulated CLIs: poll, step, answer, poll again.
    const clients = terminalIds.map(async (tid) => {
      const base = `${svc.baseUrl}/remote/terminals/${tid}`;
      while (!stop.signal.aborted) {
        let body: any;
        try {
          const res = await fetch(`${base}/prompts/next?wait=30`, { headers: cli, signal: stop.signal });
          body = await res.json();
        } catch {
          return;
        }
        const prompt = body?.prompt;
        if (!prompt) continue;
        const step = await fetch(`${base}/prompts/${prompt.id}/steps`, { method: 'POST', headers: cli, body: JSON.stringify({ steps: [{ seq: 0, kind: 'status', content: 'started' }] }) });
        await step.arrayBuffer();
        firstStepAt.set(prompt.id, now());
        const answer = await fetch(`${base}/prompts/${prompt.id}/answer`, { method: 'POST', headers: cli, body: JSON.stringify({ content: `answer to ${prompt.content}`, status: 'completed' }) });
        await answer.arrayBuffer();
        answeredAt.set(prompt.id, now());
        waiters.get(prompt.id)?.();
      }
    });
    // Let every client's first poll reach the server.
    await new Promise((r) => setTimeout(r, 500));

    const toStep: number[] = [];
    const toAnswer: number[] = [];
    const started = now();
    let next = 0;
    const lane = async () => {
      while (toAnswer.length + o.concurrency <= o.maxPrompts && (now() - started < o.budgetMs || toAnswer.length < o.minPrompts)) {
        const tid = terminalIds[next++ % terminalIds.length];
        const t0 = now();
        const res = await call(svc.baseUrl, 'POST', `/remote/terminals/${tid}/prompts`, { content: `prompt ${next}` }, web);
        if (res.status !== 202) throw new Error(`send answered ${res.status}: ${res.text}`);
        const id = res.body.prompt.id as string;
        if (!answeredAt.has(id)) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`prompt ${id} not answered within 30 s`)), 30_000);
            waiters.set(id, () => {
              clearTimeout(timer);
              resolve();
            });
          });
          waiters.delete(id);
        }
        toStep.push(firstStepAt.get(id)! - t0);
        toAnswer.push(answeredAt.get(id)! - t0);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, lane));
    const step = latency(toStep);
    const answer = latency(toAnswer);
    const note = `${toAnswer.length} prompts, ${o.concurrency} in flight, ${o.terminals} terminals long-polling`;
    report.figure(BENCH, 'prompt → first step, p50', step.p50, 'ms', { digits: 1, note });
    report.figure(BENCH, 'prompt → first step, p99', step.p99, 'ms', { digits: 1 });
    report.figure(BENCH, 'prompt → answer, p50', answer.p50, 'ms', { digits: 1, target: { op: '<=', value: 100 } });
    report.figure(BENCH, 'prompt → answer, p99', answer.p99, 'ms', { digits: 1 });
    stop.abort();
    await Promise.all(clients);
  } finally {
    stop.abort();
    await svc.stop();
  }
}
