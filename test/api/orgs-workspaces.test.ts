import { expect } from 'chai';
import { recordLlmSpend } from '../../commands/orgs.js';
import { spendPeriodOf, spendStreamId } from '../../domain/orgs/spend.js';
import { readOrgLlmCredentials } from '../../projections/orgs.js';
import { findUserAuth } from '../../projections/users-auth.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg, expectError, fields } from './orgs-support.js';

const context = (now = new Date()) => ({ actorId: null, orgId: null, workspaceId: null, correlationId: 'test', causationId: null, requestId: null, now });

for (const mode of availableModes()) {
  describe(`organizations: workspaces, teams and switching (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('creates, lists, renames and deletes workspaces; never the last one', async () => {
      const { org, workspace: dflt } = await createOrg(svc, owner);
      const created = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'Research', description: 'r&d' }, owner.auth);
      expect(created.status, created.text).to.equal(201);
      expect(created.body.workspace).to.include({ name: 'Research', description: 'r&d', orgId: org.id });
      const wsId = created.body.workspace.id;
      expectError(await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'research' }, owner.auth), 409, 'WORKSPACE_NAME_TAKEN');
      expect(fields(await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: '' }, owner.auth))).to.include('body.name');
      expect(fields(await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'x', color: 1 }, owner.auth))).to.include('body.color');

      const page1 = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/workspaces?limit=1`, undefined, owner.auth);
      expect(page1.body.items.map((w: { id: string }) => w.id)).to.deep.equal([dflt.id]);
      const page2 = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/workspaces?limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`, undefined, owner.auth);
      expect(page2.body.items.map((w: { id: string }) => w.id)).to.deep.equal([wsId]);

      const renamed = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/workspaces/${wsId}`, { name: 'Lab' }, owner.auth);
      expect(renamed.status, renamed.text).to.equal(200);
      expect(renamed.body.workspace).to.include({ id: wsId, name: 'Lab', description: 'r&d' });
      expectError(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/workspaces/${wsId}`, { name: 'DEFAULT' }, owner.auth), 409, 'WORKSPACE_NAME_TAKEN');
      expectError(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/workspaces/${wsId}`, {}, owner.auth), 400, 'VALIDATION_FAILED');
      expectError(await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/workspaces/nope`, { name: 'x' }, owner.auth), 404, 'WORKSPACE_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/workspaces/nope`, undefined, owner.auth), 404, 'WORKSPACE_NOT_FOUND');

      expect((await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/workspaces/${wsId}`, undefined, owner.auth)).status).to.equal(200);
      expectError(await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/workspaces/${dflt.id}`, undefined, owner.auth), 409, 'LAST_WORKSPACE');
      const left = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/workspaces`, undefined, owner.auth);
      expect(left.body.items.map((w: { id: string }) => w.id)).to.deep.equal([dflt.id]);
    });

    it('creates teams of members and lists them; a non-member id is 400 naming the field', async () => {
      const { org } = await createOrg(svc, owner);
      const editor = await addMember(svc, owner, org.id, 'editor');
      const stranger = await registerUser(svc.baseUrl);
      const empty = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/teams`, undefined, owner.auth);
      expect(empty.body.items).to.deep.equal([]);
      const res = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/teams`, { name: 'Core', memberIds: [owner.user.id, editor.user.id] }, owner.auth);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.team).to.include({ name: 'Core', orgId: org.id });
      expect(res.body.team.memberIds).to.deep.equal([owner.user.id, editor.user.id]);
      const bad = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/teams`, { name: 'Other', memberIds: [owner.user.id, stranger.user.id] }, owner.auth);
      expectError(bad, 400, 'TEAM_MEMBER_NOT_FOUND');
      expect(fields(bad)).to.deep.equal(['body.memberIds.1']);
      expectError(await call(svc.baseUrl, 'POST', `/orgs/${org.id}/teams`, { name: 'core' }, owner.auth), 409, 'TEAM_NAME_TAKEN');
      expect(fields(await call(svc.baseUrl, 'POST', `/orgs/${org.id}/teams`, { name: 'X', memberIds: 'all' }, owner.auth))).to.include('body.memberIds');
      const noMembers = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/teams`, { name: 'Solo' }, owner.auth);
      expect(noMembers.body.team.memberIds).to.deep.equal([]);
      const list = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/teams`, undefined, editor.auth);
      expect(list.body.items.map((t: { name: string }) => t.name)).to.deep.equal(['Core', 'Solo']);
      // A member who leaves leaves their teams.
      await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}/members/${editor.user.id}`, undefined, editor.auth);
      const after = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/teams`, undefined, owner.auth);
      expect(after.body.items[0].memberIds).to.deep.equal([owner.user.id]);
    });

    it('switches organization: a new token carries it, the account records it, null goes back to personal', async () => {
      const me = await registerUser(svc.baseUrl);
      const { org, workspace } = await createOrg(svc, me);
      const second = await call(svc.baseUrl, 'POST', `/orgs/${org.id}/workspaces`, { name: 'Second' }, me.auth);
      const res = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, me.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ success: true, expiresIn: svc.services.config.JWT_TTL_SECONDS });
      expect(res.body.token).to.be.a('string').and.not.equal(me.token);
      expect(res.body.organization).to.include({ id: org.id, role: 'owner' });
      expect(res.body.workspace.id).to.equal(workspace.id);
      const claims = await svc.services.tokens.verify(res.body.token);
      expect(claims).to.include({ userId: me.user.id, orgId: org.id, workspaceId: workspace.id });
      const account = await findUserAuth(svc.services.readStore, me.user.id);
      expect(account).to.include({ activeOrgId: org.id, activeWorkspaceId: workspace.id });

      const chosen = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id, workspaceId: second.body.workspace.id }, me.auth);
      expect(chosen.body.workspace.id).to.equal(second.body.workspace.id);

      const ws = await call(svc.baseUrl, 'POST', '/workspaces/switch', { workspaceId: workspace.id }, bearer(chosen.body.token));
      expect(ws.status, ws.text).to.equal(200);
      expect(ws.body.workspace.id).to.equal(workspace.id);
      expect(await svc.services.tokens.verify(ws.body.token)).to.include({ orgId: org.id, workspaceId: workspace.id });

      const back = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: null }, bearer(ws.body.token));
      expect(back.status).to.equal(200);
      expect(back.body).to.include({ organization: null, workspace: null });
      expect(await svc.services.tokens.verify(back.body.token)).to.include({ orgId: null, workspaceId: null });
      const active = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, bearer(back.body.token));
      expect(active.body.organization).to.equal(null);
    });

    it('refuses switching into a stranger organization or workspace (404) and bad bodies (400)', async () => {
      const me = await registerUser(svc.baseUrl);
      const mine = await createOrg(svc, me);
      const theirs = await createOrg(svc, owner);
      expectError(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: theirs.org.id }, me.auth), 404, 'ORGANIZATION_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: mine.org.id, workspaceId: theirs.workspace.id }, me.auth), 404, 'WORKSPACE_NOT_FOUND');
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: null, workspaceId: mine.workspace.id }, me.auth))).to.include('body.workspaceId');
      expect(fields(await call(svc.baseUrl, 'POST', '/orgs/switch', {}, me.auth))).to.include('body.orgId');
      expect(fields(await call(svc.baseUrl, 'POST', '/workspaces/switch', {}, me.auth))).to.include('body.workspaceId');
      // Personal workspace: there is nothing to switch between.
      expectError(await call(svc.baseUrl, 'POST', '/workspaces/switch', { workspaceId: mine.workspace.id }, me.auth), 404, 'WORKSPACE_NOT_FOUND');
      const inMine = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: mine.org.id }, me.auth);
      expectError(await call(svc.baseUrl, 'POST', '/workspaces/switch', { workspaceId: theirs.workspace.id }, bearer(inMine.body.token)), 404, 'WORKSPACE_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: mine.org.id }), 401, 'UNAUTHENTICATED');
    });
  });

  describe(`organizations: budget and LLM credentials (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it('answers the monthly budget: the limit and this month\'s spend recorded by runs', async () => {
      const { org } = await createOrg(svc, owner);
      const empty = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/budget`, undefined, owner.auth);
      expect(empty.status, empty.text).to.equal(200);
      const now = new Date();
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      expect(empty.body).to.deep.equal({ success: true, limitUsd: null, spentUsd: 0, period: 'month', periodStart });

      await call(svc.baseUrl, 'PUT', `/orgs/${org.id}`, { budgetLimitUsd: 10 }, owner.auth);
      const spends = [
        await recordLlmSpend(svc.services.eventStore, context(), { orgId: org.id, amountUsd: 0.1, runId: 'r1', spendId: 'r1:n1' }),
        await recordLlmSpend(svc.services.eventStore, context(), { orgId: org.id, amountUsd: 0.1, runId: 'r1', spendId: 'r1:n1' }), // redelivered
        await recordLlmSpend(svc.services.eventStore, context(), { orgId: org.id, amountUsd: 0.2, runId: 'r2' }),
        // Last year's spend is another period.
        await recordLlmSpend(svc.services.eventStore, context(), { orgId: org.id, amountUsd: 5, at: `${now.getUTCFullYear() - 1}-06-15T00:00:00.000Z` }),
      ];
      expect(spends[1].position, 'a redelivered spend appends nothing').to.equal(null);
      const last = spends[2];
      await svc.services.projections.waitFor(last.position!, spendStreamId(org.id, spendPeriodOf(now.toISOString())), 10_000);
      const res = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/budget`, undefined, owner.auth);
      expect(res.body).to.include({ limitUsd: 10, spentUsd: 0.3, period: 'month' });
    });

    it('stores LLM credentials sealed and reads them back masked; null removes one', async () => {
      const { org } = await createOrg(svc, owner);
      const apiKey = `sk-test-${Math.random().toString(36).slice(2)}-secretpart`;
      const put = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/llm-credentials`, { provider: 'openai', apiKey }, owner.auth);
      expect(put.status, put.text).to.equal(200);
      expect(put.body.credentials).to.have.length(1);
      expect(put.body.credentials[0]).to.include({ provider: 'openai', apiKeyMasked: `${apiKey.slice(0, 4)}••••${apiKey.slice(-4)}`, baseUrl: null });
      const compat = await call(
        svc.baseUrl, 'PUT', `/orgs/${org.id}/llm-credentials`, { provider: 'openai_compatible', apiKey: 'local-key-123456', baseUrl: 'http://127.0.0.1:8000/v1' }, owner.auth,
      );
      expect(compat.body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['openai', 'openai_compatible']);
      const get = await call(svc.baseUrl, 'GET', `/orgs/${org.id}/llm-credentials`, undefined, owner.auth);
      expect(get.status).to.equal(200);
      expect(get.body.credentials[1]).to.include({ provider: 'openai_compatible', baseUrl: 'http://127.0.0.1:8000/v1' });
      expect(get.text).not.to.contain(apiKey);
      expect(get.text).not.to.contain('local-key-123456');
      const events = JSON.stringify(await svc.services.eventStore.readAll({}));
      expect(events).not.to.contain(apiKey);
      expect(events).to.contain('LlmCredentialSet');

      const opened = await readOrgLlmCredentials(svc.services, org.id);
      expect(opened.find((c) => c.provider === 'openai')?.apiKey).to.equal(apiKey);

      // Upsert per provider, then removal.
      await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/llm-credentials`, { provider: 'openai', apiKey: 'sk-replaced-0000-9999' }, owner.auth);
      expect((await readOrgLlmCredentials(svc.services, org.id)).find((c) => c.provider === 'openai')?.apiKey).to.equal('sk-replaced-0000-9999');
      const removed = await call(svc.baseUrl, 'PUT', `/orgs/${org.id}/llm-credentials`, { provider: 'openai', apiKey: null }, owner.auth);
      expect(removed.body.credentials.map((c: { provider: string }) => c.provider)).to.deep.equal(['openai_compatible']);
    });

    it('refuses bad credential bodies with 400 naming the field', async () => {
      const { org } = await createOrg(svc, owner);
      const put = (body: unknown) => call(svc.baseUrl, 'PUT', `/orgs/${org.id}/llm-credentials`, body, owner.auth);
      expect(fields(await put({ provider: 'cohere', apiKey: 'k' }))).to.include('body.provider');
      expect(fields(await put({ provider: 'openai' }))).to.include('body.apiKey');
      expect(fields(await put({ provider: 'openai', apiKey: '' }))).to.include('body.apiKey');
      expect(fields(await put({ provider: 'openai_compatible', apiKey: 'k' }))).to.include('body.baseUrl');
      expect(fields(await put({ provider: 'openai', apiKey: 'k', baseUrl: 'ftp://x' }))).to.include('body.baseUrl');
      expect(fields(await put({ provider: 'openai', apiKey: 'k', extra: 1 }))).to.include('body.extra');
    });
  });
}
