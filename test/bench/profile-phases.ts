/**
 * Profiling aid, not part of `npm run bench` (issue 29): where the wall time of one request path
 * goes, by the ports it calls (appends, stream reads, read-model transactions, read-your-writes
 * waits), embedded default.
 *   node --import tsx test/bench/profile-phases.ts trigger   # sync 2-node public trigger, one at a time
 *   C=16 node --import tsx test/bench/profile-phases.ts workflow  # transform → wait_signal → transform
 * The HTTP client runs in a worker thread (scenario-load.ts); CPU is both threads'.
 */
import { call } from '../support/http.js';
import { startTestService } from '../support/test-service.js';
import { phaseTimer } from './phase-timer.js';
import { chainFlow, enableTrigger, registerBenchUser } from './runs.js';
import type { ScenarioName } from './bench-scenarios.js';
import { runScenario } from './scenario-load.js';

const what = process.argv[2] === 'workflow' ? 'workflow' : 'trigger';
const service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...(process.env.DURABILITY ? { DURABILITY: process.env.DURABILITY } : {}) });
const user = await registerBenchUser(service.baseUrl);
let scenario: ScenarioName;
let params: Record<string, string>;
let headers = user.auth;
if (what === 'trigger') {
  const flowId = await chainFlow(service.baseUrl, user, 2);
  headers = { 'X-Trigger-Key': await enableTrigger(service.baseUrl, user, flowId) };
  scenario = 'publicTrigger';
  params = { flowId };
} else {
  const created = await call(service.baseUrl, 'POST', '/flows', { name: 'phases' }, user.auth);
  const flowId = created.body.flow.id as string;
  const datas = [{ nodeType: 'transform', template: 'order {{inputs.order}}' }, { nodeType: 'wait_signal', signalName: 'approve' }, { nodeType: 'transform', template: 'approved {{inputs.order}}' }];
  const nodes = datas.map((data, i) => ({ id: `n${i}`, type: 'custom', position: { x: i * 200, y: 0 }, data }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: `n${i}`, target: node.id }));
  const put = await call(service.baseUrl, 'PUT', `/flows/${flowId}`, { name: 'phases', nodes, edges }, user.auth);
  if (put.status !== 200) throw new Error(put.text);
  scenario = 'workflowToCompletion';
  params = { flowId };
}
const { services } = service;
const timer = phaseTimer();
timer.wrap(services.eventStore, 'append', 'eventStore.append');
timer.wrap(services.eventStore, 'readStream', 'eventStore.readStream');
timer.wrap(services.projections, 'waitFor', 'projections.waitFor');
if ('atomically' in services.readStore) timer.wrap(services.readStore, 'atomically', 'readStore.atomically');
if (what === 'trigger') timer.wrap(services.runs, 'execute', 'runs.execute');
const concurrency = Number(process.env.C ?? 1);
const load = (durationMs: number) => runScenario({ scenario, baseUrl: service.baseUrl, headers, params, concurrency, warmupMs: 0, durationMs });
await load(1_000);
timer.on = true;
const cpu = process.cpuUsage();
const result = await load(5_000);
const used = process.cpuUsage(cpu);
const n = result.count;
console.log(`${what}, c=${concurrency}: ${n} in 5 s (${result.failures} failed${result.firstFailure ? `: ${result.firstFailure}` : ''}); wall ${(result.elapsedMs / n).toFixed(2)} ms per ${what} of the loop, CPU ${((used.user + used.system) / 1000 / n).toFixed(2)} ms`);
timer.print(n, what);
await service.stop();
process.exit(0);
