import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from './flows-support.js';

/** GET/PUT /orgs/{orgId}/telemetry-settings: an organization opts in to prompts and completions on trace spans (off by default). */
for (const mode of availableModes()) {
  describe(`organization telemetry settings (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode);
    });
    after(async () => svc?.stop());

    async function orgOwner() {
      const owner = await registerUser(svc.baseUrl);
      const org = await call(svc.baseUrl, 'POST', '/orgs', { name: `Telemetry ${mode}` }, owner.auth);
      expect(org.status, org.text).to.equal(201);
      const orgId = org.body.organization?.id ?? org.body.org?.id ?? org.body.id;
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth);
      expect(switched.status, switched.text).to.equal(200);
      return { orgId: orgId as string, auth: { Authorization: `Bearer ${switched.body.token}` } };
    }

    it('is off until the organization turns it on; the change is kept and read back', async () => {
      const { orgId, auth } = await orgOwner();
      const before = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/telemetry-settings`, undefined, auth);
      expect(before.status, before.text).to.equal(200);
      expect(before.body).to.deep.equal({ orgId, recordContent: false });
      const on = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, { recordContent: true }, auth);
      expect(on.status, on.text).to.equal(200);
      expect(on.body).to.deep.equal({ orgId, recordContent: true });
      expect((await call(svc.baseUrl, 'GET', `/orgs/${orgId}/telemetry-settings`, undefined, auth)).body.recordContent).to.equal(true);
      // An empty body changes nothing.
      expect((await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, {}, auth)).body.recordContent).to.equal(true);
      const off = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, { recordContent: false }, auth);
      expect(off.body.recordContent).to.equal(false);
    });

    it('refuses a bad body with the field named, and another organization answers as not yours', async () => {
      const { orgId, auth } = await orgOwner();
      const bad = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, { recordContent: 'yes' }, auth);
      expectError(bad, 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(bad.body)).to.include('recordContent');
      const unknown = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, { recordContent: true, other: 1 }, auth);
      expectError(unknown, 400, 'VALIDATION_FAILED');
      expect((await call(svc.baseUrl, 'GET', `/orgs/${orgId}/telemetry-settings`, undefined, auth)).body.recordContent, 'nothing written by a refused request').to.equal(false);
      const stranger = await registerUser(svc.baseUrl);
      const theirs = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/telemetry-settings`, { recordContent: true }, stranger.auth);
      expect([403, 404], theirs.text).to.include(theirs.status);
      expect((await call(svc.baseUrl, 'GET', `/orgs/${orgId}/telemetry-settings`, undefined, stranger.auth)).status).to.be.oneOf([403, 404]);
    });
  });
}
