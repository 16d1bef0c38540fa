/**
 * Profiling aid, not part of `npm run bench`: the sync public trigger of a 2-node flow at c=4 for
 * 5 s, so that `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/profile-trigger.ts`
 * shows where a triggered run spends its time (issue 29, item 3).
 */
import { startTestService } from '../support/test-service.js';
import { runLoad } from './load.js';
import { triggerLoad } from './runs.js';

const service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...(process.env.DURABILITY ? { DURABILITY: process.env.DURABILITY } : {}) });
const result = await runLoad(await triggerLoad(service, { concurrency: Number(process.env.C ?? 4), warmupMs: 500, durationMs: 5_000 }));
const sorted = [...result.latencies].sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
console.log(`p50 ${at(0.5)} ms, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}`);
console.log(`${result.requests} runs in ${(result.elapsedMs / 1000).toFixed(1)} s = ${(result.requests / (result.elapsedMs / 1000)).toFixed(0)}/s, ${result.failures} failed`);
await service.stop();
process.exit(0);
