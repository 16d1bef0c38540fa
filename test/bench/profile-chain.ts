/**
 * Profiling aid, not part of `npm run bench`: the 50-node chain (transform and offline LLM nodes)
 * run in-process one at a time for 8 s, so that
 * `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/profile-chain.ts` shows where a
 * node's time goes (issue 29; the `runs` bench's "ms per node" figure).
 */
import { randomUUID } from 'node:crypto';
import { requestRun } from '../../commands/runs.js';
import type { CommandContext } from '../../commands/handle.js';
import { registerUser } from '../support/identity.js';
import { startTestService } from '../support/test-service.js';
import { chainFlow } from './runs.js';

const service = await startTestService('embedded', { LOG_LEVEL: 'silent', ...(process.env.DURABILITY ? { DURABILITY: process.env.DURABILITY } : {}) });
const registered = await registerUser(service.baseUrl);
const user = { userId: registered.user.id, auth: registered.auth, token: registered.token };
const nodes = Number(process.env.NODES ?? 50);
const flowId = await chainFlow(service.baseUrl, user as never, nodes);
const { services } = service;
const samples: number[] = [];
const until = performance.now() + 8_000;
while (performance.now() < until) {
  const context: CommandContext = { actorId: user.userId, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: services.now() };
  const processId = services.newId();
  const started = performance.now();
  await requestRun(services.eventStore, context, processId, { flowId, mode: 'flow', inputs: { topic: 'bench' }, async: false, requestedBy: user.userId, source: 'api', scope: { userId: user.userId, orgId: null, workspaceId: null }, claimBy: services.runs.localWorkerId });
  const state = await services.runs.execute(processId, services.runs.localWorkerId);
  if (state.status !== 'completed') throw new Error(`run ended ${state.status}`);
  samples.push(performance.now() - started);
}
samples.sort((a, b) => a - b);
console.log(`${samples.length} runs; p50 ${samples[Math.floor(samples.length / 2)]!.toFixed(1)} ms = ${(samples[Math.floor(samples.length / 2)]! / nodes).toFixed(2)} ms per node`);
await service.stop();
process.exit(0);
