/**
 * Profiling aid, not part of `npm run bench`: the sync public trigger of a 2-node flow at c=4 for
 * 5 s, so that `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/profile-trigger.ts`
 * shows where a triggered run spends its time (issue 29, item 3).
 */
import { startTestService } from '../support/test-service.js';
import { runLoad } from './load.js';
import { chainFlow, enableTrigger, registerBenchUser } from './runs.js';

const service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
const user = await registerBenchUser(service.baseUrl);
const flowId = await chainFlow(service.baseUrl, user, 2);
const key = await enableTrigger(service.baseUrl, user, flowId);
const base = new URL(service.baseUrl);
const result = await runLoad({
  host: '127.0.0.1', port: Number(base.port), method: 'POST', paths: [`${base.pathname}/public/flows/${flowId}/trigger`],
  headers: { 'X-Trigger-Key': key }, body: JSON.stringify({ topic: 'bench' }), concurrency: 4, warmupMs: 500, durationMs: 5_000,
});
console.log(`${result.requests} runs in ${(result.elapsedMs / 1000).toFixed(1)} s = ${(result.requests / (result.elapsedMs / 1000)).toFixed(0)}/s, ${result.failures} failed`);
await service.stop();
process.exit(0);
