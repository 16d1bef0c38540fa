import { expect } from 'chai';
import { handleAtContextTime, loadState } from '../../commands/handle.js';
import { skillOwnerDecider, skillOwnerStreamId } from '../../domain/skills/index.js';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, flowClient } from './flows-support.js';

const llmNode = (data: Record<string, unknown>) => ({ type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', ...data } });

for (const mode of availableModes()) {
  describe(`skills API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let fake: FakeLlmServer;
    let alice: RegisteredUser;
    let bob: RegisteredUser;
    const client = flowClient(() => svc);
    const as = (user: RegisteredUser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(svc.baseUrl, method, path, body, { ...user.auth, ...headers });
    const newSkill = async (user: RegisteredUser, body: Record<string, unknown>) => {
      const res = await as(user, 'POST', '/skills', body);
      expect(res.status, res.text).to.equal(201);
      return res.body.skill;
    };

    before(async () => {
      fake = await startFakeOpenAi();
      svc = await startTestService(mode, { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0' });
      alice = await registerUser(svc.baseUrl);
      bob = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await fake?.close();
    });

    it('create, get, list (without content), replace (If-Match), enable/disable, delete', async () => {
      const skill = await newSkill(alice, { name: 'Pirate', description: 'talk like a pirate', content: 'Say arr in every sentence.' });
      expect(skill).to.include({ name: 'Pirate', description: 'talk like a pirate', content: 'Say arr in every sentence.', enabled: true, contentChars: 26, version: 0 });
      const got = await as(alice, 'GET', `/skills/${skill.id}`);
      expect(got.status).to.equal(200);
      expect(got.headers.get('etag')).to.equal('"0"');
      expect(got.body.skill.content).to.equal('Say arr in every sentence.');

      const list = await as(alice, 'GET', '/skills?limit=100');
      expect(list.status).to.equal(200);
      expect(list.body.items.map((s: { id: string }) => s.id)).to.include(skill.id);
      expect(list.body.items[0]).to.not.have.property('content');

      const replaced = await as(alice, 'PUT', `/skills/${skill.id}`, { name: 'Pirate', description: 'arr', content: 'Say arr!' }, { 'If-Match': '"0"' });
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.body.skill).to.include({ description: 'arr', content: 'Say arr!', version: 1 });
      expectError(await as(alice, 'PUT', `/skills/${skill.id}`, { name: 'P', description: 'x', content: 'y' }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');

      const off = await as(alice, 'PATCH', `/skills/${skill.id}/enabled`, { enabled: false });
      expect(off.status, off.text).to.equal(200);
      expect(off.body.skill.enabled).to.equal(false);
      const disabled = await as(alice, 'GET', '/skills?enabled=false');
      expect(disabled.body.items.map((s: { id: string }) => s.id)).to.deep.equal([skill.id]);

      const del = await as(alice, 'DELETE', `/skills/${skill.id}`);
      expect(del.status, del.text).to.equal(200);
      expectError(await as(alice, 'GET', `/skills/${skill.id}`), 404, 'SKILL_NOT_FOUND');
      expectError(await as(alice, 'DELETE', `/skills/${skill.id}`), 404, 'SKILL_NOT_FOUND');
    });

    it('PUT takes the body POST takes: enabled switches in the same write, absent leaves it; a wrong type names the field (issue 36)', async () => {
      const created = { name: 'Terse', description: 'short answers', content: 'Answer in one line.', enabled: false };
      const skill = await newSkill(alice, created);
      expect(skill.enabled).to.equal(false);
      const replaced = await as(alice, 'PUT', `/skills/${skill.id}`, { ...created, content: 'One line.', enabled: true }, { 'If-Match': `"${skill.version}"` });
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.body.skill).to.include({ content: 'One line.', enabled: true });
      const events = await svc.services.eventStore.readStream(`skill-${skill.id}`);
      expect(events.slice(-2).map((e) => e.type)).to.deep.equal(['SkillUpdated', 'SkillEnabledChanged']);
      const kept = await as(alice, 'PUT', `/skills/${skill.id}`, { name: 'Terse', description: 'short answers', content: 'Just one line.' });
      expect(kept.status, kept.text).to.equal(200);
      expect(kept.body.skill).to.include({ content: 'Just one line.', enabled: true });
      expect((await as(alice, 'GET', `/skills/${skill.id}`)).body.skill.enabled).to.equal(true);
      const bad = await as(alice, 'PUT', `/skills/${skill.id}`, { ...created, enabled: 'yes' });
      expectError(bad, 400, 'VALIDATION_FAILED');
      expect(bad.text).to.include('body.enabled');
      await as(alice, 'DELETE', `/skills/${skill.id}`);
    });

    it('limits: content over 20,000 characters is 400 SKILL_CONTENT_TOO_LONG; bad input names the field', async () => {
      const tooLong = await as(alice, 'POST', '/skills', { name: 'Long', description: 'd', content: 'x'.repeat(20_001) });
      expectError(tooLong, 400, 'SKILL_CONTENT_TOO_LONG');
      expect(tooLong.body.error.details).to.deep.include({ field: 'body.content', limit: 20_000, actual: 20_001 });
      expect((await as(alice, 'POST', '/skills', { name: 'Max', description: 'd', content: 'x'.repeat(20_000) })).status).to.equal(201);
      expectError(await as(alice, 'POST', '/skills', { name: '', description: 'd', content: 'c' }), 400, 'VALIDATION_FAILED', 'body.name');
      expectError(await as(alice, 'POST', '/skills', { name: 'n', description: 'd', content: 'c', extra: 1 }), 400, 'VALIDATION_FAILED');
      expectError(await as(alice, 'PATCH', '/skills/nope/enabled', { enabled: 'yes' }), 400, 'VALIDATION_FAILED', 'body.enabled');
    });

    it('limits: at most 100 skills per owner (409 TOO_MANY_SKILLS); a deletion frees a slot', async () => {
      const carol = await registerUser(svc.baseUrl);
      const ids: string[] = [];
      for (let i = 0; i < 100; i++) ids.push((await newSkill(carol, { name: `s${i}`, description: 'd', content: 'c', enabled: i === 0 })).id);
      const refused = await as(carol, 'POST', '/skills', { name: 'one more', description: 'd', content: 'c' });
      expectError(refused, 409, 'TOO_MANY_SKILLS');
      expect(refused.body.error.details).to.deep.equal({ limit: 100 });
      // Another owner is not affected.
      expect((await as(bob, 'POST', '/skills', { name: 'mine', description: 'd', content: 'c' })).status).to.equal(201);
      expect((await as(carol, 'DELETE', `/skills/${ids[5]}`)).status).to.equal(200);
      expect((await as(carol, 'POST', '/skills', { name: 'again', description: 'd', content: 'c' })).status).to.equal(201);
      const page1 = await as(carol, 'GET', '/skills?limit=60');
      const page2 = await as(carol, 'GET', `/skills?limit=60&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
      expect(page1.body.items.length + page2.body.items.length).to.equal(100);
      expect(page2.body.nextCursor).to.equal(null);
    });

    it('a slot left by a crash between the two writes (no skill stream) is given back once it is a minute old', async () => {
      const hank = await registerUser(svc.baseUrl);
      const scope = { userId: hank.user.id, orgId: null, workspaceId: null };
      const context = (now: Date) => ({ actorId: hank.user.id, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, now });
      const stream = skillOwnerStreamId(scope);
      const old = new Date(Date.now() - 5 * 60_000);
      // 99 orphaned slots from long ago, one taken just now (its create may still be in flight).
      for (let i = 0; i < 99; i++) await handleAtContextTime(svc.services.eventStore, context(old), stream, skillOwnerDecider, { type: 'TakeSkillSlot', skillId: `ghost-${i}` });
      await handleAtContextTime(svc.services.eventStore, context(new Date()), stream, skillOwnerDecider, { type: 'TakeSkillSlot', skillId: 'in-flight' });
      const res = await as(hank, 'POST', '/skills', { name: 'after crash', description: 'd', content: 'c' });
      expect(res.status, res.text).to.equal(201);
      const types = (await svc.services.eventStore.readStream(stream)).map((e) => e.type);
      expect(types.filter((t) => t === 'SkillSlotReleased')).to.have.length(99);
      const { state } = await loadState(svc.services.eventStore, stream, skillOwnerDecider);
      expect(state.skillIds.sort()).to.deep.equal(['in-flight', res.body.skill.id].sort());
    });

    it("tenant isolation: another user's skill and flow answer 404 on every operation", async () => {
      const skill = await newSkill(alice, { name: 'Secret', description: 'd', content: 'alice only' });
      const flowId = await client.newFlow(alice);
      expectError(await as(bob, 'GET', `/skills/${skill.id}`), 404, 'SKILL_NOT_FOUND');
      expectError(await as(bob, 'PUT', `/skills/${skill.id}`, { name: 'x', description: 'x', content: 'x' }), 404, 'SKILL_NOT_FOUND');
      expectError(await as(bob, 'PUT', `/skills/${skill.id}`, { name: 'x', description: 'x', content: 'x' }, { 'If-Match': '"7"' }), 404, 'SKILL_NOT_FOUND');
      expectError(await as(bob, 'PATCH', `/skills/${skill.id}/enabled`, { enabled: false }), 404, 'SKILL_NOT_FOUND');
      expectError(await as(bob, 'DELETE', `/skills/${skill.id}`), 404, 'SKILL_NOT_FOUND');
      expectError(await as(bob, 'GET', `/flows/${flowId}/skills`), 404, 'FLOW_NOT_FOUND');
      expectError(await as(bob, 'PUT', `/flows/${flowId}/skills/${skill.id}`, { enabled: true }), 404, 'FLOW_NOT_FOUND');
      const bobFlow = await client.newFlow(bob);
      expectError(await as(bob, 'PUT', `/flows/${bobFlow}/skills/${skill.id}`, { enabled: true }), 404, 'SKILL_NOT_FOUND');
      const bobs = await as(bob, 'GET', '/skills?limit=100');
      expect(bobs.body.items.map((s: { id: string }) => s.id)).to.not.include(skill.id);
      const summary = await as(bob, 'GET', '/skills/context-summary');
      expect(summary.body.skills.map((s: { id: string }) => s.id)).to.not.include(skill.id);
      expectError(await as(bob, 'GET', `/skills/context-summary?flowId=${flowId}`), 404, 'FLOW_NOT_FOUND');
    });

    it('per-flow toggles: GET /flows/{id}/skills says which are active and why; the flow version does not move', async () => {
      const dave = await registerUser(svc.baseUrl);
      const flowId = await client.newFlow(dave);
      const flowBefore = await client.getFlow(dave, flowId);
      const on = await newSkill(dave, { name: 'On', description: 'globally on', content: 'c1' });
      const off = await newSkill(dave, { name: 'Off', description: 'globally off', content: 'c2', enabled: false });
      const onButNotHere = await newSkill(dave, { name: 'OnNotHere', description: 'on, off for this flow', content: 'c3' });

      const t1 = await as(dave, 'PUT', `/flows/${flowId}/skills/${off.id}`, { enabled: true });
      expect(t1.status, t1.text).to.equal(200);
      expect(t1.body).to.deep.include({ flowId, active: true, reason: 'enabled_for_flow' });
      expect((await as(dave, 'PUT', `/flows/${flowId}/skills/${onButNotHere.id}`, { enabled: false })).body.reason).to.equal('disabled_for_flow');

      const list = await as(dave, 'GET', `/flows/${flowId}/skills`);
      expect(list.status, list.text).to.equal(200);
      const byName = Object.fromEntries(list.body.items.map((s: { name: string; active: boolean; reason: string }) => [s.name, [s.active, s.reason]]));
      expect(byName).to.deep.equal({ On: [true, 'enabled_globally'], Off: [true, 'enabled_for_flow'], OnNotHere: [false, 'disabled_for_flow'] });
      const active = await as(dave, 'GET', `/flows/${flowId}/skills?active=true`);
      expect(active.body.items.map((s: { name: string }) => s.name).sort()).to.deep.equal(['Off', 'On']);
      const paged = await as(dave, 'GET', `/flows/${flowId}/skills?limit=2`);
      expect(paged.body.items).to.have.length(2);
      const rest = await as(dave, 'GET', `/flows/${flowId}/skills?limit=2&cursor=${paged.body.nextCursor}`);
      expect(rest.body.items).to.have.length(1);
      expect(rest.body.nextCursor).to.equal(null);
      expectError(await as(dave, 'GET', `/flows/${flowId}/skills?cursor=abc`), 400, 'INVALID_CURSOR');

      // null removes the override: the global switch applies again.
      const cleared = await as(dave, 'PUT', `/flows/${flowId}/skills/${onButNotHere.id}`, { enabled: null });
      expect(cleared.body).to.deep.include({ active: true, reason: 'enabled_globally' });
      expect(cleared.body.skill.flowOverrides).to.deep.equal([]);
      // Another flow is unaffected by this flow's overrides.
      const other = await client.newFlow(dave);
      const otherList = await as(dave, 'GET', `/flows/${other}/skills?active=true`);
      expect(otherList.body.items.map((s: { name: string }) => s.name).sort()).to.deep.equal(['On', 'OnNotHere']);
      expect((await client.getFlow(dave, flowId)).version).to.equal(flowBefore.version);
      expect(on.id).to.be.a('string');
    });

    it('context summary: tokens per enabled skill and in total, exact for OpenAI models, estimates for others', async () => {
      const erin = await registerUser(svc.baseUrl);
      const empty = await as(erin, 'GET', '/skills/context-summary');
      expect(empty.status, empty.text).to.equal(200);
      expect(empty.body.total).to.deep.equal({ skills: 0, alwaysInjectedTokens: 0, descriptionTokens: 0, contentTokens: 0, allLoadedTokens: 0 });
      await newSkill(erin, { name: 'Pirate', description: 'talk like a pirate', content: 'Say arr in every sentence. '.repeat(50) });
      await newSkill(erin, { name: 'Haiku', description: 'answer in haiku', content: 'Five, seven, five syllables.' });
      await newSkill(erin, { name: 'Dormant', description: 'disabled', content: 'never counted', enabled: false });

      const gpt = await as(erin, 'GET', '/skills/context-summary?provider=openai&model=gpt-4o');
      expect(gpt.status, gpt.text).to.equal(200);
      expect(gpt.body).to.include({ provider: 'openai', model: 'gpt-4o', encoding: 'o200k_base', estimate: false });
      expect(gpt.body.skills.map((s: { name: string }) => s.name)).to.deep.equal(['Pirate', 'Haiku']);
      const [pirate, haiku] = gpt.body.skills;
      expect(pirate.contentTokens).to.be.greaterThan(200).and.lessThan(400);
      expect(haiku.contentTokens).to.be.greaterThan(3).and.lessThan(15);
      expect(pirate.descriptionTokens).to.be.greaterThan(10).and.lessThan(60);
      const t = gpt.body.total;
      expect(t.skills).to.equal(2);
      expect(t.contentTokens).to.equal(pirate.contentTokens + haiku.contentTokens);
      expect(t.descriptionTokens).to.equal(pirate.descriptionTokens + haiku.descriptionTokens);
      expect(t.alwaysInjectedTokens).to.be.greaterThan(t.descriptionTokens);
      expect(t.alwaysInjectedTokens).to.be.lessThan(t.contentTokens);
      expect(t.allLoadedTokens).to.equal(t.alwaysInjectedTokens + t.contentTokens);

      const gpt4 = await as(erin, 'GET', '/skills/context-summary?provider=openai&model=gpt-4');
      expect(gpt4.body).to.include({ encoding: 'cl100k_base', estimate: false });
      const claude = await as(erin, 'GET', '/skills/context-summary?provider=anthropic&model=claude-sonnet-4-5');
      expect(claude.body).to.include({ provider: 'anthropic', estimate: true });
      expect(claude.body.note).to.match(/estimate/);
      const gemini = await as(erin, 'GET', '/skills/context-summary?provider=google');
      expect(gemini.body.estimate).to.equal(true);
      expectError(await as(erin, 'GET', '/skills/context-summary?provider=nope'), 400, 'VALIDATION_FAILED', 'query.provider');
    });

    it('an LLM node gets only the descriptions in its system prompt, and load_skill returns the content (fake OpenAI server)', async () => {
      const frank = await registerUser(svc.baseUrl);
      const skill = await newSkill(frank, { name: 'Pirate', description: 'talk like a pirate', content: 'SECRET-CONTENT: say arr in every sentence.' });
      await newSkill(frank, { name: 'Unused', description: 'off here', content: 'not for this flow', enabled: false });
      const flowId = await client.newFlow(frank);
      const node = await client.addNode(frank, flowId, llmNode({ llm: 'openai', model: 'gpt-4o', prompt: 'Greet {{inputs.name}}', agentObjective: 'You are helpful.' }));
      fake.requests.length = 0;
      fake.toolCall = { name: 'load_skill', input: { skill: skill.id } };
      fake.text = 'Arr, hello Ada!';
      try {
        const res = await as(frank, 'POST', `/flows/${flowId}/nodes/${node.id}/process`, { inputs: { name: 'Ada' }, async: false });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.result.output).to.equal('Arr, hello Ada!');
      } finally {
        fake.toolCall = null;
      }
      const calls = fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
      expect(calls).to.have.length(2);
      const first = calls[0].body;
      const system = first.messages.find((m: { role: string }) => m.role === 'system').content as string;
      expect(system).to.match(/^You are helpful\.\n\n/);
      expect(system).to.contain(`- Pirate (id: ${skill.id}): talk like a pirate`);
      expect(system).to.not.contain('SECRET-CONTENT');
      expect(system).to.not.contain('Unused');
      expect(first.tools.map((t: { function: { name: string } }) => t.function.name)).to.deep.equal(['load_skill']);
      const toolMessage = calls[1].body.messages.find((m: { role: string }) => m.role === 'tool');
      expect(toolMessage.content).to.contain('SECRET-CONTENT: say arr in every sentence.');
    });

    it('an LLM node on the offline provider loads a skill with the scripted call rule; a flow override turns it off', async () => {
      const gina = await registerUser(svc.baseUrl);
      const skill = await newSkill(gina, { name: 'Haiku', description: 'answer in haiku', content: 'Five seven five.' });
      const flowId = await client.newFlow(gina);
      const node = await client.addNode(gina, flowId, llmNode({ llm: 'offline', model: 'any', prompt: `call load_skill {"skill":"${skill.id}"}\nWrite about {{inputs.topic}}` }));
      const res = await as(gina, 'POST', `/flows/${flowId}/nodes/${node.id}/process`, { inputs: { topic: 'rain' }, async: false });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.result.output).to.contain('# Skill: Haiku\n\nFive seven five.');
      expect(res.body.result.metadata).to.deep.include({ provider: 'offline', skills: { injected: [skill.id], loaded: [skill.id] } });

      expect((await as(gina, 'PUT', `/flows/${flowId}/skills/${skill.id}`, { enabled: false })).status).to.equal(200);
      const without = await as(gina, 'POST', `/flows/${flowId}/nodes/${node.id}/process`, { inputs: { topic: 'rain' }, async: false });
      expect(without.status, without.text).to.equal(200);
      expect(without.body.result.output).to.not.contain('Five seven five.');
      expect(without.body.result.metadata).to.not.have.property('skills');
    });

    it("an organization's flow runs with its workspace's skills, not its owner's personal ones", async () => {
      const olga = await registerUser(svc.baseUrl);
      const personal = await newSkill(olga, { name: 'Personal', description: 'only mine', content: 'PERSONAL-CONTENT' });
      const orgId = (await as(olga, 'POST', '/orgs', { name: `Skills ${mode}` })).body.organization.id;
      const inOrg = { ...olga, auth: { Authorization: `Bearer ${(await as(olga, 'POST', '/orgs/switch', { orgId })).body.token}` } };
      const shared = await newSkill(inOrg, { name: 'Shared', description: 'the team style', content: 'TEAM-CONTENT' });
      const flowId = await client.newFlow(inOrg);
      const node = await client.addNode(inOrg, flowId, llmNode({ llm: 'offline', model: 'any', prompt: `call load_skill {"skill":"${shared.id}"}\nWrite` }));
      const res = await as(inOrg, 'POST', `/flows/${flowId}/nodes/${node.id}/process`, { inputs: {}, async: false });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.result.output).to.contain('TEAM-CONTENT');
      expect(res.body.result.metadata.skills).to.deep.equal({ injected: [shared.id], loaded: [shared.id] });
      expect(res.body.result.metadata.skills.injected).to.not.include(personal.id);
    });
  });
}
