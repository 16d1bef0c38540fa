import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

for (const mode of availableModes()) {
  describe(`public triggers (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    const client = flowClient(() => svc);

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('runs the flow and the node with the key (sync and ?async=true); a wrong or missing key is 401', async () => {
      const flowId = await client.newFlow(owner);
      const n = await client.addNode(owner, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'hi {{inputs.who}}' } });
      expect((await client.as(owner, 'PUT', `/flows/${flowId}/trigger`, { enabled: true })).status).to.equal(200);
      const key = (await client.as(owner, 'POST', `/flows/${flowId}/trigger/regenerate-key`)).body.key;
      const sync = await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, { who: 'you' }, { 'X-Trigger-Key': key });
      expect(sync.status, sync.text).to.equal(200);
      expect(sync.body.status).to.equal('completed');
      expect(sync.body.outputs[n.id]).to.equal('hi you');
      const queued = await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger?async=true`, { who: 'x' }, { 'X-Trigger-Key': key });
      expect(queued.status, queued.text).to.equal(202);
      expectError(await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, {}, { 'X-Trigger-Key': `${key}x` }), 401, 'INVALID_TRIGGER_KEY');
      expectError(await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, {}), 401, 'INVALID_TRIGGER_KEY');

      expect((await client.as(owner, 'PUT', `/flows/${flowId}/nodes/${n.id}/trigger`, { enabled: true })).status).to.equal(200);
      const nodeKey = (await client.as(owner, 'POST', `/flows/${flowId}/nodes/${n.id}/trigger/regenerate-key`)).body.key;
      const node = await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/nodes/${n.id}/trigger`, { who: 'node' }, { 'X-Trigger-Key': nodeKey });
      expect(node.status, node.text).to.equal(200);
      expect(node.body.result.output).to.equal('hi node');
      expectError(await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/nodes/${n.id}/trigger`, {}, { 'X-Trigger-Key': key }), 401, 'INVALID_TRIGGER_KEY');
    });

    it('a sync run of local nodes is one append of its whole history, visible when answered; a regenerated key stops the old one at once', async () => {
      const flowId = await client.newFlow(owner);
      const a = await client.addNode(owner, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'step {{inputs.who}}' } });
      const b = await client.addNode(owner, flowId, { type: 'custom', position: { x: 200, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'sum {{previous}}' } });
      expect((await client.as(owner, 'POST', `/flows/${flowId}/connections`, { source: a.id, target: b.id })).status).to.be.oneOf([200, 201]);
      expect((await client.as(owner, 'PUT', `/flows/${flowId}/trigger`, { enabled: true })).status).to.equal(200);
      const key = (await client.as(owner, 'POST', `/flows/${flowId}/trigger/regenerate-key`)).body.key;

      const store = svc.services.eventStore;
      // Every run stream's appends, by stream: the previous test's async run may be claimed by the worker meanwhile.
      const runAppends: Array<{ streamId: string; types: string[] }> = [];
      const append = store.append;
      store.append = async function (this: typeof store, streamId, events, expected) {
        if (streamId.startsWith('run-')) runAppends.push({ streamId, types: events.map((e) => e.type) });
        return append.call(this, streamId, events, expected);
      };
      let sync;
      try {
        sync = await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, { who: 'you' }, { 'X-Trigger-Key': key });
      } finally {
        store.append = append;
      }
      expect(sync.status, sync.text).to.equal(200);
      expect(sync.body.status).to.equal('completed');
      const thisRun = runAppends.filter((a) => a.streamId === `run-${sync.body.processId}`).map((a) => a.types);
      expect(thisRun).to.deep.equal([['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'NodeStarted', 'NodeCompleted', 'RunCompleted']]);
      // Read-your-writes: the answered run is in the read model at once.
      const read = await client.as(owner, 'GET', `/processes/${sync.body.processId}`);
      expect(read.status, read.text).to.equal(200);
      expect(read.body.process.status).to.equal('completed');

      // The check reads the log: the old key fails the moment the new one is appended.
      const fresh = (await client.as(owner, 'POST', `/flows/${flowId}/trigger/regenerate-key`)).body.key;
      expectError(await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, { who: 'x' }, { 'X-Trigger-Key': key }), 401, 'INVALID_TRIGGER_KEY');
      expect((await call(svc.baseUrl, 'POST', `/public/flows/${flowId}/trigger`, { who: 'y' }, { 'X-Trigger-Key': fresh })).status).to.equal(200);
    });
  });
}
