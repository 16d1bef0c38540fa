/**
 * Issue 38: a synchronous answer carries a finished result, so the same client's next read finds
 * it. Each context answers, then is read back at once, ROUNDS times (four clients at a time) while
 * another user keeps the service busy with async runs and flow edits at a steady pace; not one read
 * may miss.
 */
import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

const ROUNDS = 200;
const CLIENTS = 4;
const LOAD_PAUSE_MS = 100;
const offlineLlm = { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'hi {{inputs.who}}' } };

for (const mode of availableModes()) {
  describe(`a sync answer is visible to the next read (${mode})`, function () {
    this.timeout(300_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let flowId: string;
    let nodeId: string;
    let triggerKey: string;
    let stopLoad: () => Promise<number>;
    const client = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      flowId = await client.newFlow(owner);
      nodeId = (await client.addNode(owner, flowId, offlineLlm)).id;
      expect((await client.as(owner, 'PUT', `/flows/${flowId}/trigger`, { enabled: true })).status).to.equal(200);
      triggerKey = (await client.as(owner, 'POST', `/flows/${flowId}/trigger/regenerate-key`)).body.key;

      // The load: another user's async runs and flow edits, all through the same projectors.
      const busy = await registerUser(svc.baseUrl);
      const busyFlow = await client.newFlow(busy);
      const busyNode = (await client.addNode(busy, busyFlow, offlineLlm)).id;
      let stop = false;
      let operations = 0;
      const loops = Array.from({ length: 3 }, async (_, i) => {
        while (!stop) {
          const res = i === 2
            ? await client.as(busy, 'PUT', `/flows/${busyFlow}/nodes/${busyNode}`, { position: { x: operations % 500, y: 0 } })
            : await client.as(busy, 'POST', `/flows/${busyFlow}/run`, { inputs: { who: 'load' }, async: true });
          if (res.status >= 400) throw new Error(`load answered ${res.status}: ${res.text.slice(0, 200)}`);
          operations++;
          // A steady load (≈ 10 operations/s per loop), not a flood: past what the projectors can
          // take, no wait bounded by READ_YOUR_WRITES_TIMEOUT_MS could keep up.
          await new Promise((r) => setTimeout(r, LOAD_PAUSE_MS));
        }
      });
      stopLoad = async () => {
        stop = true;
        await Promise.all(loops);
        return operations;
      };
    });
    after(async () => {
      await stopLoad?.().catch(() => undefined);
      await svc?.stop();
    });

    /** ROUNDS answers by CLIENTS clients; each answer's processId must be in the read right after it. */
    async function everyAnswerVisible(answer: () => Promise<{ processId: string; readModel: string | null }>, read: () => Promise<string[]>): Promise<void> {
      let next = 0;
      const misses: string[] = [];
      const answerMs: number[] = [];
      const readMs: number[] = [];
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next++ < ROUNDS) {
            const started = performance.now();
            const { processId, readModel } = await answer();
            const answeredMs = Math.round(performance.now() - started);
            answerMs.push(answeredMs);
            const reading = performance.now();
            const found = (await read()).includes(processId);
            readMs.push(performance.now() - reading);
            // A miss is either late (the read model got there afterwards) or lost: say which.
            if (!found) {
              await new Promise((r) => setTimeout(r, 1_000));
              const later = (await read()).includes(processId) ? 'there 1 s later' : 'still missing 1 s later';
              misses.push(`${processId} (X-Read-Model: ${readModel}, answered in ${answeredMs} ms, ${later})`);
            }
          }
        }),
      );
      const pct = (xs: number[], p: number) => Math.round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]);
      console.log(`      answer p50/p99 ${pct(answerMs, 50)}/${pct(answerMs, 99)} ms, read p50/p99 ${pct(readMs, 50)}/${pct(readMs, 99)} ms`);
      expect(misses, `${misses.length} of ${ROUNDS} answers not in the next read`).to.deep.equal([]);
    }

    const processesOfFlow = async () => {
      const res = await client.as(owner, 'GET', `/flows/${flowId}/processes?limit=${CLIENTS * 4}`);
      expect(res.status, res.text).to.equal(200);
      return (res.body.items as Array<{ processId: string }>).map((p) => p.processId);
    };

    it(`process a node with saveToHistory: the node's history holds it (${ROUNDS} times)`, async () => {
      await everyAnswerVisible(
        async () => {
          const res = await client.as(owner, 'POST', `/flows/${flowId}/nodes/${nodeId}/process`, { inputs: { who: 'history' }, async: false, saveToHistory: true });
          expect(res.status, res.text).to.equal(200);
          return { processId: res.body.processId as string, readModel: res.headers.get('x-read-model') };
        },
        async () => {
          const res = await client.as(owner, 'GET', `/flows/${flowId}/nodes/${nodeId}/history?limit=${CLIENTS * 4}`);
          expect(res.status, res.text).to.equal(200);
          return (res.body.items as Array<{ processId: string }>).map((e) => e.processId);
        },
      );
    });

    it(`run the flow (sync): the flow's processes list it (${ROUNDS} times)`, async () => {
      await everyAnswerVisible(async () => {
        const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { who: 'run' } });
        expect(res.status, res.text).to.equal(200);
        return { processId: res.body.processId as string, readModel: res.headers.get('x-read-model') };
      }, processesOfFlow);
    });

    it(`an agent message answered as JSON: the agent's session list counts it (${ROUNDS} times)`, async () => {
      const agent = (await client.as(owner, 'POST', '/agents', { name: 'visible', provider: 'offline', model: 'offline' })).body.agent;
      const sessions: string[] = [];
      for (let i = 0; i < CLIENTS; i++) sessions.push((await client.as(owner, 'POST', `/agents/${agent.id}/sessions`, { title: `client ${i}` })).body.session.id);
      const sent = new Map<string, number>();
      let next = 0;
      const misses: string[] = [];
      // One session per client: a session takes one turn at a time.
      await Promise.all(
        sessions.map(async (sessionId) => {
          while (next++ < ROUNDS) {
            const res = await client.as(owner, 'POST', `/agents/${agent.id}/sessions/${sessionId}/messages`, { content: `message ${next}` });
            expect(res.status, res.text).to.equal(200);
            sent.set(sessionId, (sent.get(sessionId) ?? 0) + 1);
            const list = await client.as(owner, 'GET', `/agents/${agent.id}/sessions?limit=${CLIENTS}`);
            expect(list.status, list.text).to.equal(200);
            const count = (list.body.items as Array<{ id: string; messageCount: number }>).find((x) => x.id === sessionId)?.messageCount;
            if (count !== sent.get(sessionId)) misses.push(`${sessionId}: listed ${count}, sent ${sent.get(sessionId)} (X-Read-Model: ${res.headers.get('x-read-model')})`);
          }
        }),
      );
      expect(misses, `${misses.length} of ${ROUNDS} answers not in the next read`).to.deep.equal([]);
    });

    it(`the public trigger (sync): the flow's processes list it, and its status is that run (${ROUNDS} times)`, async () => {
      await everyAnswerVisible(async () => {
        const res = await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, { who: 'trigger' }, { 'X-Trigger-Key': triggerKey });
        expect(res.status, res.text).to.equal(200);
        return { processId: res.body.processId as string, readModel: res.headers.get('x-read-model') };
      }, processesOfFlow);
      const operations = await stopLoad();
      expect(operations, 'the load ran alongside').to.be.greaterThan(20);
    });
  });
}
