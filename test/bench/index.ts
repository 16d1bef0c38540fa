/**
 * `npm run bench` — measures, does not assert. Prints one line per figure as it is measured and
 * a Markdown table (figure, target, met) at the end for the README.
 *
 *   npm run bench                      every benchmark (about 5–8 minutes on 2 cores)
 *   npm run bench -- appends lag       only some: appends, replay, lag, kafka, http, auth, flows
 *
 * Exit code: 0 when every benchmark ran (whether or not targets are met), 1 when one failed.
 * The Kafka lag benchmark needs KAFKA_BROKERS (else a SKIP line).
 */
import os from 'node:os';
import { benchAppends } from './appends.js';
import { benchAuth } from './auth.js';
import { benchFlows } from './flows.js';
import { benchHttp } from './http.js';
import { benchKafkaLag } from './kafka-lag.js';
import { benchEmbeddedLag } from './lag.js';
import { benchReplay } from './replay.js';
import { benchRuns } from './runs.js';
import { benchRunsAsync } from './runs-async.js';
import { benchMcp } from './mcp.js';
import { benchMessaging } from './messaging.js';
import { benchDocuments } from './documents.js';
import { benchMemory } from './memory.js';
import { benchWorkflows } from './workflows.js';
import { benchRemote } from './remote.js';
import { benchApps } from './apps.js';
import { benchAgents } from './agents.js';
import { benchExtension } from './extension.js';
import { benchDurability } from './durability.js';
import { benchFootprint } from './footprint.js';
import { benchRetention } from './retention.js';
import { benchSnapshots } from './snapshots.js';
import { benchLive } from './live.js';
import { benchTracing } from './tracing.js';
import { Report, cleanupAllTempDirs, settle } from './support.js';

const benchmarks: Record<string, (report: Report) => Promise<void>> = {
  appends: benchAppends,
  replay: benchReplay,
  lag: benchEmbeddedLag,
  kafka: benchKafkaLag,
  http: benchHttp,
  auth: benchAuth,
  flows: benchFlows,
  runs: benchRuns,
  'runs-async': benchRunsAsync,
  mcp: benchMcp,
  messaging: benchMessaging,
  documents: benchDocuments,
  memory: benchMemory,
  workflows: benchWorkflows,
  remote: benchRemote,
  apps: benchApps,
  agents: benchAgents,
  extension: benchExtension,
  durability: benchDurability,
  footprint: benchFootprint,
  retention: benchRetention,
  snapshots: benchSnapshots,
  live: benchLive,
  // Last: it registers the trace SDK in this process.
  tracing: benchTracing,
};

/** Hard bound on the whole run: whatever hangs, the process ends. */
const WATCHDOG_MS = 900_000;

async function main(): Promise<number> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((a) => !(a in benchmarks));
  if (unknown.length) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${Object.keys(benchmarks).join(', ')}`);
    return 2;
  }
  const selected = asked.length ? Object.keys(benchmarks).filter((b) => asked.includes(b)) : Object.keys(benchmarks);
  const cpus = os.cpus();
  console.log(
    `bench: node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
  console.log('bench: figures vary with what else runs on the machine; compare runs on an idle machine.');

  const report = new Report();
  let failed = false;
  const started = performance.now();
  for (const name of selected) {
    const t0 = performance.now();
    console.log(`\n== ${name}`);
    try {
      await benchmarks[name](report);
    } catch (err) {
      failed = true;
      report.fail(name, (err as Error).stack ?? String(err));
    }
    console.log(`   (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    await settle();
  }
  console.log(`\nbench: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  console.log(report.markdown());
  console.log('\n_Measured in one process on the machine above; the HTTP load generator shares its CPU cores with the server._');
  return failed ? 1 : 0;
}

const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; giving up`);
  cleanupAllTempDirs();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanupAllTempDirs();
    process.exit(130);
  });
}

main()
  .then((code) => {
    cleanupAllTempDirs();
    // Explicit: a library's stray timer or socket must not keep a finished benchmark alive.
    process.exit(code);
  })
  .catch((err) => {
    console.error(err);
    cleanupAllTempDirs();
    process.exit(1);
  });
