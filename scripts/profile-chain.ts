/**
 * Profiles the run engine on a linear flow, in-process (no HTTP): `node --cpu-prof --import tsx
 * scripts/profile-chain.ts [nodes] [runs]`; prints ms per run and per node. Used for issue 18.
 */
import { randomUUID } from 'node:crypto';
import { requestRun } from '../commands/runs.js';
import { call } from '../test/support/http.js';
import { registerUser } from '../test/support/identity.js';
import { startTestService } from '../test/support/test-service.js';

const nodes = Number(process.argv[2] ?? 50);
const runs = Number(process.argv[3] ?? 30);
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
  for (let i = 0; i < 3; i++) await once();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await once();
  const ms = (performance.now() - t0) / runs;
  console.log(`${nodes}-node chain: ${ms.toFixed(1)} ms per run, ${(ms / nodes).toFixed(2)} ms per node (sequential, ${runs} runs)`);
} finally {
  await service.stop();
}
