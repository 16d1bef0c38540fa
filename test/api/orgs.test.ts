import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg, expectError, fields, invite, invitationTokenFor } from './orgs-support.js';

for (const mode of availableModes()) {
  describe(`organizations: lifecycle and members (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('creates an organization: the creator is owner and a Default workspace comes with it', async () => {
      const res = await call(svc.baseUrl, 'POST', '/orgs', { name: 'Acme', description: 'rockets' }, owner.auth);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.success).to.equal(true);
      expect(res.body.organization).to.include({ name: 'Acme', description: 'rockets', role: 'owner', createdBy: owner.user.id, budgetLimitUsd: null });
      expect(res.body.workspace).to.include({ name: 'Default', orgId: res.body.organization.id });
      const members = await call(svc.baseUrl, 'GET', `/orgs/${res.body.organization.id}/members`, undefined, owner.auth);
      expect(members.body.items).to.have.length(1);
      expect(members.body.items[0]).to.include({ userId: owner.user.id, role: 'owner', email: owner.email });
    });

    it('refuses bad bodies with 400 naming the field, and no credentials with 401', async () => {
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs', { name: '' }, owner.auth))).to.include('body.name');
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs', { name: 'x'.repeat(101) }, owner.auth))).to.include('body.name');
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs', { name: 'x', plan: 'pro' }, owner.auth))).to.include('body.plan');
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs', { name: 'a\nBcc: x@y.test' }, owner.auth))).to.include('body.name');
      expectError(await call(svc.baseUrl, 'POST', '/orgs', { name: 'x' }), 401, 'UNAUTHENTICATED');
      expectError(await call(svc.baseUrl, 'GET', '/orgs', undefined, bearer('not-a-token')), 401, 'UNAUTHENTICATED');
    });

    it('lists my organizations with my role, paginated', async () => {
      const me = await registerUser(svc.baseUrl);
      const a = await createOrg(svc, me, 'First');
      const b = await createOrg(svc, me, 'Second');
      await createOrg(svc, owner, 'Theirs');
      const first = await call(svc.baseUrl, 'GET', '/orgs?limit=1', undefined, me.auth);
      expect(first.status).to.equal(200);
      expect(first.body.items).to.have.length(1);
      expect(first.body.items[0]).to.include({ id: a.org.id, role: 'owner' });
      const second = await call(svc.baseUrl, 'GET', `/orgs?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, undefined, me.auth);
      expect(second.body.items.map((o: { id: string }) => o.id)).to.deep.equal([b.org.id]);
      const all = await call(svc.baseUrl, 'GET', '/orgs', undefined, me.auth);
      expect(all.body.items.map((o: { name: string }) => o.name)).to.deep.equal(['First', 'Second']);
      expect(fields(await call(svc.baseUrl, 'GET', '/orgs?limit=0', undefined, me.auth))).to.include('query.limit');
    });

    it('answers the active organization of the token, or null for the personal workspace', async () => {
      const me = await registerUser(svc.baseUrl);
      const personal = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, me.auth);
      expect(personal.status).to.equal(200);
      expect(personal.body).to.deep.equal({ success: true, organization: null, workspace: null });
      const { org, workspace } = await createOrg(svc, me);
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, me.auth);
      const active = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, bearer(switched.body.token));
      expect(active.body.organization).to.include({ id: org.id, role: 'owner' });
      expect(active.body.workspace).to.include({ id: workspace.id });
    });

    it('serves the permission catalog per role', async () => {
      const res = await call(svc.baseUrl, 'GET', '/orgs/permissions', undefined, owner.auth);
      expect(res.status).to.equal(200);
      const byRole = Object.fromEntries(res.body.roles.map((r: { role: string; permissions: string[] }) => [r.role, r]));
      expect(Object.keys(byRole)).to.deep.equal(['owner', 'admin', 'editor', 'viewer']);
      expect(byRole.viewer.permissions).to.deep.equal(['view_resources']);
      expect(byRole.editor.permissions).to.deep.equal(['view_resources', 'edit_resources']);
      expect(byRole.admin.permissions).to.include('manage_members');
      expect(byRole.owner.ownerOnly).to.include('delete_organization');
      expect(byRole.admin.ownerOnly).to.deep.equal([]);
      expect(res.body.permissions).to.have.length(6);
    });

    it('updates name, description and budget limit; an empty update is 400', async () => {
      const { org } = await createOrg(svc, owner);
      const res = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { name: 'Renamed', description: 'd', budgetLimitUsd: 25.5 }, owner.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.organization).to.include({ name: 'Renamed', description: 'd', budgetLimitUsd: 25.5, role: 'owner' });
      const cleared = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { budgetLimitUsd: null }, owner.auth);
      expect(cleared.body.organization.budgetLimitUsd).to.equal(null);
      expectError(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, {}, owner.auth), 400, 'VALIDATION_FAILED');
      expect(fields(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { budgetLimitUsd: -1 }, owner.auth))).to.include('body.budgetLimitUsd');
      expect(fields(await call(svc.baseUrl, 'PUT', '/orgs/bad%20id', { name: 'x' }, owner.auth))).to.include('params.orgId');
    });

    it('changes roles; only an owner touches the owner role; the last owner stays', async () => {
      const { org } = await createOrg(svc, owner);
      const admin = await addMember(svc, owner, org.id, 'admin');
      const viewer = await addMember(svc, owner, org.id, 'viewer');
      const promoted = await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${viewer.user.id}`, { role: 'editor' }, admin.auth);
      expect(promoted.status, promoted.text).to.equal(200);
      expect(promoted.body.member).to.include({ userId: viewer.user.id, role: 'editor' });
      expectError(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${viewer.user.id}`, { role: 'owner' }, admin.auth), 403, 'OWNER_ROLE_REQUIRED');
      expectError(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${owner.user.id}`, { role: 'viewer' }, admin.auth), 403, 'OWNER_ROLE_REQUIRED');
      expectError(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${owner.user.id}`, { role: 'admin' }, owner.auth), 409, 'LAST_OWNER');
      expectError(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${viewer.user.id}`, { role: 'admin' }, viewer.auth), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/nobody`, { role: 'admin' }, owner.auth), 404, 'MEMBER_NOT_FOUND');
      expect(fields(await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${viewer.user.id}`, { role: 'god' }, owner.auth))).to.include('body.role');
      // With a second owner, the first may step down.
      expect((await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${admin.user.id}`, { role: 'owner' }, owner.auth)).status).to.equal(200);
      const down = await call(svc.baseUrl, 'PATCH', `/orgs/${org.id}/members/${owner.user.id}`, { role: 'admin' }, owner.auth);
      expect(down.status, down.text).to.equal(200);
      expect(down.body.member.role).to.equal('admin');
    });

    it('removes members, lets a member leave, never the last owner', async () => {
      const { org } = await createOrg(svc, owner);
      const admin = await addMember(svc, owner, org.id, 'admin');
      const editor = await addMember(svc, owner, org.id, 'editor');
      const viewer = await addMember(svc, owner, org.id, 'viewer');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${viewer.user.id}`, undefined, editor.auth), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${owner.user.id}`, undefined, admin.auth), 403, 'OWNER_ROLE_REQUIRED');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${owner.user.id}`, undefined, owner.auth), 409, 'LAST_OWNER');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/nobody`, undefined, admin.auth), 404, 'MEMBER_NOT_FOUND');
      expect((await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${editor.user.id}`, undefined, admin.auth)).status).to.equal(200);
      const left = await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${viewer.user.id}`, undefined, viewer.auth);
      expect(left.status, left.text).to.equal(200);
      // Gone members see the organization as nonexistent.
      expectError(await call(svc.baseUrl, 'GET', `/orgs/${org.id}/members`, undefined, viewer.auth), 404, 'ORGANIZATION_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'GET', `/orgs/${org.id}/members`, undefined, editor.auth), 404, 'ORGANIZATION_NOT_FOUND');
      const members = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/members`, undefined, owner.auth);
      expect(members.body.items.map((m: { userId: string }) => m.userId)).to.have.members([owner.user.id, admin.user.id]);
    });

    it('deletes an organization (owner only): its routes answer 404 and members lose it', async () => {
      const { org } = await createOrg(svc, owner);
      const admin = await addMember(svc, owner, org.id, 'admin');
      const pending = await invite(svc, owner, org.id, `late-${Date.now()}@example.test`, 'viewer');
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, admin.auth);
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}`, undefined, admin.auth), 403, 'FORBIDDEN');
      const res = await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}`, undefined, owner.auth);
      expect(res.status, res.text).to.equal(200);
      // A token still scoped to it no longer shows it as active.
      const active = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, bearer(switched.body.token));
      expect(active.body).to.deep.equal({ success: true, organization: null, workspace: null });
      for (const user of [owner, admin]) {
        expectError(await call(svc.baseUrl, 'GET', `/orgs/${org.id}/members`, undefined, user.auth), 404, 'ORGANIZATION_NOT_FOUND');
        expectError(await call(svc.baseUrl, 'GET', `/orgs/${org.id}/workspaces`, undefined, user.auth), 404, 'ORGANIZATION_NOT_FOUND');
        expectError(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { name: 'x' }, user.auth), 404, 'ORGANIZATION_NOT_FOUND');
        expectError(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, user.auth), 404, 'ORGANIZATION_NOT_FOUND');
        const mine = await call(svc.baseUrl, 'GET', '/orgs', undefined, user.auth);
        expect(mine.body.items.map((o: { id: string }) => o.id)).not.to.include(org.id);
      }
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}`, undefined, owner.auth), 404, 'ORGANIZATION_NOT_FOUND');
      const late = await registerUser(svc.baseUrl, { email: pending.invitation.email });
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${pending.token}/accept`, undefined, late.auth), 404, 'INVITATION_NOT_FOUND');
    });
  });

  describe(`organizations: invitation expiry (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let orgId: string;
    const clock = new TestClock();
    before(async () => {
      // JWTs and unverified accounts outlive the week the clock is moved by, so only the invitation expires.
      svc = await startTestService(
        mode,
        { FRONTEND_URL: 'https://app.example.test', JWT_TTL_SECONDS: String(30 * 86_400), UNVERIFIED_ACCOUNT_TTL_HOURS: String(30 * 24) },
        { clock },
      );
      owner = await registerUser(svc.baseUrl);
      orgId = (await createOrg(svc, owner, 'Expiring')).org.id;
    });
    after(async () => svc?.stop());

    it('expires after INVITATION_TTL_HOURS (410) and lists as expired', async () => {
      const user = await registerUser(svc.baseUrl);
      const { token, invitation } = await invite(svc, owner, orgId, user.email, 'viewer');
      clock.advance(Date.parse(invitation.expiresAt) + 1000 - clock.now().getTime());
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, user.auth), 410, 'INVITATION_EXPIRED');
      const list = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations?limit=100`, undefined, owner.auth);
      expect(list.body.items.find((i: { id: string }) => i.id === invitation.id).status).to.equal('expired');
    });
  });

  describe(`organizations: invitations (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let orgId: string;
    before(async () => {
      svc = await startTestService(mode, { FRONTEND_URL: 'https://app.example.test' });
      owner = await registerUser(svc.baseUrl);
      orgId = (await createOrg(svc, owner, 'Inviting')).org.id;
    });
    after(async () => svc?.stop());

    it('invites by email: 201 without the token; the token is mailed with the front-end link', async () => {
      const email = `Invitee-${Date.now()}@Example.test`;
      const res = await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email, role: 'editor' }, owner.auth);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.invitation).to.have.keys(['id', 'email', 'role', 'expiresAt', 'status']);
      expect(res.body.invitation).to.include({ email: email.toLowerCase(), role: 'editor', status: 'pending' });
      const ttlMs = Date.parse(res.body.invitation.expiresAt) - Date.now();
      expect(ttlMs).to.be.within(167 * 3600_000, 168 * 3600_000);
      const token = invitationTokenFor(svc, email);
      expect(token.split('.')).to.have.length(3);
      expect(token.startsWith(`${orgId}.${res.body.invitation.id}.`)).to.equal(true);
      expect(res.text).not.to.contain(token.split('.')[2]);
      const list = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations`, undefined, owner.auth);
      expect(list.status).to.equal(200);
      expect(list.body.items[0]).to.include({ id: res.body.invitation.id, status: 'pending' });
      expect(list.text).not.to.contain(token.split('.')[2]);
      const mail = await import('node:fs').then((fs) => fs.readFileSync(`${svc.services.config.DATA_DIR}/outbox/mail.jsonl`, 'utf8'));
      expect(mail).to.contain(`https://app.example.test/invitations/${token}`);
      // Neither the secret nor its link is in the event log.
      const events = JSON.stringify(await svc.services.eventStore.readAll({}));
      expect(events).not.to.contain(token.split('.')[2]);
    });

    it('refuses a bad email or role (400), an owner invitation by an admin (403), an existing member (409)', async () => {
      const admin = await addMember(svc, owner, orgId, 'admin');
      expect(fields(await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: 'nope', role: 'viewer' }, owner.auth))).to.include('body.email');
      expect(fields(await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: 'a@b.test', role: 'king' }, owner.auth))).to.include('body.role');
      expectError(await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: 'x@y.test', role: 'owner' }, admin.auth), 403, 'OWNER_ROLE_REQUIRED');
      expectError(await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: admin.email.toUpperCase(), role: 'viewer' }, owner.auth), 409, 'ALREADY_A_MEMBER');
      const viaOwner = await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: `o-${Date.now()}@y.test`, role: 'owner' }, owner.auth);
      expect(viaOwner.status).to.equal(201);
    });

    it('accepting joins with the invited role (email compared case-insensitively); the token is single-use', async () => {
      const user = await registerUser(svc.baseUrl, { email: `joiner-${Date.now()}@example.test` });
      const { token } = await invite(svc, owner, orgId, user.email.toUpperCase(), 'editor');
      const res = await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, user.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.organization).to.include({ id: orgId, role: 'editor' });
      expect(res.body.member).to.include({ userId: user.user.id, role: 'editor' });
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, user.auth), 409, 'INVITATION_ALREADY_USED');
      const list = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations?limit=100`, undefined, owner.auth);
      expect(list.body.items.find((i: { email: string }) => i.email === user.email.toLowerCase()).status).to.equal('accepted');
    });

    it('refuses another account (403), an existing member (409), a bad or unknown token (404), no credentials (401)', async () => {
      const invited = `target-${Date.now()}@example.test`;
      const { token } = await invite(svc, owner, orgId, invited, 'viewer');
      const stranger = await registerUser(svc.baseUrl);
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, stranger.auth), 403, 'INVITATION_EMAIL_MISMATCH');
      const [org, inv, secret] = token.split('.');
      const flipped = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
      const target = await registerUser(svc.baseUrl, { email: invited });
      for (const bad of [`${org}.${inv}.${flipped}`, `${org}.${crypto.randomUUID()}.${secret}`, `${crypto.randomUUID()}.${inv}.${secret}`, 'garbage', `${org}.${inv}`]) {
        expectError(await call(svc.baseUrl, 'POST', `/invitations/${encodeURIComponent(bad)}/accept`, undefined, target.auth), 404, 'INVITATION_NOT_FOUND');
      }
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`), 401, 'UNAUTHENTICATED');
      // A second invitation for the same address cannot make a member join twice.
      const again = await invite(svc, owner, orgId, invited, 'viewer');
      expect((await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, target.auth)).status).to.equal(200);
      expectError(await call(svc.baseUrl, 'POST', `/invitations/${again.token}/accept`, undefined, target.auth), 409, 'ALREADY_A_MEMBER');
    });

    it('answers 502 MAIL_DELIVERY_FAILED when the invitation mail cannot be sent', async () => {
      const mailer = svc.services.mailer as { send: typeof svc.services.mailer.send };
      const send = mailer.send;
      mailer.send = async () => {
        throw new Error('smtp down');
      };
      try {
        const res = await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: `lost-${Date.now()}@example.test`, role: 'viewer' }, owner.auth);
        expectError(res, 502, 'MAIL_DELIVERY_FAILED');
        expect(res.body.error.details.invitationId).to.be.a('string');
      } finally {
        mailer.send = send;
      }
    });

    it('lists invitations paginated, newest first, for manage_members only', async () => {
      const editor = await addMember(svc, owner, orgId, 'editor');
      const first = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations?limit=2`, undefined, owner.auth);
      expect(first.body.items).to.have.length(2);
      expect(Date.parse(first.body.items[0].createdAt)).to.be.at.least(Date.parse(first.body.items[1].createdAt));
      const next = await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, undefined, owner.auth);
      expect(next.body.items[0].id).not.to.equal(first.body.items[0].id);
      expectError(await call(svc.baseUrl, 'GET', `/orgs/${orgId}/invitations`, undefined, editor.auth), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: 'e@x.test', role: 'viewer' }, editor.auth), 403, 'FORBIDDEN');
    });
  });
}
