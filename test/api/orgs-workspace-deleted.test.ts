import { expect } from 'chai';
import { orgStreamId } from '../../domain/orgs/index.js';
import { findUserAuth } from '../../projections/users-auth.js';
import { call } from '../support/http.js';
import { login, registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg } from './orgs-support.js';

/**
 * A deleted workspace that is someone's active one (issue 37 item 6): its members land in the
 * organization's default workspace; every credential still naming it (the JWT the switch
 * answered, API keys and CLI tokens following the account's scope, a new login) resolves there
 * instead of pointing at a ghost.
 */
for (const mode of availableModes()) {
  describe(`organizations: a deleted active workspace (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    /** Where a credential's scope lands: a flow it creates records the principal's workspace. */
    const workspaceOfNewFlow = async (auth: Record<string, string>) => {
      const res = await call(svc.baseUrl, 'POST', '/flows', { name: `probe ${Math.random().toString(36).slice(2, 8)}` }, auth);
      expect(res.status, res.text).to.equal(201);
      return res.body.flow.workspaceId as string;
    };

    it('credentials naming it resolve to the default workspace; the profile shows it; the event names the fallback', async () => {
      const { org, workspace: dflt } = await createOrg(svc, owner);
      const created = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'Doomed' }, owner.auth);
      expect(created.status, created.text).to.equal(201);
      const doomed = created.body.workspace.id as string;
      const member = await addMember(svc, owner, org.id, 'editor');
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id, workspaceId: doomed }, member.auth);
      expect(switched.status, switched.text).to.equal(200);
      const jwt = bearer(switched.body.token);
      const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'in doomed' }, jwt);
      expect(key.status, key.text).to.equal(201);
      const apiKey = bearer(key.body.key);
      expect(await workspaceOfNewFlow(jwt)).to.equal(doomed);
      expect(await workspaceOfNewFlow(apiKey)).to.equal(doomed);

      const deleted = await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/workspaces/${doomed}`, undefined, owner.auth);
      expect(deleted.status, deleted.text).to.equal(200);
      const events = await svc.services.eventStore.readStream(orgStreamId(org.id));
      expect(events.at(-1)!.type).to.equal('WorkspaceDeleted');
      expect(events.at(-1)!.data).to.include({ workspaceId: doomed, fallbackWorkspaceId: dflt.id });
      // The member moved: the account's stored scope (what login and API keys start from) is the default now.
      expect((await findUserAuth(svc.services.readStore, member.user.id))!.activeWorkspaceId).to.equal(dflt.id);

      expect(await workspaceOfNewFlow(jwt), 'the JWT of the switch').to.equal(dflt.id);
      expect(await workspaceOfNewFlow(apiKey), 'an API key').to.equal(dflt.id);
      const relogin = await login(svc.baseUrl, member.email, member.password);
      expect(await workspaceOfNewFlow(relogin.auth!), 'a new login').to.equal(dflt.id);
      const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, jwt);
      expect(me.body.user).to.include({ activeOrganizationId: org.id, activeWorkspaceId: dflt.id });
      // Switching to it is refused as to any workspace that does not exist.
      expect((await call(svc.baseUrl, 'POST', '/workspaces/switch', { workspaceId: doomed }, jwt)).status).to.equal(404);
    });

    it('with the default workspace itself deleted, the next one in creation order becomes the default', async () => {
      const { org, workspace: dflt } = await createOrg(svc, owner);
      const second = (await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'Second' }, owner.auth)).body.workspace.id as string;
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, owner.auth);
      expect(switched.body.workspace.id).to.equal(dflt.id);
      expect((await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/workspaces/${dflt.id}`, undefined, owner.auth)).status).to.equal(200);
      const events = await svc.services.eventStore.readStream(orgStreamId(org.id));
      expect(events.at(-1)!.data).to.include({ fallbackWorkspaceId: second });
      expect(await workspaceOfNewFlow(bearer(switched.body.token))).to.equal(second);
    });
  });
}
