import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of the skills context (README "Limits", docs/skills.md). */
export const SKILL_LIMITS = {
  nameChars: 100,
  /** The short description is what every prompt carries; keep it short. */
  descriptionChars: 500,
  contentChars: 20_000,
  /** Skills per owner (a user's personal workspace, or an organization's workspace). */
  perOwner: 100,
  /** Flows with a per-flow override, per skill. */
  flowOverrides: 1_000,
} as const;

export const skillNameSchema = z.string().trim().min(1).max(SKILL_LIMITS.nameChars);
export const skillDescriptionSchema = z.string().trim().min(1).max(SKILL_LIMITS.descriptionChars);
/** The 20,000-character limit is the decider's (400 SKILL_CONTENT_TOO_LONG), so the schema takes any length. */
export const skillContentSchema = z.string();

export const skillEventSchemas = {
  SkillCreated: z.object({
    skillId: z.string(),
    name: skillNameSchema,
    description: skillDescriptionSchema,
    content: skillContentSchema.max(SKILL_LIMITS.contentChars),
    enabled: z.boolean(),
    ownerId: z.string(),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    at: z.string(),
  }),
  /** PUT: name, description and content replaced together. */
  SkillUpdated: z.object({ name: skillNameSchema, description: skillDescriptionSchema, content: skillContentSchema.max(SKILL_LIMITS.contentChars), at: z.string() }),
  SkillEnabledChanged: z.object({ enabled: z.boolean(), at: z.string() }),
  /**
   * The per-flow override lives with the skill (not in the flow's stream): toggling a skill for a
   * flow does not move the flow's version (no 412 for an editor holding its ETag), and deleting the
   * skill takes its overrides with it. `enabled: null` removes the override.
   */
  SkillFlowOverrideSet: z.object({ flowId: z.string(), enabled: z.boolean().nullable(), at: z.string() }),
  SkillDeleted: z.object({ at: z.string() }),
};

export type SkillEvent = EventsOf<typeof skillEventSchemas>;

/**
 * The owner's skill slots (`skillowner-<ownerKey>`): the 100-per-owner limit is decided on this
 * stream's folded state, so two concurrent creates conflict on it instead of both passing a count.
 */
export const skillOwnerEventSchemas = {
  SkillSlotTaken: z.object({ skillId: z.string(), at: z.string() }),
  SkillSlotReleased: z.object({ skillId: z.string(), at: z.string() }),
};

export type SkillOwnerEvent = EventsOf<typeof skillOwnerEventSchemas>;

export const SKILL_CATEGORY = 'skill';
export const SKILL_OWNER_CATEGORY = 'skillowner';
export const skillStreamId = (skillId: string) => `${SKILL_CATEGORY}-${skillId}`;

export interface SkillScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

/** Whose skills: the organization's workspace (shared by its members), or one user's personal workspace. */
export function skillOwnerKey(scope: Pick<SkillScope, 'userId' | 'orgId' | 'workspaceId'>): string {
  return scope.orgId !== null ? `w.${scope.orgId}.${scope.workspaceId ?? 'default'}` : `u.${scope.userId}`;
}
export const skillOwnerStreamId = (scope: SkillScope) => `${SKILL_OWNER_CATEGORY}-${skillOwnerKey(scope)}`;
