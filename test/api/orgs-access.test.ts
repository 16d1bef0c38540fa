import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, createOrg, expectError, invite } from './orgs-support.js';

type Probe = { method: string; path: string; body?: unknown };

for (const mode of availableModes()) {
  describe(`organizations: permissions per role (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let orgId: string;
    let workspaceId: string;
    const users: Record<'owner' | 'admin' | 'editor' | 'viewer' | 'outsider', RegisteredUser> = {} as never;
    before(async () => {
      svc = await startTestService(mode);
      users.owner = await registerUser(svc.baseUrl);
      ({ org: { id: orgId }, workspace: { id: workspaceId } } = await createOrg(svc, users.owner));
      users.admin = await addMember(svc, users.owner, orgId, 'admin');
      users.editor = await addMember(svc, users.owner, orgId, 'editor');
      users.viewer = await addMember(svc, users.owner, orgId, 'viewer');
      users.outsider = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    // One representative route per permission; the expected status for owner, admin, editor, viewer, outsider.
    let n = 0;
    const matrix: Array<[string, string, () => Probe, number[]]> = [
      ['view_resources', 'GET /orgs/{orgId}/members', () => ({ method: 'GET', path: `/orgs/${orgId}/members` }), [200, 200, 200, 200, 404]],
      ['view_resources', 'GET /orgs/{orgId}/workspaces', () => ({ method: 'GET', path: `/orgs/${orgId}/workspaces` }), [200, 200, 200, 200, 404]],
      ['view_resources', 'GET /orgs/{orgId}/teams', () => ({ method: 'GET', path: `/orgs/${orgId}/teams` }), [200, 200, 200, 200, 404]],
      ['manage_settings', 'PUT /orgs/{orgId}', () => ({ method: 'PUT', path: `/orgs/${orgId}`, body: { description: `d${n++}` } }), [200, 200, 403, 403, 404]],
      ['manage_settings', 'GET /orgs/{orgId}/budget', () => ({ method: 'GET', path: `/orgs/${orgId}/budget` }), [200, 200, 403, 403, 404]],
      ['manage_settings', 'GET /orgs/{orgId}/llm-credentials', () => ({ method: 'GET', path: `/orgs/${orgId}/llm-credentials` }), [200, 200, 403, 403, 404]],
      ['manage_settings', 'PUT /orgs/{orgId}/llm-credentials', () => ({ method: 'PUT', path: `/orgs/${orgId}/llm-credentials`, body: { provider: 'anthropic', apiKey: `sk-ant-${n++}-abcdefgh` } }), [200, 200, 403, 403, 404]],
      ['manage_members', 'GET /orgs/{orgId}/invitations', () => ({ method: 'GET', path: `/orgs/${orgId}/invitations` }), [200, 200, 403, 403, 404]],
      ['manage_members', 'POST /orgs/{orgId}/invitations', () => ({ method: 'POST', path: `/orgs/${orgId}/invitations`, body: { email: `m${n++}@example.test`, role: 'viewer' } }), [201, 201, 403, 403, 404]],
      ['manage_members', 'PATCH /orgs/{orgId}/members/{userId}', () => ({ method: 'PATCH', path: `/orgs/${orgId}/members/${users.viewer.user.id}`, body: { role: 'viewer' } }), [200, 200, 403, 403, 404]],
      ['manage_workspaces', 'POST /orgs/{orgId}/workspaces', () => ({ method: 'POST', path: `/orgs/${orgId}/workspaces`, body: { name: `ws ${n++}` } }), [201, 201, 403, 403, 404]],
      ['manage_workspaces', 'PUT /orgs/{orgId}/workspaces/{workspaceId}', () => ({ method: 'PUT', path: `/orgs/${orgId}/workspaces/${workspaceId}`, body: { description: `d${n++}` } }), [200, 200, 403, 403, 404]],
      ['manage_teams', 'POST /orgs/{orgId}/teams', () => ({ method: 'POST', path: `/orgs/${orgId}/teams`, body: { name: `team ${n++}` } }), [201, 201, 403, 403, 404]],
    ];
    const roles = ['owner', 'admin', 'editor', 'viewer', 'outsider'] as const;

    for (const [permission, label, probe, expected] of matrix) {
      it(`${permission}: ${label}`, async () => {
        for (const [i, role] of roles.entries()) {
          const p = probe();
          const res = await call(svc.baseUrl, p.method, p.path, p.body, users[role].auth);
          expect(res.status, `${role}: ${res.text}`).to.equal(expected[i]);
          if (expected[i] === 403) expect(res.body.error.code).to.equal('FORBIDDEN');
          if (expected[i] === 404) expect(res.body.error.code).to.equal('ORGANIZATION_NOT_FOUND');
        }
      });
    }

    it('owner: only an owner deletes the organization', async () => {
      for (const role of ['admin', 'editor', 'viewer'] as const) expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${orgId}`, undefined, users[role].auth), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${orgId}`, undefined, users.outsider.auth), 404, 'ORGANIZATION_NOT_FOUND');
      expect((await call(svc.baseUrl, 'DELETE', `/orgs/${orgId}`, undefined, users.owner.auth)).status).to.equal(200);
    });
  });

  describe(`organizations: tenant isolation (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    let aOrg: string;
    let aWorkspace: string;
    let aMember: RegisteredUser;
    let bOrg: string;
    let bToken: string;
    before(async () => {
      svc = await startTestService(mode);
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
      const a = await createOrg(svc, alice, 'Alice Inc');
      aOrg = a.org.id;
      aWorkspace = (await call(svc.baseUrl, 'POST', `/orgs/${aOrg}/workspaces`, { name: 'Second' }, alice.auth)).body.workspace.id;
      aMember = await addMember(svc, alice, aOrg, 'editor');
      await call(svc.baseUrl, 'POST', `/orgs/${aOrg}/teams`, { name: 'A team', memberIds: [aMember.user.id] }, alice.auth);
      await invite(svc, alice, aOrg, `pending-${Date.now()}@example.test`, 'viewer');
      await call(svc.baseUrl, 'PUT', `/orgs/${aOrg}/llm-credentials`, { provider: 'openai', apiKey: 'sk-alice-0000-1111' }, alice.auth);
      bOrg = (await createOrg(svc, bob, 'Bob Ltd')).org.id;
      bToken = (await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: bOrg }, bob.auth)).body.token;
    });
    after(async () => svc?.stop());

    it("a second user and organization get 404 on every id-taking route of the first organization's", async () => {
      const probes: Probe[] = [
        { method: 'PUT', path: `/orgs/${aOrg}`, body: { name: 'pwned' } },
        { method: 'DELETE', path: `/orgs/${aOrg}` },
        { method: 'GET', path: `/orgs/${aOrg}/members` },
        { method: 'PATCH', path: `/orgs/${aOrg}/members/${aMember.user.id}`, body: { role: 'viewer' } },
        { method: 'DELETE', path: `/orgs/${aOrg}/members/${aMember.user.id}` },
        { method: 'DELETE', path: `/orgs/${aOrg}/members/${bob.user.id}` },
        { method: 'POST', path: `/orgs/${aOrg}/invitations`, body: { email: 'x@example.test', role: 'viewer' } },
        { method: 'GET', path: `/orgs/${aOrg}/invitations` },
        { method: 'GET', path: `/orgs/${aOrg}/workspaces` },
        { method: 'POST', path: `/orgs/${aOrg}/workspaces`, body: { name: 'intruder' } },
        { method: 'PUT', path: `/orgs/${aOrg}/workspaces/${aWorkspace}`, body: { name: 'pwned' } },
        { method: 'DELETE', path: `/orgs/${aOrg}/workspaces/${aWorkspace}` },
        { method: 'GET', path: `/orgs/${aOrg}/teams` },
        { method: 'POST', path: `/orgs/${aOrg}/teams`, body: { name: 'intruders' } },
        { method: 'GET', path: `/orgs/${aOrg}/budget` },
        { method: 'GET', path: `/orgs/${aOrg}/llm-credentials` },
        { method: 'PUT', path: `/orgs/${aOrg}/llm-credentials`, body: { provider: 'openai', apiKey: 'sk-bob-0000-2222' } },
        // Bob's own organization, Alice's ids.
        { method: 'PATCH', path: `/orgs/${bOrg}/members/${alice.user.id}`, body: { role: 'viewer' } },
        { method: 'DELETE', path: `/orgs/${bOrg}/members/${aMember.user.id}` },
        { method: 'PUT', path: `/orgs/${bOrg}/workspaces/${aWorkspace}`, body: { name: 'pwned' } },
        { method: 'DELETE', path: `/orgs/${bOrg}/workspaces/${aWorkspace}` },
        { method: 'POST', path: '/orgs/switch', body: { orgId: aOrg } },
        { method: 'POST', path: '/orgs/switch', body: { orgId: bOrg, workspaceId: aWorkspace } },
        { method: 'POST', path: '/workspaces/switch', body: { workspaceId: aWorkspace } },
      ];
      const head = await svc.services.eventStore.headPosition();
      for (const token of [bob.token, bToken]) {
        for (const p of probes) {
          const res = await call(svc.baseUrl, p.method, p.path, p.body, { Authorization: `Bearer ${token}` });
          expect(res.status, `${p.method} ${p.path}: ${res.text}`).to.equal(404);
          expect(res.text).not.to.contain('Alice Inc');
        }
      }
      expect(await svc.services.eventStore.headPosition(), 'no probe appended anything').to.equal(head);
      const mine = await call(svc.baseUrl, 'GET', '/orgs', undefined, bob.auth);
      expect(mine.body.items.map((o: { id: string }) => o.id)).to.deep.equal([bOrg]);
      // Alice's organization is untouched.
      const members = await call(svc.baseUrl, 'GET', `/orgs/${aOrg}/members`, undefined, alice.auth);
      expect(members.body.items).to.have.length(2);
      const workspaces = await call(svc.baseUrl, 'GET', `/orgs/${aOrg}/workspaces`, undefined, alice.auth);
      expect(workspaces.body.items.map((w: { id: string }) => w.id)).to.include(aWorkspace);
    });

    it("a team of Bob's cannot name Alice's members (400, nothing created)", async () => {
      const res = await call(svc.baseUrl, 'POST', `/orgs/${bOrg}/teams`, { name: 'Poach', memberIds: [aMember.user.id] }, bob.auth);
      expectError(res, 400, 'TEAM_MEMBER_NOT_FOUND');
      const teams = await call(svc.baseUrl, 'GET', `/orgs/${bOrg}/teams`, undefined, bob.auth);
      expect(teams.body.items).to.deep.equal([]);
    });
  });
}
