import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { login, registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * Issue 13, "Durability": the whole service is killed with SIGKILL while workflows sleep on durable
 * timers and wait for signals. Some sleeps and a user timer (which delivers a signal) come due while
 * the process is dead, one sleep after the restart. After the restart on the same data (same SQLite
 * log; same MongoDB database and Kafka prefix in distributed mode) the signals are sent, every
 * workflow completes, and in each workflow's history every timer fired exactly once (a signal
 * timeout whose signal arrived: never fired, canceled once).
 */
const node = (data: Record<string, unknown>, x = 0) => ({ type: 'custom', position: { x, y: 0 }, data });

interface HistoryEvent {
  eventId: number;
  type: string;
  data: Record<string, unknown>;
}

for (const mode of availableModes()) {
  describe(`workflows survive a killed service (${mode})`, function () {
    this.timeout(120_000);
    let dataDir: string;
    let env: Record<string, string>;
    const started: ServiceProcess[] = [];

    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-workflows-crash-'));
      env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_AUTH_PER_MINUTE: '1000', WORKER_HEARTBEAT_MS: '300' };
      if (mode === 'distributed') {
        const id = randomBytes(4).toString('hex');
        Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `workflows_crash_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `workflows-crash-${id}` });
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

    it('completes every sleeping and waiting workflow after a restart, each timer fired exactly once', async () => {
      const first = await startServiceProcess(env);
      started.push(first);
      const user = await registerUser(first.baseUrl);
      const as1 = (method: string, path: string, body?: unknown) => call(first.baseUrl, method, path, body, user.auth);

      /** A flow of the given nodes chained in order. */
      async function chainFlow(datas: Array<Record<string, unknown>>) {
        const flow = await as1('POST', '/flows', { name: `wf crash ${randomBytes(3).toString('hex')}` });
        expect(flow.status, flow.text).to.equal(201);
        const flowId = flow.body.flow.id as string;
        const ids: string[] = [];
        for (const [i, data] of datas.entries()) {
          const res = await as1('POST', `/flows/${flowId}/nodes`, node(data, i * 100));
          expect(res.status, res.text).to.equal(201);
          ids.push(res.body.node.id);
        }
        for (let i = 1; i < ids.length; i++) {
          const res = await as1('POST', `/flows/${flowId}/connections`, { source: ids[i - 1], target: ids[i] });
          expect(res.status, res.text).to.equal(201);
        }
        return flowId;
      }
      const shortSleep = await chainFlow([{ nodeType: 'sleep', durationMs: 1_000 }, { nodeType: 'transform', template: 'woke {{inputs.n}}' }]);
      const longSleep = await chainFlow([{ nodeType: 'sleep', durationMs: 3_000 }, { nodeType: 'transform', template: 'woke late {{inputs.n}}' }]);
      const afterRestart = await chainFlow([{ nodeType: 'sleep', durationMs: 9_000 }, { nodeType: 'transform', template: 'woke after restart {{inputs.n}}' }]);
      const approval = await chainFlow([
        { nodeType: 'wait_signal', signalName: 'go', timeoutMs: 600_000 },
        { nodeType: 'sleep', durationMs: 1_000 },
        { nodeType: 'transform', template: 'approved {{inputs.n}}' },
      ]);
      const alarm = await chainFlow([{ nodeType: 'wait_signal', signalName: 'wake' }, { nodeType: 'transform', template: 'alarm rang {{inputs.n}}' }]);

      const workflows: Array<{ id: string; kind: string; n: number; expected: string }> = [];
      const create = async (flowId: string, kind: string, n: number, expected: string) => {
        const res = await as1('POST', '/workflows', { flowId, input: { n } });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.workflow.status).to.equal('RUNNING');
        workflows.push({ id: res.body.workflow.id, kind, n, expected });
        return res.body.workflow.id as string;
      };
      const createdAt = Date.now();
      for (let n = 0; n < 3; n++) await create(shortSleep, 'sleep 1 s', n, `woke ${n}`);
      for (let n = 0; n < 3; n++) await create(longSleep, 'sleep 3 s', n, `woke late ${n}`);
      for (let n = 0; n < 2; n++) await create(afterRestart, 'sleep 9 s', n, `woke after restart ${n}`);
      for (let n = 0; n < 3; n++) await create(approval, 'wait_signal → sleep', n, `approved ${n}`);
      for (let n = 0; n < 2; n++) {
        const id = await create(alarm, 'user timer → signal', n, `alarm rang ${n}`);
        const timer = await as1('POST', `/workflows/${id}/timers`, { name: 'alarm', delayMs: 1_500, signal: { name: 'wake', payload: { n } } });
        expect(timer.status, timer.text).to.equal(201);
      }
      // Every one is waiting, on its timer or its signal (a short sleep may have fired already: then it must not fire again).
      for (const w of workflows) {
        const wf = (await as1('GET', `/workflows/${w.id}`)).body.workflow;
        if (['sleep 1 s', 'sleep 3 s'].includes(w.kind) && (wf.status === 'COMPLETED' || wf.waitingOn === undefined)) continue;
        expect(wf.status, w.kind).to.equal('RUNNING');
        expect(wf.waitingOn?.kind, w.kind).to.equal(w.kind.startsWith('sleep') ? 'timer' : 'signal');
      }
      // Killed while they wait.
      const killedAt = Date.now();
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).to.equal('SIGKILL');
      // Dead until the 1 s and 3 s sleeps and the 1.5 s user timers are past due. Kept: a service process
      // runs on the system clock (no test clock crosses a process), and timers coming due while nobody runs is the subject.
      const dueBy = createdAt + 3_500;
      if (Date.now() < dueBy) await new Promise((r) => setTimeout(r, dueBy - Date.now()));

      const restartedAt = Date.now();
      const second = await startServiceProcess(env);
      started.push(second);
      const auth = (await login(second.baseUrl, user.email, user.password)).auth!;
      const as2 = (method: string, path: string, body?: unknown) => call(second.baseUrl, method, path, body, auth);
      for (const w of workflows.filter((x) => x.kind.startsWith('wait_signal'))) {
        const sig = await as2('POST', `/workflows/${w.id}/signal`, { name: 'go', payload: { n: w.n }, requestId: `go-${w.n}` });
        expect(sig.status, sig.text).to.equal(202);
      }

      const final = await waitUntil(
        'every workflow to close',
        async () => {
          const views = await Promise.all(workflows.map(async (w) => (await as2('GET', `/workflows/${w.id}`)).body.workflow));
          return views.every((v) => v && !['RUNNING', 'PAUSED', 'CREATED'].includes(v.status)) ? views : null;
        },
        60_000,
      );
      for (const [i, w] of workflows.entries()) {
        expect(final[i].status, `${w.kind} #${w.n}: ${JSON.stringify(final[i].error)}`).to.equal('COMPLETED');
        expect(final[i].result, w.kind).to.equal(w.expected);
      }

      for (const w of workflows) {
        const res = await as2('GET', `/workflows/${w.id}/history?limit=1000`);
        expect(res.status, res.text).to.equal(200);
        const events = res.body.events as HistoryEvent[];
        expect(res.body.hasMore).to.not.equal(true);
        const count = (type: string, timerId: string) => events.filter((e) => e.type === type && e.data.timerId === timerId).length;
        const scheduled = events.filter((e) => e.type === 'TimerScheduled');
        expect(scheduled.length, w.kind).to.be.greaterThan(0);
        for (const t of scheduled) {
          const timerId = t.data.timerId as string;
          const fired = count('TimerFired', timerId);
          const canceled = count('TimerCanceled', timerId);
          if (t.data.kind === 'signal_timeout') {
            expect([fired, canceled], `${w.kind} #${w.n} ${timerId}`).to.deep.equal([0, 1]);
          } else {
            expect(fired, `${w.kind} #${w.n} timer ${timerId} fired ${fired} times`).to.equal(1);
            expect(canceled, `${w.kind} #${w.n} ${timerId}`).to.equal(0);
          }
          expect(count('TimerScheduled', timerId), timerId).to.equal(1);
        }
        // The fired sleeps are never early, and the ones due while the process was dead fired late, once.
        for (const fired of events.filter((e) => e.type === 'TimerFired')) expect(fired.data.lateMs as number).to.be.at.least(0);
        expect(events.filter((e) => e.type === 'WorkflowCompleted'), w.kind).to.have.length(1);
        expect(events.at(-1)!.type, w.kind).to.equal('WorkflowCompleted');
        if (w.kind === 'user timer → signal') {
          expect(events.filter((e) => e.type === 'SignalReceived').map((e) => e.data.payload)).to.deep.equal([{ n: w.n }]);
        }
      }
      // Timers due after the kill fired in the second process (never in the dead one), late when due while it was dead.
      let firedAfterRestart = 0;
      for (const w of workflows) {
        const events = (await as2('GET', `/workflows/${w.id}/history?limit=1000`)).body.events as HistoryEvent[];
        for (const t of events.filter((e) => e.type === 'TimerScheduled')) {
          const fired = events.find((e) => e.type === 'TimerFired' && e.data.timerId === t.data.timerId);
          if (!fired || Date.parse(t.data.fireAt as string) <= killedAt) continue;
          expect(Date.parse(fired.data.at as string), `${w.kind} ${t.data.timerId as string}`).to.be.at.least(restartedAt);
          if (Date.parse(t.data.fireAt as string) < restartedAt) {
            expect(fired.data.lateMs as number).to.be.greaterThan(0);
            // Found by the timers' scan (every heartbeat here) once the read model caught up, not a horizon later.
            expect(Date.parse(fired.data.at as string) - restartedAt, `${w.kind} ${t.data.timerId as string} fired late after the restart`).to.be.below(10_000);
          }
          firedAfterRestart++;
        }
      }
      // At least the 9 s sleeps and the approvals' sleeps (the 3 s sleeps and user timers too, unless creating took that long).
      expect(firedAfterRestart).to.be.at.least(2 + 3);

      // Nothing is left to fire: a timer list of every workflow shows no pending timer.
      for (const w of workflows) {
        const timers = (await as2('GET', `/workflows/${w.id}/timers`)).body.timers as Array<{ status: string }>;
        expect(timers.filter((t) => t.status === 'pending'), w.kind).to.deep.equal([]);
      }
    });
  });
}
