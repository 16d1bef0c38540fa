/**
 * Profiles the run engine on a linear flow, in-process (no HTTP): `node --import tsx
 * scripts/profile-chain.ts [nodes] [runs] [concurrency] [profile-file]`; prints ms per run and per node.
 * Figures count until the read model shows every run completed (the projector runs in this process).
 * With a profile file, a CPU profile of the measured runs only (after start-up and warm-up) is written
 * there (open it in Chrome DevTools or speedscope). Used for issue 18.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { requestRun } from '../commands/runs.js';
import { call } from '../test/support/http.js';
import { registerUser } from '../test/support/identity.js';
import { startTestService } from '../test/support/test-service.js';

const nodes = Number(process.argv[2] ?? 50);
const runs = Number(process.argv[3] ?? 30);
const concurrency = Number(process.argv[4] ?? 1);
const profileFile = process.argv[5];
const service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
try {
  const user = await registerUser(service.baseUrl);
  const created = await call(service.baseUrl, 'POST', '/flows', { name: 'chain' }, user.auth);
  const flowId = created.body.flow.id as string;
  const list = Array.from({ length: nodes }, (_, i) => ({
    id: `n${i}`, type: 'custom', position: { x: i * 200, y: 0 },
    data: i % 2 === 0 ? { nodeType: 'transform', template: `step ${i} on {{inputs.topic}}` } : { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'summarize: {{previous}}' },
  }));
  const edges = list.slice(1).map((n, i) => ({ id: `e${i}`, source: `n${i}`, target: n.id }));
  const put = await call(service.baseUrl, 'PUT', `/flows/${flowId}`, { name: 'chain', nodes: list, edges }, user.auth);
  if (put.status !== 200) throw new Error(put.text);
  const { services } = service;
  const scope = { userId: user.user.id, orgId: null, workspaceId: null };
  const once = async () => {
    const context = { actorId: user.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: services.now() };
    const processId = services.newId();
    await requestRun(services.eventStore, context, processId, { flowId, mode: 'flow', inputs: { topic: 'p' }, async: false, requestedBy: user.user.id, source: 'api', scope, claimBy: services.runs.localWorkerId });
    const state = await services.runs.execute(processId, services.runs.localWorkerId);
    if (state.status !== 'completed') throw new Error(state.status);
  };
  const batch = async (count: number) => {
    let left = count;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await once();
    }));
  };
  // The projector works behind the runs in this same process: a figure counts only once the read model caught up.
  const projected = async () => (await services.readStore.collection<{ _id: string; status: string }>('processes').find({ flowId, status: 'completed' })).length;
  const catchUp = async (expected: number) => {
    const since = performance.now();
    while ((await projected()) < expected) {
      if (performance.now() - since > 60_000) throw new Error(`the read model shows ${await projected()} completed runs of ${expected} after 60 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    return performance.now() - since;
  };
  const warmup = Math.max(3, concurrency);
  await batch(warmup);
  await catchUp(warmup);
  const session = profileFile ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  const commits = () => ({ ...((services.eventStore as { inner?: { commitStats?: { commits: number; appends: number } } }).inner?.commitStats ?? { commits: 0, appends: 0 }) });
  const commits0 = commits();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await batch(runs);
  const runsMs = (performance.now() - t0) / runs;
  const lagMs = await catchUp(warmup + runs);
  const ms = (performance.now() - t0) / runs;
  const cpu = process.cpuUsage(cpu0);
  if (session && profileFile) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
  }
  const cpuMs = (cpu.user + cpu.system) / 1000 / runs;
  const commits1 = commits();
  const grouping = commits1.commits > commits0.commits ? `; ${((commits1.appends - commits0.appends) / runs).toFixed(0)} appends per run, ${((commits1.appends - commits0.appends) / (commits1.commits - commits0.commits)).toFixed(2)} per commit` : '';
  console.log(`runs alone: ${runsMs.toFixed(1)} ms of wall time per run; the read model caught up ${lagMs.toFixed(0)} ms after the last run (counted below)`);
  console.log(`${nodes}-node chain: ${ms.toFixed(1)} ms of wall time per run, ${(ms / nodes).toFixed(3)} ms per node; CPU ${cpuMs.toFixed(1)} ms per run, ${(cpuMs / nodes).toFixed(3)} ms per node (${runs} runs, ${concurrency} at a time)${grouping}`);
} finally {
  await service.stop();
}
