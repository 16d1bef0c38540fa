import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeRunCommand, loadRun, requestRun } from '../../commands/runs.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { call } from '../support/http.js';
import { login, registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * A worker killed with SIGKILL in the middle of an async run: after a restart on the same data
 * (same SQLite log, same MongoDB database and Kafka prefix in distributed mode) the new worker sees
 * the old one stopped beating, resumes the run from its last completed node and completes it; a run
 * whose node was interrupted too often ends failed with a reason. Never left running.
 */
const HEARTBEAT_MS = 300;
const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });
const context = () => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });

for (const mode of availableModes()) {
  describe(`async run survives a killed worker (${mode})`, function () {
    this.timeout(90_000);
    let dataDir: string;
    let env: Record<string, string>;
    const started: ServiceProcess[] = [];
    const start = async () => {
      const p = await startServiceProcess(env);
      started.push(p);
      return p;
    };
    const kill = async (p: ServiceProcess) => {
      p.child.kill('SIGKILL');
      const exit = await p.exited;
      expect(exit.signal).to.equal('SIGKILL');
    };

    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-runs-crash-'));
      env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS) };
      if (mode === 'distributed') {
        const id = randomBytes(4).toString('hex');
        Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `runs_crash_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `runs-crash-${id}` });
      }
    });
    afterEach(async () => {
      for (const p of started.splice(0)) {
        if (p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** input → delay 2 s → transform, then an async run killed while the delay node runs. */
    async function runKilledDuringDelay() {
      const first = await start();
      const user = await registerUser(first.baseUrl);
      const as = (method: string, path: string, body?: unknown) => call(first.baseUrl, method, path, body, user.auth);
      const flow = await as('POST', '/flows', { name: `crash ${randomBytes(3).toString('hex')}` });
      expect(flow.status, flow.text).to.equal(201);
      const flowId = flow.body.flow.id as string;
      const ids: string[] = [];
      for (const [i, data] of [{ nodeType: 'input', inputKey: 'word' }, { nodeType: 'delay', delayMs: 2_000 }, { nodeType: 'transform', template: 'got {{inputs.word}} after {{previous}}' }].entries()) {
        const res = await as('POST', `/flows/${flowId}/nodes`, node(data, i * 100));
        expect(res.status, res.text).to.equal(201);
        ids.push(res.body.node.id);
      }
      for (const [source, target] of [[ids[0], ids[1]], [ids[1], ids[2]]]) {
        const res = await as('POST', `/flows/${flowId}/connections`, { source, target });
        expect(res.status, res.text).to.equal(201);
      }
      const run = await as('POST', `/flows/${flowId}/run`, { inputs: { word: 'hello' }, async: true });
      expect(run.status, run.text).to.equal(202);
      const processId = run.body.processId as string;
      await waitUntil('the delay node to run', async () => {
        const p = await as('GET', `/processes/${processId}`);
        return p.body.process?.nodes[1].status === 'running' ? p : null;
      });
      await kill(first);
      return { user, flowId, processId, ids };
    }

    /** The run as the restarted service serves it, once finished; fails when it stays active too long. */
    async function finished(baseUrl: string, auth: Record<string, string>, processId: string) {
      return waitUntil(
        `run ${processId} to finish`,
        async () => {
          const p = await call(baseUrl, 'GET', `/processes/${processId}`, undefined, auth);
          return ['completed', 'failed', 'stopped'].includes(p.body.process?.status) ? p.body.process : null;
        },
        25_000,
      );
    }

    it('resumes from the last completed node and completes; a run requested but never delivered runs too', async () => {
      const { user, flowId, processId, ids } = await runKilledDuringDelay();
      // A run whose RunRequested is in the log but was never handled by a worker (the process died first).
      const store = new SqliteEventStore(join(dataDir, 'events.db'));
      const queuedId = randomUUID();
      try {
        await requestRun(store, context(), queuedId, { flowId, mode: 'flow', inputs: { word: 'queued' }, async: true, requestedBy: user.user.id, source: 'api', scope: null });
      } finally {
        await store.close();
      }

      const second = await start();
      const auth = (await login(second.baseUrl, user.email, user.password)).auth!;
      const done = await finished(second.baseUrl, auth, processId);
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
      expect(done.nodes[0]).to.include({ status: 'completed', output: 'hello' });
      expect(done.nodes[2]).to.include({ status: 'completed', output: 'got hello after hello' });

      const events = await call(second.baseUrl, 'GET', `/processes/${processId}/events?limit=100`, undefined, auth);
      const types = (events.body.events as Array<{ type: string }>).map((e) => e.type);
      const resumed = (events.body.events as Array<{ type: string; data: Record<string, unknown> }>).find((e) => e.type === 'RunResumed');
      expect(resumed, types.join(',')).to.not.equal(undefined);
      expect(resumed!.data.interruptedNodeIds).to.deep.equal([ids[1]]);
      expect(resumed!.data.workerId).to.not.equal(resumed!.data.previousWorkerId);
      // The input node ran once: the resume started from the last completed node, not from scratch.
      const starts = (events.body.events as Array<{ type: string; data: { nodeId?: string; attempt?: number } }>).filter((e) => e.type === 'NodeStarted');
      expect(starts.filter((e) => e.data.nodeId === ids[0])).to.have.length(1);
      expect(starts.filter((e) => e.data.nodeId === ids[1]).map((e) => e.data.attempt)).to.deep.equal([1, 2]);

      const queued = await finished(second.baseUrl, auth, queuedId);
      expect(queued.status).to.equal('completed');
      expect(queued.nodes[2].output).to.equal('got queued after queued');

      // The running list reads the read model, which the restarted projector reaches a little later.
      await waitUntil('no run listed as running', async () => (await call(second.baseUrl, 'GET', '/processes/running', undefined, auth)).body.items?.length === 0);
    });

    it('fails a run whose node was interrupted too often, with the reason', async () => {
      const { user, processId, ids } = await runKilledDuringDelay();
      // As if the dead worker had already taken the run over twice and died in the delay node each time.
      const store = new SqliteEventStore(join(dataDir, 'events.db'));
      try {
        const { workerId } = await loadRun(store, processId);
        for (let i = 0; i < 2; i++) {
          await executeRunCommand(store, context(), processId, { type: 'ResumeRun', workerId: workerId! });
          await executeRunCommand(store, context(), processId, { type: 'StartNode', workerId: workerId!, nodeId: ids[1] });
        }
        expect((await loadRun(store, processId)).nodes[ids[1]].attempts).to.equal(3);
      } finally {
        await store.close();
      }

      const second = await start();
      const auth = (await login(second.baseUrl, user.email, user.password)).auth!;
      const done = await finished(second.baseUrl, auth, processId);
      expect(done.status).to.equal('failed');
      expect(done.error.code).to.equal('NODE_INTERRUPTED_TOO_OFTEN');
      expect(done.error.nodeId).to.equal(ids[1]);
      expect(done.error.reason).to.match(/interrupted 3 times/);
      expect(done.nodes[2].status).to.equal('pending');
    });
  });
}
