import { expect } from 'chai';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';
import { answer } from '../support/api-client.js';

/**
 * Issue 29, item 1: a signal is the client's statement that something happened, so the service
 * never refuses one because its own requests met on the workflow's stream. 2,000 signals from 32
 * concurrent clients into one waiting workflow: every one answered 202, each recorded exactly once
 * (the clients with a requestId send every signal twice), each client's order kept, and the
 * workflow holds them all and still advances.
 */
const SIGNALS = 2_000;
const CLIENTS = 32;

for (const mode of availableModes()) {
  describe(`workflow signal storm (${mode})`, function () {
    // Each signal waits for the workflows projection, which writes the workflow's whole folded
    // state (every pending signal) once per batch: ≈ 15 s embedded, ≈ 22 s distributed here (69 s
    // and 225 s when it was written once per event).
    this.timeout(600_000);
    let svc: TestService;
    let owner: RegisteredUser;
    const client = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    it(`accepts ${SIGNALS} signals from ${CLIENTS} clients into one workflow: none refused, each recorded once, order per client kept`, async () => {
      const flowId = await client.newFlow(owner);
      const waiting = await client.addNode(owner, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'wait_signal', signalName: 'go' } });
      const created = await answer(client.api(owner).POST('/workflows', { body: { flowId, input: {} } }));
      expect(created.status, created.text).to.equal(201);
      const workflowId: string = created.body.workflow.id;
      expect(created.body.workflow.waitingOn).to.deep.include({ kind: 'signal', name: 'go' });

      const statuses = new Map<number, number>();
      const refusals: string[] = [];
      const signal = async (body: { name: string; payload: unknown; requestId?: string }) => {
        const res = await answer(client.api(owner).POST('/workflows/{workflowId}/signal', { params: { path: { workflowId } }, body }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status !== 202 && refusals.length < 5) refusals.push(`${res.status} ${res.text}`);
        return res;
      };
      const signalIdsByRequest = new Map<string, string>();
      let repeatsRecorded = 0;
      let repeatsWithOtherId = 0;

      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const withRequestIds = c % 2 === 0;
          for (let seq = c; seq < SIGNALS; seq += CLIENTS) {
            const body = { name: 'note', payload: { client: c, seq }, ...(withRequestIds ? { requestId: `c${c}-s${seq}` } : {}) };
            const first = await signal(body);
            if (!withRequestIds || first.status !== 202) continue;
            signalIdsByRequest.set(body.requestId!, first.body.signalId);
            // A client's retry of the same statement: answered, recorded once, same signal id.
            const again = await signal(body);
            if (again.body.recorded !== false) repeatsRecorded += 1;
            if (again.body.signalId !== first.body.signalId) repeatsWithOtherId += 1;
          }
        }),
      );
      expect(refusals, `answers other than 202: ${JSON.stringify([...statuses])}`).to.deep.equal([]);
      const repeats = [...signalIdsByRequest.keys()].length;
      expect(statuses.get(202)).to.equal(SIGNALS + repeats);
      expect(repeatsRecorded, 'a repeated requestId recorded again').to.equal(0);
      expect(repeatsWithOtherId, 'a repeated requestId answered with another signal id').to.equal(0);

      // The workflow's own state (folded from its stream) holds every signal once, in each client's order.
      const wf = (await answer(client.api(owner).GET('/workflows/{workflowId}', { params: { path: { workflowId } } }))).body.workflow;
      const pending: Array<{ signalId: string; name: string; payload: { client: number; seq: number } }> = wf.pendingSignals;
      expect(pending).to.have.length(SIGNALS);
      const seen = new Set(pending.map((p) => `${p.payload.client}:${p.payload.seq}`));
      expect(seen.size, 'a signal recorded twice').to.equal(SIGNALS);
      const lastSeq = new Map<number, number>();
      for (const p of pending) {
        expect(p.payload.seq, `client ${p.payload.client}'s signals out of order`).to.be.greaterThan(lastSeq.get(p.payload.client) ?? -1);
        lastSeq.set(p.payload.client, p.payload.seq);
      }
      for (const [requestId, signalId] of signalIdsByRequest) {
        const [c, s] = requestId.slice(1).split('-s').map(Number);
        expect(pending.find((p) => p.payload.client === c && p.payload.seq === s)?.signalId).to.equal(signalId);
      }

      // And it still advances: the signal it waits for completes it.
      const go = await signal({ name: 'go', payload: { after: SIGNALS } });
      expect(go.status, go.text).to.equal(202);
      const done = await waitUntil(
        'the workflow completed',
        async () => {
          const w = (await answer(client.api(owner).GET('/workflows/{workflowId}', { params: { path: { workflowId } } }))).body.workflow;
          return w.status === 'COMPLETED' ? w : null;
        },
        30_000,
      );
      expect(done.nodes.find((n: { nodeId: string }) => n.nodeId === waiting.id).output).to.deep.equal({ after: SIGNALS });
      expect(done.pendingSignals).to.have.length(SIGNALS);
    });
  });
}
