/**
 * Profiling aid, not part of `npm run bench`: runs only the HTTP benchmark, so that
 * `node --cpu-prof --import tsx test/bench/profile-http.ts` shows where a command request spends its time.
 */
import { benchHttp } from './http.js';
import { Report } from './support.js';

const report = new Report();
await benchHttp(report, { probes: 256, concurrency: 32, warmupMs: 500, durationMs: 4000 });
process.exit(0);
