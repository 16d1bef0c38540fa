import { z } from 'zod';
import { createSkill, deleteSkill, setSkillEnabled, setSkillForFlow, updateSkill } from '../../commands/skills.js';
import type { HandleResult } from '../../commands/handle.js';
import {
  loadSkillTool,
  SKILL_LIMITS,
  skillContentSchema,
  skillDescriptionSchema,
  skillNameSchema,
  skillActivationFor,
  skillNotFound,
  skillsSystemPrompt,
  skillStreamId,
  type SkillEvent,
  type SkillScope,
  type SkillState,
} from '../../domain/skills/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { LLM_PROVIDER_IDS } from '../../ports/llm.js';
import { allSkills, getSkill, listSkills, skillsForFlow, type SkillDoc } from '../../projections/skills.js';
import { defineRoute, type RouteInput } from '../route.js';
import { ifMatchOf, visibleFlow } from './flows.js';
import { flowParams } from './flows-schemas.js';
import { pageQuery } from './pagination.js';

/**
 * Skills (issue 14): named blocks of instructions for LLM nodes, agents and the assistant, in the
 * caller's active workspace (an organization's workspace shares them among its members; a
 * personal one is its owner's). Another tenant's skill answers 404. See docs/skills.md.
 */

type AnyInput = RouteInput<any, any, any>;

const tag = 'Skills';
const auth = 'bearer' as const;
const skillIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
const skillParams = z.strictObject({ skillId: skillIdSchema });
const flowSkillParams = flowParams.extend({ skillId: skillIdSchema });

const activationSchema = z.enum(['enabled_globally', 'enabled_for_flow', 'disabled_globally', 'disabled_for_flow']);
const overrideSchema = z.object({ flowId: z.string(), enabled: z.boolean() });
const skillSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  contentChars: z.number().int(),
  flowOverrides: z.array(overrideSchema),
  ownerId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});
const skillSchema = skillSummarySchema.extend({ content: z.string() });
const ok = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });
const skillReply = ok({ skill: skillSchema });

const contentDescribed = skillContentSchema.describe(`the instructions, at most ${SKILL_LIMITS.contentChars} characters (400 SKILL_CONTENT_TOO_LONG beyond)`);
const createBody = z.strictObject({
  name: skillNameSchema,
  description: skillDescriptionSchema.describe('short: this is what every prompt carries; the content is loaded on demand'),
  content: contentDescribed,
  enabled: z.boolean().default(true),
});
/** What POST takes, PUT takes (issue 36): `enabled` absent leaves the switch as it is, since a replacement that re-enabled a disabled skill would surprise. */
const replaceBody = z.strictObject({
  name: skillNameSchema,
  description: skillDescriptionSchema,
  content: contentDescribed,
  enabled: z.boolean().optional().describe('the global switch, as POST /skills takes it; absent: unchanged'),
});
const enabledBody = z.strictObject({ enabled: z.boolean() });
const flowToggleBody = z.strictObject({ enabled: z.boolean().nullable().describe('true/false: override the global switch for this flow; null: remove the override') });

const errors = {
  401: { description: 'UNAUTHENTICATED' },
  403: { description: 'FORBIDDEN: the credential lacks the permission' },
  404: { description: "SKILL_NOT_FOUND (missing, deleted or another tenant's)" },
};

export const scopeOf = (input: AnyInput): SkillScope => ({ userId: input.principal!.userId, orgId: input.principal!.orgId, workspaceId: input.principal!.workspaceId });

function summaryOf(d: SkillDoc): z.infer<typeof skillSummarySchema> {
  return {
    id: d._id, name: d.name, description: d.description, enabled: d.enabled, contentChars: d.content.length, flowOverrides: d.flowOverrides,
    ownerId: d.ownerId, createdAt: d.createdAt, updatedAt: d.updatedAt, version: d.version,
  };
}
const viewOfDoc = (d: SkillDoc) => ({ ...summaryOf(d), content: d.content });

function viewOfState(s: SkillState, revision: number) {
  return {
    id: s.skillId, name: s.name, description: s.description, enabled: s.enabled, contentChars: s.content.length,
    flowOverrides: Object.entries(s.flowOverrides).map(([flowId, enabled]) => ({ flowId, enabled })),
    ownerId: s.ownerId, createdAt: s.createdAt, updatedAt: s.updatedAt, version: revision, content: s.content,
  };
}

/** Read-your-writes, then the skill as a GET will show it (the aggregate's own state when the read model is late). */
async function answer(input: AnyInput, skillId: string, written: HandleResult<SkillState, SkillEvent>, status = 200) {
  await input.settle(written.position, skillStreamId(skillId));
  const doc = await getSkill(input.services.readStore, scopeOf(input), skillId);
  const skill = doc && doc.version >= written.revision ? viewOfDoc(doc) : viewOfState(written.state, written.revision);
  return { status, body: { success: true, skill }, headers: { ETag: `"${skill.version}"` } };
}

async function visibleSkill(input: AnyInput, skillId: string): Promise<SkillDoc> {
  const doc = await getSkill(input.services.readStore, scopeOf(input), skillId);
  if (!doc) throw skillNotFound();
  return doc;
}

const summaryQuery = z.strictObject({
  provider: z.enum(LLM_PROVIDER_IDS).optional().describe('the model family to count for (default openai)'),
  model: z.string().min(1).max(200).optional().describe('e.g. gpt-4o, claude-sonnet-4-5, gemini-2.5-pro'),
  flowId: z.string().min(1).max(64).optional().describe("count the skills active for this flow (overrides applied) instead of the globally enabled ones"),
});

const tokenSkillSchema = z.object({
  id: z.string(),
  name: z.string(),
  reason: activationSchema,
  /** Its line in the system prompt: always sent. */
  descriptionTokens: z.number().int(),
  /** Its content: sent only when the model calls load_skill for it. */
  contentTokens: z.number().int(),
  contentChars: z.number().int(),
});
const summaryReply = ok({
  provider: z.string(),
  model: z.string().nullable(),
  flowId: z.string().nullable(),
  encoding: z.string(),
  estimate: z.boolean(),
  note: z.string(),
  skills: z.array(tokenSkillSchema),
  total: z.object({
    skills: z.number().int(),
    /** The whole skills block of the system prompt plus the load_skill tool definition: what every call carries. */
    alwaysInjectedTokens: z.number().int(),
    descriptionTokens: z.number().int(),
    contentTokens: z.number().int(),
    /** alwaysInjectedTokens + contentTokens: every skill loaded. */
    allLoadedTokens: z.number().int(),
  }),
});

export const skillRoutes = [
  defineRoute({
    method: 'GET',
    path: '/skills/context-summary',
    operationId: 'getSkillsContextSummary',
    summary:
      "tokens of context the active skills inject, per skill and in total (gpt-tokenizer; OpenAI models exact, other families counted with o200k_base and flagged estimate: true)",
    tag, auth, permission: 'view_resources',
    query: summaryQuery,
    responses: { 200: { description: 'the counts', schema: summaryReply }, ...errors, 404: { description: "FLOW_NOT_FOUND (flowId given: missing or another tenant's)" } },
    async handler(input) {
      const { query, services } = input;
      const scope = scopeOf(input);
      if (query.flowId) await visibleFlow(input, query.flowId);
      const rows = query.flowId
        ? (await skillsForFlow(services.readStore, scope, query.flowId)).filter((r) => r.active)
        : (await allSkills(services.readStore, scope)).filter((d) => d.enabled).map((skill) => ({ skill, active: true, reason: 'enabled_globally' as const }));
      const provider = query.provider ?? 'openai';
      const counter = await services.tokenizer.counterFor({ provider, model: query.model ?? null });
      const skills = rows.map(({ skill, reason }) => ({
        id: skill._id, name: skill.name, reason,
        descriptionTokens: counter.count(skillsSystemPrompt([{ id: skill._id, name: skill.name, description: skill.description }]).split('\n')[1]),
        contentTokens: counter.count(skill.content), contentChars: skill.content.length,
      }));
      const block = skillsSystemPrompt(rows.map(({ skill }) => ({ id: skill._id, name: skill.name, description: skill.description })));
      const alwaysInjectedTokens = rows.length === 0 ? 0 : counter.count(block) + counter.count(JSON.stringify(loadSkillTool));
      const contentTokens = skills.reduce((n, s) => n + s.contentTokens, 0);
      return {
        status: 200,
        body: {
          success: true, provider, model: query.model ?? null, flowId: query.flowId ?? null, encoding: counter.encoding, estimate: counter.estimate, note: counter.note, skills,
          total: { skills: skills.length, alwaysInjectedTokens, descriptionTokens: skills.reduce((n, s) => n + s.descriptionTokens, 0), contentTokens, allLoadedTokens: alwaysInjectedTokens + contentTokens },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/skills',
    operationId: 'listSkills',
    summary: 'list the skills of the active workspace, oldest first (without their content: contentChars says how long it is)',
    tag, auth, permission: 'view_resources',
    query: pageQuery.extend({ enabled: z.enum(['true', 'false']).optional().describe('only enabled (true) or disabled (false) skills') }),
    responses: { 200: { description: 'a page', schema: ok({ items: z.array(skillSummarySchema), nextCursor: z.string().nullable() }) }, ...errors },
    async handler(input) {
      const { query, services } = input;
      const page = await listSkills(services.readStore, scopeOf(input), { limit: query.limit, cursor: query.cursor ?? null, enabled: query.enabled === undefined ? undefined : query.enabled === 'true' });
      return { status: 200, body: { success: true, items: page.items.map(summaryOf), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/skills',
    operationId: 'createSkill',
    summary: `create a skill (enabled unless enabled: false); at most ${SKILL_LIMITS.perOwner} per workspace owner`,
    tag, auth, permission: 'edit_resources',
    body: createBody,
    responses: {
      201: { description: 'created (ETag: its version)', schema: skillReply },
      400: { description: 'VALIDATION_FAILED (names the field), SKILL_CONTENT_TOO_LONG (details.field body.content, limit, actual)' },
      ...errors,
      409: { description: `TOO_MANY_SKILLS: the owner already holds ${SKILL_LIMITS.perOwner} skills` },
    },
    async handler(input) {
      const skillId = input.services.newId();
      const written = await createSkill(input.services.eventStore, input.command, scopeOf(input), { skillId, ...input.body });
      return answer(input, skillId, written, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/skills/{skillId}',
    operationId: 'getSkill',
    summary: 'get a skill with its content (ETag: its version)',
    tag, auth, permission: 'view_resources',
    params: skillParams,
    responses: { 200: { description: 'the skill', schema: skillReply }, ...errors },
    async handler(input) {
      const doc = await visibleSkill(input, input.params.skillId);
      return { status: 200, body: { success: true, skill: viewOfDoc(doc) }, headers: { ETag: `"${doc.version}"` } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/skills/{skillId}',
    operationId: 'updateSkill',
    summary: 'replace name, description and content, and the global switch when `enabled` is given (the body POST takes; If-Match optional: 412 when the skill moved on)',
    tag, auth, permission: 'edit_resources',
    params: skillParams,
    body: replaceBody,
    responses: {
      200: { description: 'the skill as replaced', schema: skillReply },
      400: { description: 'VALIDATION_FAILED, SKILL_CONTENT_TOO_LONG' },
      ...errors,
      412: { description: 'PRECONDITION_FAILED' },
    },
    async handler(input) {
      const expected = ifMatchOf(input);
      const written = await updateSkill(input.services.eventStore, input.command, scopeOf(input), input.params.skillId, input.body, expected).catch(async (err) => {
        // A 412 about a skill the caller cannot see would reveal that it exists.
        if (err?.code === 'PRECONDITION_FAILED') await visibleSkill(input, input.params.skillId);
        throw err;
      });
      return answer(input, input.params.skillId, written);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/skills/{skillId}',
    operationId: 'deleteSkill',
    summary: "delete a skill (its per-flow overrides go with it; its slot is given back to the owner)",
    tag, auth, permission: 'edit_resources',
    params: skillParams,
    responses: { 200: { description: 'deleted', schema: ok({ deleted: z.literal(true), id: z.string() }) }, ...errors },
    async handler(input) {
      const written = await deleteSkill(input.services.eventStore, input.command, scopeOf(input), input.params.skillId);
      await input.settle(written.position, skillStreamId(input.params.skillId));
      return { status: 200, body: { success: true, deleted: true, id: input.params.skillId } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/skills/{skillId}/enabled',
    operationId: 'setSkillEnabled',
    summary: 'enable or disable a skill everywhere (per-flow overrides still win for their flows)',
    tag, auth, permission: 'edit_resources',
    params: skillParams,
    body: enabledBody,
    responses: { 200: { description: 'the skill', schema: skillReply }, ...errors },
    async handler(input) {
      const written = await setSkillEnabled(input.services.eventStore, input.command, scopeOf(input), input.params.skillId, input.body.enabled);
      return answer(input, input.params.skillId, written);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/skills',
    operationId: 'listFlowSkills',
    summary:
      "the workspace's skills with whether each is active for this flow and why (enabled_globally, enabled_for_flow, disabled_globally, disabled_for_flow); a per-flow override wins over the global switch",
    tag, auth, permission: 'view_resources',
    params: flowParams,
    query: pageQuery.extend({ active: z.enum(['true', 'false']).optional().describe('only active (true) or inactive (false) skills') }),
    responses: {
      200: {
        description: 'a page (oldest skill first)',
        schema: ok({ flowId: z.string(), items: z.array(skillSummarySchema.extend({ active: z.boolean(), reason: activationSchema })), nextCursor: z.string().nullable() }),
      },
      ...errors,
      404: { description: "FLOW_NOT_FOUND (missing, deleted or another tenant's)" },
    },
    async handler(input) {
      const { params, query, services } = input;
      await visibleFlow(input, params.flowId);
      let rows = await skillsForFlow(services.readStore, scopeOf(input), params.flowId);
      if (query.active !== undefined) rows = rows.filter((r) => r.active === (query.active === 'true'));
      // At most SKILL_LIMITS.perOwner rows: paged in memory, the cursor is the offset.
      if (query.cursor !== undefined && !/^\d{1,4}$/.test(query.cursor)) throw new DomainError('INVALID_CURSOR', 'the cursor is not one this list gave', 'invalid', { field: 'query.cursor' });
      const offset = query.cursor ? Number(query.cursor) : 0;
      const page = rows.slice(offset, offset + query.limit);
      const next = offset + query.limit < rows.length ? String(offset + query.limit) : null;
      return { status: 200, body: { success: true, flowId: params.flowId, items: page.map((r) => ({ ...summaryOf(r.skill), active: r.active, reason: r.reason })), nextCursor: next } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/flows/{flowId}/skills/{skillId}',
    operationId: 'setFlowSkill',
    summary: 'toggle a skill for one flow: enabled true/false overrides the global switch there, null removes the override (recorded on the skill: the flow\'s version does not move)',
    tag, auth, permission: 'edit_resources',
    params: flowSkillParams,
    body: flowToggleBody,
    responses: {
      200: {
        description: 'the skill as it now stands for the flow',
        schema: ok({ flowId: z.string(), skill: skillSchema, active: z.boolean(), reason: activationSchema }),
      },
      ...errors,
      404: { description: 'FLOW_NOT_FOUND or SKILL_NOT_FOUND (missing, deleted or another tenant\'s)' },
      409: { description: `TOO_MANY_FLOW_OVERRIDES: the skill already has ${SKILL_LIMITS.flowOverrides} per-flow overrides` },
    },
    async handler(input) {
      const { params, body, services } = input;
      await visibleFlow(input, params.flowId);
      const written = await setSkillForFlow(services.eventStore, input.command, scopeOf(input), params.skillId, params.flowId, body.enabled);
      const reply = await answer(input, params.skillId, written);
      const skill = (reply.body as { skill: ReturnType<typeof viewOfState> }).skill;
      return { ...reply, body: { success: true, flowId: params.flowId, skill, ...skillActivationFor(skill, params.flowId) } };
    },
  }),
];
