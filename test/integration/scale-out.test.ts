import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * Scale-out shown (issue 18 item 5): two API processes, one projector and two worker processes on
 * Kafka + MongoDB-wire. 1,000 async runs are requested over both APIs and executed over both
 * workers; one worker is SIGKILLed mid-load, and its partitions (Kafka rebalance) and its in-flight
 * runs (runs-recovery.ts takes over runs whose worker stopped beating) move to the other. Every
 * run's own stream is then checked: claimed once, each node completed exactly once (started again
 * only when a takeover interrupted it), completed once; nothing lost, nothing doubled.
 */
const RUNS = Number(process.env.SCALE_OUT_RUNS ?? 1000);
const CONCURRENCY = 8;
const HEARTBEAT_MS = 1000;
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP scale-out: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
const pidOf = (workerId: string) => Number(/:(\d+):[0-9a-f]{8}$/.exec(workerId)?.[1]);
const count = <T>(items: T[], pred: (t: T) => boolean) => items.filter(pred).length;
/** Retries a request whose connection failed (never one that got an answer). */
async function withRetries<T>(request: (attempt: number) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await request(attempt);
    } catch (err) {
      if (attempt + 1 >= attempts || !(err instanceof TypeError && /fetch failed/.test(err.message))) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
/** CPU time (user + system) of a live process in ms, from /proc (Linux; null elsewhere): the capacity model's per-role cost. */
function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

(distributed ? describe : describe.skip)('scale-out: 2 APIs, 1 projector, 2 workers on Kafka + MongoDB-wire', function () {
  // About 2 minutes on an idle 2-core machine; the bounds leave room for one loaded by other work (load average 40+).
  this.timeout(600_000);
  let group: DistributedProcessGroup | null = null;
  let store: SqliteEventStore | null = null;
  after(async () => {
    await store?.close();
    await group?.stop();
  });

  it(`${RUNS} async runs over both APIs run exactly once over both workers; a worker killed mid-load loses and doubles nothing`, async () => {
    group = new DistributedProcessGroup('scale');
    const env = group.env({
      // Six partitions per topic: both workers get a share of the run topic, and keep one after the other's death.
      KAFKA_PARTITIONS: '6',
      // Shortened for the test: a worker silent for 3 × 1 s is dead; the relay moves within 2 s.
      WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS),
      RELAY_FAILOVER_MS: '2000',
    });
    // One at a time: two processes creating the same SQLite log and topics at once only slow each other down on 2 cores.
    const apis: ServiceProcess[] = [];
    const workers: ServiceProcess[] = [];
    apis.push(await group.startRole(env, 'api'));
    await group.startRole(env, 'projector');
    workers.push(await group.startRole(env, 'worker'));
    workers.push(await group.startRole(env, 'worker'));
    apis.push(await group.startRole(env, 'api'));
    store = new SqliteEventStore(join(group.dataDir, 'events.db'));

    const user = await registerUser(apis[0].baseUrl);
    const flow = await call(apis[0].baseUrl, 'POST', '/flows', { name: 'scale-out' }, user.auth);
    expect(flow.status, flow.text).to.equal(201);
    const flowId = flow.body.flow.id as string;
    // transform → delay 200 ms → transform: every worker holds runs in flight at any moment of the load.
    const ids: string[] = [];
    for (const [i, data] of [{ nodeType: 'transform', template: 'run {{inputs.i}}' }, { nodeType: 'delay', delayMs: 200 }, { nodeType: 'transform', template: 'done {{previous}}' }].entries()) {
      const added = await call(apis[0].baseUrl, 'POST', `/flows/${flowId}/nodes`, node(data, i * 100), user.auth);
      expect(added.status, added.text).to.equal(201);
      ids.push(added.body.node.id);
    }
    for (let i = 1; i < ids.length; i++) {
      const c = await call(apis[0].baseUrl, 'POST', `/flows/${flowId}/connections`, { source: ids[i - 1], target: ids[i] }, user.auth);
      expect(c.status, c.text).to.equal(201);
    }

    // Claims as the log shows them (RunStarted carries the claiming worker's id, with its pid).
    const claimedBy = new Map<string, number>();
    const finished = new Set<string>();
    const watch = store.subscribe({ after: 0, categories: ['run'] });
    const watching = (async () => {
      for await (const e of watch) {
        if (e.type === 'RunStarted') claimedBy.set(e.streamId, pidOf((e.data as { workerId: string }).workerId));
        if (e.type === 'RunCompleted' || e.type === 'RunFailed' || e.type === 'RunStopped' || e.type === 'RunTimedOut') finished.add(e.streamId);
      }
    })();

    const [survivor, victim] = workers;
    const projector = group.processes.find((p) => !apis.includes(p) && !workers.includes(p))!;
    const cpuBefore = new Map(group.processes.map((p) => [p.child.pid!, cpuMsOf(p.child.pid!)]));
    const victimPid = victim.child.pid!;
    const processIds: string[] = [];
    let next = 0;
    let killedAt: number | null = null;
    const started = Date.now();
    const enqueue = async () => {
      while (next < RUNS) {
        const i = next++;
        // The kill must land mid-load: past 60 %, requests wait for it (the victim may get its
        // partitions late, after a rebalance, and reach its claims only then).
        if (i >= RUNS * 0.6) await killer;
        // Both APIs take requests: even runs through the first, odd through the second. A connection
        // cut (a keep-alive race on a starved machine) is retried as a client would, with the same
        // Idempotency-Key, so a retried request never starts a second run.
        const res = await withRetries((attempt) => call(apis[(i + attempt) % 2].baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: { i }, async: true }, { ...user.auth, 'Idempotency-Key': `scale-${i}` }));
        expect(res.status, res.text).to.equal(202);
        processIds.push(res.body.processId);
      }
    };
    const killer = (async () => {
      // Mid-load: once 40 % of the runs are requested and the victim holds claims of its own.
      await waitUntil('40 % of the load, with claims by the victim', async () => processIds.length >= RUNS * 0.4 && count([...claimedBy.values()], (pid) => pid === victimPid) >= 20, 300_000);
      await group!.kill(victim);
      killedAt = (await store!.headPosition());
      const inFlight = [...claimedBy].filter(([id, pid]) => pid === victimPid && !finished.has(id)).length;
      console.log(`      killed worker ${victimPid} (SIGKILL) at log position ${killedAt} after ${((Date.now() - started) / 1000).toFixed(1)} s, with ${inFlight} of its runs in flight`);
    })();
    await Promise.all([...Array.from({ length: CONCURRENCY }, enqueue), killer]);
    const enqueuedIn = Date.now() - started;
    expect(processIds).to.have.length(RUNS);

    try {
      await waitUntil('every run finished', async () => processIds.every((id) => finished.has(`run-${id}`)), 360_000);
    } catch (err) {
      // What is left, from the runs' streams and the read model, so a failure says where runs stopped.
      const left = processIds.filter((id) => !finished.has(`run-${id}`));
      const states = new Map<string, number>();
      for (const id of left) {
        const types = (await store.readStream(`run-${id}`)).map((e) => e.type);
        const key = types.includes('RunResumed') ? 'resumed' : types.includes('RunStarted') ? `claimed by ${claimedBy.get(`run-${id}`) === victimPid ? 'the killed worker' : 'the survivor'}` : 'queued';
        states.set(key, (states.get(key) ?? 0) + 1);
      }
      const projected = await call(apis[0].baseUrl, 'GET', `/flows/${flowId}/processes?limit=1`, undefined, user.auth);
      throw new Error(`${(err as Error).message}: ${left.length} of ${RUNS} runs unfinished (${[...states].map(([k, v]) => `${v} ${k}`).join(', ')}); newest projected run: ${JSON.stringify(projected.body.items?.[0]?.status)}`);
    }
    const total = Date.now() - started;
    await watch.close();
    await watching;

    // Every run's own stream.
    const split = new Map<number, number>();
    let resumed = 0;
    let requestedAfterKill = 0;
    let restartedNodes = 0;
    for (const id of processIds) {
      const events: RecordedEvent[] = await store.readStream(`run-${id}`);
      const types = events.map((e) => e.type);
      const where = `run ${id}: ${types.join(', ')}`;
      expect(count(types, (t) => t === 'RunRequested'), where).to.equal(1);
      expect(count(types, (t) => t === 'RunStarted'), `${where} (one claim)`).to.equal(1);
      expect(count(types, (t) => t === 'RunCompleted'), where).to.equal(1);
      expect(types[types.length - 1], where).to.equal('RunCompleted');
      const claim = events.find((e) => e.type === 'RunStarted')!;
      const claimer = pidOf((claim.data as { workerId: string }).workerId);
      expect([survivor.child.pid, victimPid], where).to.include(claimer);
      const resumes = events.filter((e) => e.type === 'RunResumed');
      for (const r of resumes) {
        const data = r.data as { workerId: string; previousWorkerId: string };
        // Taken over only from the killed worker, and only by the survivor.
        expect(pidOf(data.previousWorkerId), where).to.equal(victimPid);
        expect(pidOf(data.workerId), where).to.equal(survivor.child.pid);
      }
      // Runs requested after the kill went to the survivor alone: the victim's partitions moved.
      if (killedAt !== null && events[0].position > killedAt) {
        expect(claimer, `${where} (requested after the kill)`).to.equal(survivor.child.pid);
        requestedAfterKill++;
      }
      resumed += resumes.length ? 1 : 0;
      for (const nodeId of ids) {
        const ofNode = (type: string) => events.filter((e) => e.type === type && (e.data as { nodeId?: string }).nodeId === nodeId);
        const interruptions = count(resumes, (r) => (r.data as { interruptedNodeIds: string[] }).interruptedNodeIds.includes(nodeId));
        expect(ofNode('NodeCompleted'), `${where}: node ${nodeId} completed once`).to.have.length(1);
        expect(ofNode('NodeStarted'), `${where}: node ${nodeId} started once, again only after a takeover interrupted it`).to.have.length(1 + interruptions);
        restartedNodes += interruptions;
      }
      split.set(claimer, (split.get(claimer) ?? 0) + 1);
    }
    const victimRuns = split.get(victimPid) ?? 0;
    const survivorRuns = split.get(survivor.child.pid!) ?? 0;
    console.log(
      `      ${RUNS} runs in ${(total / 1000).toFixed(1)} s (enqueued in ${(enqueuedIn / 1000).toFixed(1)} s, ${((RUNS / total) * 1000).toFixed(0)} runs/s): ` +
        `claimed by worker ${survivor.child.pid} ${survivorRuns}, by worker ${victimPid} (killed) ${victimRuns}; ` +
        `${resumed} runs taken over by the survivor (${restartedNodes} interrupted nodes started again)`,
    );
    const cpu = (p: ServiceProcess) => {
      const before = cpuBefore.get(p.child.pid!);
      const now = cpuMsOf(p.child.pid!);
      return before === null || before === undefined || now === null ? 'n/a' : `${((now - before) / RUNS).toFixed(1)} ms`;
    };
    console.log(`      CPU per run (whole test, divided by ${RUNS} runs): APIs ${apis.map(cpu).join(' + ')}, projector ${cpu(projector)}, surviving worker ${cpu(survivor)}`);
    console.log(`      ${requestedAfterKill} runs requested after the kill, all claimed by the survivor`);
    expect(requestedAfterKill, 'the kill happened mid-load').to.be.greaterThan(0);
    expect(victimRuns, 'the killed worker executed a share before it died').to.be.greaterThan(0);
    expect(survivorRuns, 'the survivor executed a share').to.be.greaterThan(0);
    expect(victimRuns + survivorRuns).to.equal(RUNS);

    // What a client sees: every run completed through either API (GET /processes/{id} reads the run's stream).
    let read = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (read < processIds.length) {
          const id = processIds[read++];
          const res = await withRetries((attempt) => call(apis[(read + attempt) % 2].baseUrl, 'GET', `/processes/${id}`, undefined, user.auth));
          expect(res.status, res.text).to.equal(200);
          expect(res.body.process.status, id).to.equal('completed');
        }
      }),
    );
  });
});
