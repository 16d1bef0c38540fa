/**
 * Profiling aid, not part of `npm run bench` (issue 29): where an async run's dispatch spends its
 * time on the distributed configuration (needs the servers: `set -a && . .servers/env`), one run at
 * a time, 60 ms apart. Per run: the request until its RunRequested append is called, the append,
 * the append until the 202, the append until a test consumer of the run topic received it (relay
 * + Kafka + consumer), and until the worker's claim (RunStarted) was appended.
 *   node --import tsx test/bench/profile-dispatch.ts
 */
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { NewEvent } from '../../ports/event-store.js';
import { startTestService } from '../support/test-service.js';
import { chainFlow, registerBenchUser } from './runs.js';
import { latency } from './support.js';

const received = new Map<string, number>();
const probe = { name: 'dispatch-probe', categories: ['run'], async handle(e: RecordedEvent) { if (e.type === 'RunRequested') received.set(e.streamId.slice('run-'.length), performance.now()); } };
const service = await startTestService('distributed', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' }, { consumers: [probe] });
const user = await registerBenchUser(service.baseUrl);
const flowId = await chainFlow(service.baseUrl, user, 2);
const appends = new Map<string, { called: number; done: number }>();
const store = service.services.eventStore;
const append = store.append.bind(store);
store.append = async (streamId: string, events: NewEvent[], expected) => {
  const called = performance.now();
  const out = await append(streamId, events, expected);
  for (const e of events) if (streamId.startsWith('run-')) appends.set(`${streamId.slice('run-'.length)}:${e.type}`, { called, done: performance.now() });
  return out;
};
const stages: Record<string, number[]> = {};
const add = (stage: string, ms: number) => Number.isFinite(ms) && (stages[stage] ??= []).push(ms);
for (let i = 0; i < Number(process.env.RUNS ?? 60); i++) {
  const t0 = performance.now();
  const res = await fetch(`${service.baseUrl}/flows/${flowId}/run`, { method: 'POST', headers: { ...user.auth, 'content-type': 'application/json' }, body: JSON.stringify({ inputs: { topic: 'idle' }, async: true }) });
  const answered = performance.now();
  const { processId } = JSON.parse(await res.text()) as { processId: string };
  await new Promise((r) => setTimeout(r, 60));
  const requested = appends.get(`${processId}:RunRequested`);
  const claimed = appends.get(`${processId}:RunStarted`);
  if (!requested) continue;
  add('request → append called', requested.called - t0);
  add('append', requested.done - requested.called);
  add('appended → 202', answered - requested.done);
  add('appended → consumer received', (received.get(processId) ?? NaN) - requested.done);
  add('appended → claim appended', (claimed?.done ?? NaN) - requested.done);
}
for (const [stage, values] of Object.entries(stages)) {
  const l = latency(values);
  console.log(`${stage.padEnd(30)} p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms  (${values.length})`);
}
await service.stop();
process.exit(0);
