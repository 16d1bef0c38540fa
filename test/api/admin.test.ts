import { expect } from 'chai';
import { projectionStreamId } from '../../domain/operations/index.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

for (const mode of availableModes()) {
  describe(`admin projections (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    const operatorEmail = `operator-${Date.now()}@example.test`;
    before(async () => {
      svc = await startTestService(mode, { ADMIN_EMAILS: `someone@else.test, ${operatorEmail.toUpperCase()}` });
    });
    after(async () => svc?.stop());

    it('lists each projection with its checkpoint and lag, for operators only', async () => {
      const operator = await registerUser(svc.baseUrl, { email: operatorEmail });
      await call(svc.baseUrl, 'POST', '/probes', { name: `admin ${mode} ${Date.now()}` });
      // The worker acknowledges the new probe (one more event): the lag is 0 once that is projected too.
      const res = await waitUntil('the probes projection caught up', async () => {
        const answer = await call(svc.baseUrl, 'GET', '/admin/projections', undefined, operator.auth);
        const listed = answer.body.projections?.find((p: { name: string }) => p.name === 'probes');
        return answer.status !== 200 || listed?.lag === 0 ? answer : null;
      });
      expect(res.status, res.text).to.equal(200);
      const probes = res.body.projections.find((p: { name: string }) => p.name === 'probes');
      expect(probes).to.include({ state: 'running', lag: 0 });
      expect(probes.position).to.be.greaterThan(0);
      expect(res.body.projections.map((p: { name: string }) => p.name)).to.include('users');

      const stranger = await registerUser(svc.baseUrl);
      const denied = await call(svc.baseUrl, 'GET', '/admin/projections', undefined, stranger.auth);
      expect(denied.status).to.equal(403);
      expect(denied.body.error.code).to.equal('OPERATOR_ONLY');
      expect((await call(svc.baseUrl, 'GET', '/admin/projections')).status).to.equal(401);
    });

    it('rebuilds a projection from the log, answers the count, leaves the read model as it was, and records who asked', async () => {
      const created = await call(svc.baseUrl, 'POST', '/probes', { name: `rebuild ${mode} ${Date.now()}` });
      await call(svc.baseUrl, 'POST', `/probes/${created.body.probe.id}/increment`, { by: 4 });
      // The worker acknowledges new probes: let it, so the read model is stable before comparing.
      const before = await waitUntil('acknowledgement', async () => {
        const probe = (await call(svc.baseUrl, 'GET', `/probes/${created.body.probe.id}`)).body.probe;
        return probe.acknowledgedBy ? probe : null;
      });
      const operatorToken = (await svc.services.tokens.issue({ userId: await operatorId(), orgId: null, workspaceId: null })).token;
      const res = await call(svc.baseUrl, 'POST', '/admin/projections/probes/rebuild', undefined, { Authorization: `Bearer ${operatorToken}` });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('rebuilt');
      const probeEvents = await svc.services.eventStore.readAll({ categories: ['probe'], maxCount: 10_000 });
      expect(res.body.events).to.equal(probeEvents.length);
      const after = (await call(svc.baseUrl, 'GET', `/probes/${created.body.probe.id}`)).body.probe;
      expect(after).to.deep.equal(before);

      const audit = await svc.services.eventStore.readStream(projectionStreamId('probes'));
      expect(audit.map((e) => e.type)).to.deep.equal(['ProjectionRebuildRequested', 'ProjectionRebuilt']);
      expect(audit[0].metadata.actorId).to.equal(await operatorId());

      const unknown = await call(svc.baseUrl, 'POST', '/admin/projections/nothing/rebuild', undefined, { Authorization: `Bearer ${operatorToken}` });
      expect(unknown.status).to.equal(404);
      const bad = await call(svc.baseUrl, 'POST', '/admin/projections/Bad Name!/rebuild', undefined, { Authorization: `Bearer ${operatorToken}` });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.fields[0].field).to.equal('params.name');
    });

    async function operatorId(): Promise<string> {
      const user = await svc.services.readStore.collection('users').findOne({ email: operatorEmail });
      return user!._id;
    }
  });
}
