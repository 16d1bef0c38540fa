import { expect } from 'chai';
import {
  findSkill,
  loadSkillResult,
  SKILL_LIMITS,
  skillActivationFor,
  skillDecider,
  skillOwnerDecider,
  skillsSystemPrompt,
  withSkills,
  type SkillEvent,
  type SkillOwnerEvent,
} from '../../domain/skills/index.js';
import { createGptTokenizer, encodingOfOpenAiModel } from '../../infra/tokenizer/gpt-tokenizer.js';
import { skillsProjector } from '../../projections/skills.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:01:00.000Z';
const alice = { userId: 'alice', orgId: null, workspaceId: null };
const bob = { userId: 'bob', orgId: null, workspaceId: null };
const orgScope = (userId: string) => ({ userId, orgId: 'o1', workspaceId: 'w1' });

const created = (over: Partial<Extract<SkillEvent, { type: 'SkillCreated' }>['data']> = {}): SkillEvent => ({
  type: 'SkillCreated',
  data: { skillId: 's1', name: 'Pirate', description: 'talk like a pirate', content: 'Say arr.', enabled: true, ownerId: 'alice', orgId: null, workspaceId: null, at, ...over },
});

describe('skills: decider', () => {
  const spec = deciderSpec(skillDecider);

  it('creates a skill, refuses an id used twice', () => {
    spec.given([]).when({ type: 'CreateSkill', skillId: 's1', name: 'Pirate', description: 'talk like a pirate', content: 'Say arr.', enabled: true, ownerId: 'alice', orgId: null, workspaceId: null, at }).then([created()]);
    spec.given([created()]).when({ type: 'CreateSkill', skillId: 's1', name: 'X', description: 'x', content: '', enabled: true, ownerId: 'alice', orgId: null, workspaceId: null, at }).thenThrows('SKILL_EXISTS', 'conflict');
  });

  it('refuses content longer than 20,000 characters (400 naming body.content), accepts exactly 20,000', () => {
    const long = 'a'.repeat(SKILL_LIMITS.contentChars + 1);
    const err = spec.given([]).when({ type: 'CreateSkill', skillId: 's1', name: 'P', description: 'd', content: long, enabled: true, ownerId: 'alice', orgId: null, workspaceId: null, at }).thenThrows('SKILL_CONTENT_TOO_LONG', 'invalid');
    expect(err.details).to.deep.equal({ field: 'body.content', limit: 20_000, actual: 20_001 });
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: 'P', description: 'd', content: long, at }).thenThrows('SKILL_CONTENT_TOO_LONG', 'invalid');
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: 'P', description: 'd', content: 'a'.repeat(20_000), at: later }).then([
      { type: 'SkillUpdated', data: { name: 'P', description: 'd', content: 'a'.repeat(20_000), at: later } },
    ]);
  });

  it('UpdateSkill takes enabled as CreateSkill does: one decision, nothing when nothing changes (issue 36)', () => {
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: 'Q', description: 'd', content: 'c', enabled: false, at: later }).then([
      { type: 'SkillUpdated', data: { name: 'Q', description: 'd', content: 'c', at: later } },
      { type: 'SkillEnabledChanged', data: { enabled: false, at: later } },
    ]);
    const same = spec.stateOf([created()]);
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: same.name, description: same.description, content: same.content, enabled: false, at: later }).then([
      { type: 'SkillEnabledChanged', data: { enabled: false, at: later } },
    ]);
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: same.name, description: same.description, content: same.content, enabled: same.enabled, at: later }).then([]);
    spec.given([created()]).when({ type: 'UpdateSkill', scope: alice, name: same.name, description: same.description, content: same.content, at: later }).then([]);
  });

  it('answers another tenant, a deleted and a missing skill with the same 404', () => {
    spec.given([created()]).when({ type: 'SetSkillEnabled', scope: bob, enabled: false, at }).thenThrows('SKILL_NOT_FOUND', 'not_found');
    spec.given([created()]).when({ type: 'SetSkillEnabled', scope: orgScope('alice'), enabled: false, at }).thenThrows('SKILL_NOT_FOUND', 'not_found');
    spec.given([created(), { type: 'SkillDeleted', data: { at } }]).when({ type: 'DeleteSkill', scope: alice, at }).thenThrows('SKILL_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'DeleteSkill', scope: alice, at }).thenThrows('SKILL_NOT_FOUND', 'not_found');
  });

  it('shares an organization workspace skill with its members', () => {
    const orgSkill = created({ ownerId: 'alice', orgId: 'o1', workspaceId: 'w1' });
    spec.given([orgSkill]).when({ type: 'SetSkillEnabled', scope: orgScope('bob'), enabled: false, at: later }).then([{ type: 'SkillEnabledChanged', data: { enabled: false, at: later } }]);
  });

  it('toggles globally and per flow; repeating a toggle records nothing; null removes the override', () => {
    spec.given([created()]).when({ type: 'SetSkillEnabled', scope: alice, enabled: true, at }).then([]);
    spec.given([created()]).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'f1', enabled: false, at }).then([{ type: 'SkillFlowOverrideSet', data: { flowId: 'f1', enabled: false, at } }]);
    const overridden: SkillEvent[] = [created(), { type: 'SkillFlowOverrideSet', data: { flowId: 'f1', enabled: false, at } }];
    spec.given(overridden).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'f1', enabled: false, at }).then([]);
    spec.given(overridden).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'f1', enabled: null, at }).then([{ type: 'SkillFlowOverrideSet', data: { flowId: 'f1', enabled: null, at } }]);
    spec.given([created()]).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'f1', enabled: null, at }).then([]);
    expect(spec.stateOf([...overridden, { type: 'SkillFlowOverrideSet', data: { flowId: 'f1', enabled: null, at } }]).flowOverrides).to.deep.equal({});
  });

  it('caps per-flow overrides per skill', () => {
    const many: SkillEvent[] = [created(), ...Array.from({ length: SKILL_LIMITS.flowOverrides }, (_, i) => ({ type: 'SkillFlowOverrideSet' as const, data: { flowId: `f${i}`, enabled: true, at } }))];
    spec.given(many).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'other', enabled: true, at }).thenThrows('TOO_MANY_FLOW_OVERRIDES', 'conflict');
    spec.given(many).when({ type: 'SetSkillForFlow', scope: alice, flowId: 'f3', enabled: false, at }).then([{ type: 'SkillFlowOverrideSet', data: { flowId: 'f3', enabled: false, at } }]);
  });

  it('says why a skill is active for a flow: the override wins over the global switch', () => {
    expect(skillActivationFor({ enabled: true, flowOverrides: {} }, 'f1')).to.deep.equal({ active: true, reason: 'enabled_globally' });
    expect(skillActivationFor({ enabled: false, flowOverrides: { f1: true } }, 'f1')).to.deep.equal({ active: true, reason: 'enabled_for_flow' });
    expect(skillActivationFor({ enabled: true, flowOverrides: [{ flowId: 'f1', enabled: false }] }, 'f1')).to.deep.equal({ active: false, reason: 'disabled_for_flow' });
    expect(skillActivationFor({ enabled: false, flowOverrides: { f2: true } }, 'f1')).to.deep.equal({ active: false, reason: 'disabled_globally' });
  });
});

describe('skills: owner slots (100 per owner)', () => {
  const spec = deciderSpec(skillOwnerDecider);
  const taken = (n: number): SkillOwnerEvent[] => Array.from({ length: n }, (_, i) => ({ type: 'SkillSlotTaken' as const, data: { skillId: `s${i}`, at } }));

  it('takes slots up to the limit, then refuses with 409 TOO_MANY_SKILLS', () => {
    spec.given(taken(99)).when({ type: 'TakeSkillSlot', skillId: 'new', at }).then([{ type: 'SkillSlotTaken', data: { skillId: 'new', at } }]);
    const err = spec.given(taken(100)).when({ type: 'TakeSkillSlot', skillId: 'new', at }).thenThrows('TOO_MANY_SKILLS', 'conflict');
    expect(err.details).to.deep.equal({ limit: 100 });
  });

  it('gives a slot back on release; releasing twice or taking twice records nothing', () => {
    const full = taken(100);
    spec.given([...full, { type: 'SkillSlotReleased', data: { skillId: 's5', at } }]).when({ type: 'TakeSkillSlot', skillId: 'new', at }).then([{ type: 'SkillSlotTaken', data: { skillId: 'new', at } }]);
    spec.given(full).when({ type: 'ReleaseSkillSlot', skillId: 'unknown', at }).then([]);
    spec.given(full).when({ type: 'TakeSkillSlot', skillId: 's1', at }).then([]);
  });
});

describe('skills: injection text and load_skill', () => {
  const skills = [
    { id: 's1', name: 'Pirate', description: 'talk like a pirate', content: 'Say arr.' },
    { id: 's2', name: 'Haiku', description: 'answer in haiku', content: '5-7-5.' },
  ];

  it('puts only names and short descriptions in the system prompt, after the node\'s own instructions', () => {
    const block = skillsSystemPrompt(skills);
    expect(block).to.contain('- Pirate (id: s1): talk like a pirate').and.contain('- Haiku (id: s2): answer in haiku').and.contain('load_skill');
    expect(block).to.not.contain('Say arr.');
    expect(withSkills('Be brief.', skills)).to.match(/^Be brief\.\n\nSkills you can use/);
    expect(withSkills(null, [])).to.equal(null);
    expect(withSkills('Be brief.', [])).to.equal('Be brief.');
  });

  it('finds a skill by id, exact name, or a single mention; refuses unknown or ambiguous ones', () => {
    expect(findSkill(skills, 's2')?.id).to.equal('s2');
    expect(findSkill(skills, 'pirate')?.id).to.equal('s1');
    expect(findSkill(skills, 'please load the Haiku skill')?.id).to.equal('s2');
    expect(findSkill(skills, 'Pirate or Haiku')).to.equal(null);
    expect(findSkill(skills, 'nothing')).to.equal(null);
    expect(loadSkillResult(skills, { skill: 's1' })).to.deep.equal({ content: '# Skill: Pirate\n\nSay arr.', isError: false, skillId: 's1' });
    const missing = loadSkillResult(skills, { skill: 'zzz' });
    expect(missing.isError).to.equal(true);
    expect(missing.content).to.contain('s1 (Pirate)');
  });
});

describe('skills: token counting (gpt-tokenizer)', () => {
  it('counts OpenAI models with their own encoding and flags other families as estimates', async () => {
    const tokenizer = createGptTokenizer();
    expect(encodingOfOpenAiModel('gpt-4o-mini')).to.equal('o200k_base');
    expect(encodingOfOpenAiModel('gpt-4')).to.equal('cl100k_base');
    expect(encodingOfOpenAiModel('gpt-3.5-turbo')).to.equal('cl100k_base');
    const gpt4o = await tokenizer.counterFor({ provider: 'openai', model: 'gpt-4o' });
    expect(gpt4o).to.include({ encoding: 'o200k_base', estimate: false });
    expect(gpt4o.count('hello world')).to.equal(2);
    const gpt4 = await tokenizer.counterFor({ provider: 'openai', model: 'gpt-4' });
    expect(gpt4).to.include({ encoding: 'cl100k_base', estimate: false });
    expect(gpt4.count('hello world')).to.equal(2);
    const claude = await tokenizer.counterFor({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(claude).to.include({ encoding: 'o200k_base', estimate: true });
    expect(claude.note).to.contain('estimate');
    // A real tokenizer, not words: one long word is several tokens.
    expect(gpt4o.count('antidisestablishmentarianism')).to.be.greaterThan(1);
  });
});

describe('skills: projection', () => {
  const s = (event: SkillEvent, id = 's1') => ({ streamId: `skill-${id}`, event });
  const events = [
    s(created()),
    s({ type: 'SkillUpdated', data: { name: 'Pirate 2', description: 'arr', content: 'Say arr!', at: later } }),
    s({ type: 'SkillEnabledChanged', data: { enabled: false, at: later } }),
    s({ type: 'SkillFlowOverrideSet', data: { flowId: 'f1', enabled: true, at: later } }),
    s({ type: 'SkillFlowOverrideSet', data: { flowId: 'f2', enabled: false, at: later } }),
    s({ type: 'SkillFlowOverrideSet', data: { flowId: 'f2', enabled: null, at: later } }),
    s(created({ skillId: 's2', name: 'Gone', ownerId: 'bob' }), 's2'),
    s({ type: 'SkillDeleted', data: { at: later } }, 's2'),
  ];

  it('projects each skill with its overrides; a deleted one stays a tombstone without content (also after a redelivery)', async () => {
    await projectionSpec([skillsProjector]).given(events).thenDocuments('skills', [
      { _id: 's1', ownerId: 'alice', name: 'Pirate 2', description: 'arr', content: 'Say arr!', enabled: false, flowOverrides: [{ flowId: 'f1', enabled: true }], version: 5, deleted: false, createdAt: at, updatedAt: later },
      { _id: 's2', deleted: true, content: '', version: 1 },
    ]);
  });
});
