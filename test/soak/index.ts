/**
 * `npm run soak -- --minutes N [--mode embedded|distributed|all] [--seed S] [--concurrency C] [--faults]`
 *
 * Runs the real service as a child process (app/main.ts, every role) on each configuration and
 * drives a mixed load at it for N minutes (mix.ts: flow edits, sync and async runs, messages whose
 * webhooks go to a receiver failing 30 % of attempts, MCP tool calls, document writes and searches,
 * memory saves, logins). At the end it checks (verify.ts) that every acknowledged write is readable,
 * every async run completed, every webhook delivery succeeded or was recorded as failed, every MCP
 * call succeeded or was retried to success (mcp-calls.ts: transient answers retried as a user would), that every
 * answer matched the OpenAPI document, and that the service's heap and open handles stayed within a
 * bound of what they were after the warm-up. Exit code 1 when a check failed. The seed is printed:
 * `--seed` replays the same choice of operations. `--faults` (faults.ts) makes the servers underneath
 * the distributed configuration fail while the mix runs, and kills a second worker process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { responseMismatches, responseStats } from '../support/http.js';
import { mcpTestEnv } from '../support/mcp-servers.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { WEIGHTS, pick, prng, runOp, setUpActor, setUpMcp, type Acknowledged, type Actor, type OpKind } from './mix.js';
import { excuseMcpFailure, mcpCheck, newMcpTally, reportMcp } from './mcp-calls.js';
import { Sampler, heapProbeNodeArgs } from './sampler.js';
import { verify, verifyFlows, type CheckResult } from './verify.js';
import { FaultInjector, latestFaultStartMs, planFaults, RECOVERY_GRACE_MS } from './faults.js';
import { diagnose } from './diagnose.js';
import { login, registerUser, type RegisteredUser } from '../support/identity.js';

interface Options {
  minutes: number;
  modes: Array<'embedded' | 'distributed'>;
  seed: number;
  concurrency: number;
  faults: boolean;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const minutes = Number(value('minutes') ?? '3');
  if (!(minutes > 0)) throw new Error('--minutes must be a positive number');
  const distributedAvailable = Boolean(process.env.KAFKA_BROKERS && process.env.MONGODB_URL);
  const mode = value('mode') ?? 'all';
  const modes: Options['modes'] = mode === 'all' ? (distributedAvailable ? ['embedded', 'distributed'] : ['embedded']) : [mode as 'embedded' | 'distributed'];
  if (mode === 'all' && !distributedAvailable) console.log('SKIP distributed soak: KAFKA_BROKERS and MONGODB_URL are not set');
  if (modes.includes('distributed') && !distributedAvailable) throw new Error('--mode distributed needs KAFKA_BROKERS and MONGODB_URL');
  const seed = Number(value('seed') ?? Math.floor(Math.random() * 2 ** 31));
  const concurrency = Number(value('concurrency') ?? '6');
  return { minutes, modes, seed, concurrency, faults: argv.includes('--faults') };
}

const METRICS_TOKEN = `soak-${randomBytes(12).toString('hex')}`;
/** Reads the projections' state and the dead letters when a check fails (diagnose.ts). */
const OPERATOR_EMAIL = `soak-operator-${randomBytes(4).toString('hex')}@example.test`;

function serviceEnv(mode: 'embedded' | 'distributed', dataDir: string): Record<string, string> {
  const id = randomBytes(4).toString('hex');
  const env: Record<string, string> = {
    ...mcpTestEnv(),
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    METRICS_TOKEN,
    ADMIN_EMAILS: OPERATOR_EMAIL,
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    ALLOW_PRIVATE_NETWORK: 'true',
    // A flaky receiver must settle within the soak: short back-off, few attempts.
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '2000',
    WEBHOOK_MAX_ATTEMPTS: '4',
  };
  if (process.env.HEAP_PROBE_SNAPSHOT_DIR) env.HEAP_PROBE_SNAPSHOT_DIR = process.env.HEAP_PROBE_SNAPSHOT_DIR;
  if (mode === 'distributed') Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `soak_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `soak-${id}` });
  // Rate limits shared through Redis, as a deployment of several API processes has them.
  if (mode === 'distributed' && process.env.REDIS_URL) env.RATE_LIMIT_REDIS_URL = process.env.REDIS_URL;
  return env;
}

async function soakOne(mode: 'embedded' | 'distributed', o: Options): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-soak-'));
  const secret = `soak-${randomBytes(8).toString('hex')}`;
  const flakyRand = prng(o.seed ^ 0x5a5a);
  const receiver = await startWebhookReceiver(secret, () => (flakyRand() < 0.3 ? { status: 500 } : { status: 200, delayMs: Math.floor(flakyRand() * 50) }));
  let service: ServiceProcess | null = null;
  let worker: ServiceProcess | null = null;
  const faulted = o.faults && mode === 'distributed';
  const label = `soak ${mode}${faulted ? ' with faults' : ''}`;
  try {
    const env = serviceEnv(mode, dataDir);
    service = await startServiceProcess(env, [], 60_000, heapProbeNodeArgs());
    const baseUrl = service.baseUrl;
    // Faults kill a second worker process (sharing the data dir and the servers), never the service.
    if (faulted) worker = await startServiceProcess(env, ['--role', 'worker'], 90_000);
    const injector = faulted
      ? new FaultInjector(
          {
            kill: async () => {
              worker?.child.kill('SIGKILL');
              await worker?.exited;
            },
            start: async () => {
              worker = await startServiceProcess(env, ['--role', 'worker'], 90_000);
            },
          },
          (line) => console.log(`[${label}] ${line}`),
        )
      : null;
    const operator = await registerUser(baseUrl, { email: OPERATOR_EMAIL });
    const actors: Actor[] = [];
    for (let i = 0; i < o.concurrency; i++) actors.push(await setUpActor(baseUrl, i, receiver.url, secret));
    const mcp = { serverId: await setUpMcp(baseUrl, actors[0].user), owner: actors[0].user, tally: newMcpTally() };
    const acked: Acknowledged = { flowEdits: new Map(), asyncRuns: [], documents: [], memories: [], messagesTo: new Map() };
    const counts = new Map<OpKind, { ok: number; failed: number; excused: number; ms: number[] }>(Object.keys(WEIGHTS).map((k) => [k as OpKind, { ok: 0, failed: 0, excused: 0, ms: [] }]));
    const failures: string[] = [];
    const sampler = new Sampler(service, METRICS_TOKEN);
    const operationsDone = () => [...counts.values()].reduce((n, c) => n + c.ok + c.failed, 0);
    await sampler.sample('start', 0);

    const durationMs = o.minutes * 60_000;
    const started = Date.now();
    const warmupAt = started + Math.min(60_000, durationMs * 0.25);
    let warmSampled = false;
    console.log(`[${label}] seed ${o.seed}, ${o.concurrency} actors, ${o.minutes} min, mix ${JSON.stringify(WEIGHTS)}`);
    const plan = injector ? planFaults(o.seed, durationMs) : [];
    if (injector) console.log(`[${label}] faults planned: ${plan.map((f) => `${f.kind} at ${Math.round(f.atMs / 1000)} s`).join(', ')}`);
    const stopFaults = new AbortController();
    const faultsDone = injector ? injector.run(plan, started, latestFaultStartMs(durationMs), stopFaults.signal) : Promise.resolve();
    const progress = setInterval(() => {
      const done = operationsDone();
      console.log(`[${label}] ${Math.round((Date.now() - started) / 1000)} s: ${done} operations, ${failures.length} failed`);
    }, 30_000);
    await Promise.all(
      actors.map(async (actor, i) => {
        const rand = prng(o.seed + i);
        while (Date.now() - started < durationMs) {
          if (!warmSampled && Date.now() >= warmupAt) {
            warmSampled = true;
            await sampler.sample('after warm-up', operationsDone());
          }
          const kind = pick(rand);
          const t0 = performance.now();
          const startedAt = Date.now();
          const entry = counts.get(kind)!;
          try {
            await runOp(kind, baseUrl, actor, mcp, acked, rand);
            entry.ok++;
            entry.ms.push(performance.now() - t0);
            injector?.succeeded(startedAt);
          } catch (err) {
            if (injector?.excuse(startedAt, Date.now())) {
              entry.excused++;
              if (kind === 'mcp_call') excuseMcpFailure(mcp.tally, (err as Error).message);
              continue;
            }
            entry.failed++;
            // The first few of each kind: one kind failing often must not hide another failing once.
            if (entry.failed <= 3) failures.push(`${kind}: ${(err as Error).message}`);
          }
        }
      }),
    );
    clearInterval(progress);
    stopFaults.abort();
    await faultsDone;
    // A fault whose server came back as the load ended (a Kafka restart takes up to a minute) has had
    // no operation after it yet: rounds of the mix, until each has one or a minute passed, show
    // whether the service recovered. Failures here are judged as under load.
    const recoveryRand = prng(o.seed ^ 0x7e57);
    for (const until = Date.now() + 60_000; injector?.windows.some((w) => w.firstSuccessAfterMs === null) && Date.now() < until; ) {
      for (const kind of Object.keys(WEIGHTS) as OpKind[]) {
        const startedAt = Date.now();
        try {
          await runOp(kind, baseUrl, actors[0], mcp, acked, recoveryRand);
          injector.succeeded(startedAt);
        } catch (err) {
          if (injector.excuse(startedAt, Date.now())) {
            if (kind === 'mcp_call') excuseMcpFailure(mcp.tally, (err as Error).message);
            continue;
          }
          failures.push(`${kind} after the load: ${(err as Error).message}`);
        }
      }
    }
    const elapsed = (Date.now() - started) / 1000;

    for (const [kind, c] of counts) {
      const sorted = c.ms.sort((a, b) => a - b);
      const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(1) : '-');
      console.log(`[${label}] ${kind.padEnd(12)} ${String(c.ok).padStart(6)} ok ${String(c.failed).padStart(4)} failed${injector ? ` ${String(c.excused).padStart(4)} during faults` : ''}  ${(c.ok / elapsed).toFixed(1).padStart(6)}/s  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms`);
    }

    // Access tokens last JWT_TTL_SECONDS (1 h): a soak that long checks with fresh ones, as a client would.
    await renewTokens(baseUrl, [operator, ...actors.map((a) => a.user)]);
    for (const line of await reportMcp(baseUrl, mcp)) console.log(`[${label}] ${line}`);
    const checks: CheckResult[] = [];
    checks.push({ name: injector ? `no operation failed under load, but during a fault or ${RECOVERY_GRACE_MS / 1000} s after it` : 'no operation failed under load', checked: operationsDone(), problems: failures });
    if (injector) {
      for (const w of injector.windows) {
        console.log(`[${label}] fault ${w.kind.padEnd(8)} at ${Math.round((w.startedAt - started) / 1000)} s, down ${((w.upAt! - w.startedAt) / 1000).toFixed(1)} s, ${w.excused} operations failed meanwhile, first success ${w.firstSuccessAfterMs === null ? 'never' : `${(w.firstSuccessAfterMs / 1000).toFixed(1)} s`} after it was back`);
      }
      const problems = injector.windows.flatMap((w) => [
        ...(w.error ? [`${w.kind}: the restart failed: ${w.error}`] : []),
        ...(w.firstSuccessAfterMs === null ? [`${w.kind} at ${Math.round((w.startedAt - started) / 1000)} s: no operation succeeded after it was back`] : []),
      ]);
      if (service.child.exitCode !== null || service.child.signalCode !== null) problems.push(`the service exited (${service.child.exitCode ?? service.child.signalCode})`);
      if (injector.windows.length === 0) problems.push('no fault was injected: the soak is too short for --faults');
      checks.push({ name: 'the service recovered from every fault by itself', checked: injector.windows.length, problems });
    }
    checks.push(mcpCheck(mcp.tally));
    // Faulted, a projection's batch may have stalled on a restarted server just before the end: it
    // is abandoned after PROJECTION_STALL_MS (120 s) and projected again, so wait beyond that.
    checks.push(...(await verify(baseUrl, acked, faulted ? 180_000 : 90_000)));
    checks.push(await verifyFlows(baseUrl, actors.map((a) => ({ flowId: a.flowId, acked: acked.flowEdits.get(a.flowId) ?? 0, attempted: a.edits, auth: a.user.auth }))));
    checks.push({ name: 'every answer matched the OpenAPI document', checked: responseStats.validated, problems: responseMismatches.splice(0).slice(0, 20).map((m) => JSON.stringify(m).slice(0, 300)) });
    await sampler.sample('end', operationsDone());
    checks.push(sampler.growthCheck('after warm-up', 'end', mode));
    const delivered = receiver.accepted().size;
    console.log(`[${label}] receiver: ${receiver.received.length} attempts, ${delivered} deliveries accepted`);
    // Printed whether or not a check fails: how often the projection runner had to abandon a stalled batch.
    const stalls = (service.stdout().match(/"msg":"projection failed"[^\n]*stalled|stalled[^\n]*"msg":"projection failed"/g) ?? []).length;
    console.log(`[${label}] projection batches abandoned as stalled (120 s): ${stalls}`);
    for (const s of sampler.samples) console.log(`[${label}] ${s.label.padEnd(14)} ${String(s.operations).padStart(6)} operations, live heap ${(s.heapUsed / 2 ** 20).toFixed(1)} MiB, rss ${(s.rss / 2 ** 20).toFixed(1)} MiB, active handles ${s.handles}`);
    let ok = true;
    for (const check of checks) {
      const passed = check.problems.length === 0;
      ok &&= passed;
      console.log(`[${label}] ${passed ? 'PASS' : 'FAIL'} ${check.name} (${check.checked} checked)`);
      for (const p of check.problems.slice(0, 30)) console.log(`[${label}]      ${p}`);
    }
    if (!ok) {
      const processes = [{ name: `${mode}-service`, process: service }, { name: `${mode}-worker`, process: worker as ServiceProcess | null }];
      for (const line of await diagnose(baseUrl, operator.auth, processes)) console.log(`[${label}] diagnosis: ${line}`);
    }
    return ok;
  } finally {
    const extra = worker as ServiceProcess | null;
    if (extra && extra.child.exitCode === null && extra.child.signalCode === null) {
      extra.child.kill('SIGTERM');
      await Promise.race([extra.exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
    if (service) {
      service.child.kill('SIGTERM');
      await Promise.race([service.exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const options = parseArgs(process.argv.slice(2));
let allOk = true;
for (const mode of options.modes) {
  try {
    allOk = (await soakOne(mode, options)) && allOk;
  } catch (err) {
    console.log(`[soak ${mode}] FAIL: ${(err as Error).stack ?? err}`);
    allOk = false;
  }
}
console.log(`soak: ${allOk ? 'PASS' : 'FAIL'} (seed ${options.seed}; replay with --seed ${options.seed})`);
process.exit(allOk ? 0 : 1);

/** Logs each user in again and puts the new token into the same `auth` object every acknowledged write holds. */
async function renewTokens(baseUrl: string, users: RegisteredUser[]): Promise<void> {
  for (const user of users) {
    const res = await login(baseUrl, user.email, user.password);
    if (!res.auth) throw new Error(`logging ${user.email} in again for the checks answered ${res.status}`);
    Object.assign(user.auth, res.auth);
  }
}
