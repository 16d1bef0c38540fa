import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { ROLES } from '../shared/permissions.js';

/** Limits shared by the decider and the HTTP schemas, so both refuse the same input. */
// No control characters: names end up in mail subjects and UIs.
export const orgNameSchema = z.string().trim().min(1).max(100).regex(/^[^\u0000-\u001F\u007F-\u009F]*$/, 'must not contain control characters'); // \p{Cc} as explicit ranges (OpenAPI tools in other languages)
export const descriptionSchema = z.string().trim().max(1000);
export const roleSchema = z.enum(ROLES);
export const LLM_PROVIDERS = ['openai', 'anthropic', 'google', 'openai_compatible'] as const;
export const llmProviderSchema = z.enum(LLM_PROVIDERS);
export type LlmProvider = z.infer<typeof llmProviderSchema>;
/** Budget limits are US dollars per calendar month (UTC). */
export const budgetLimitSchema = z.number().finite().min(0).max(1_000_000_000);
/** Run-history retention of the organization's runs (null: the service's RUN_HISTORY_KEEP_DAYS / _LAST; 0: no such bound). */
export const runHistoryKeepDaysSchema = z.number().int().min(0).max(36_500);
export const runHistoryKeepLastSchema = z.number().int().min(0).max(100_000_000);

const at = z.string();

/** Every event of an `org-<id>` stream. No secret in clear: invitation secrets as SHA-256, API keys sealed. */
export const orgEventSchemas = {
  OrganizationCreated: z.object({ orgId: z.string(), name: orgNameSchema, description: descriptionSchema, createdBy: z.string(), createdAt: at }),
  OrganizationUpdated: z.object({
    name: orgNameSchema.optional(),
    description: descriptionSchema.optional(),
    budgetLimitUsd: budgetLimitSchema.nullable().optional(),
    runHistoryKeepDays: runHistoryKeepDaysSchema.nullable().optional(),
    runHistoryKeepLast: runHistoryKeepLastSchema.nullable().optional(),
    updatedBy: z.string(),
    at,
  }),
  OrganizationDeleted: z.object({ deletedBy: z.string(), at }),
  MemberJoined: z.object({
    userId: z.string(),
    role: roleSchema,
    email: z.string().nullable(),
    name: z.string().nullable(),
    via: z.enum(['creation', 'invitation']),
    invitationId: z.string().nullable(),
    at,
  }),
  MemberRoleChanged: z.object({ userId: z.string(), from: roleSchema, to: roleSchema, changedBy: z.string(), at }),
  MemberRemoved: z.object({ userId: z.string(), removedBy: z.string(), left: z.boolean(), at }),
  InvitationCreated: z.object({
    invitationId: z.string(),
    email: z.string(),
    role: roleSchema,
    /** SHA-256 hex of the token's secret part; the token itself only travels by mail. */
    secretHash: z.string().regex(/^[0-9a-f]{64}$/),
    expiresAt: at,
    invitedBy: z.string(),
    at,
  }),
  InvitationAccepted: z.object({ invitationId: z.string(), userId: z.string(), at }),
  WorkspaceCreated: z.object({ workspaceId: z.string(), name: orgNameSchema, description: descriptionSchema, createdBy: z.string(), at }),
  WorkspaceUpdated: z.object({ workspaceId: z.string(), name: orgNameSchema.optional(), description: descriptionSchema.optional(), updatedBy: z.string(), at }),
  /**
   * `fallbackWorkspaceId`: the organization's default workspace (its first remaining one) when it
   * was deleted: where members whose active workspace this was, and credentials still naming it,
   * land. Missing on events written before issue 37: readers then use the default at read time.
   */
  WorkspaceDeleted: z.object({ workspaceId: z.string(), deletedBy: z.string(), fallbackWorkspaceId: z.string().optional(), at }),
  TeamCreated: z.object({ teamId: z.string(), name: orgNameSchema, description: descriptionSchema, memberIds: z.array(z.string()), createdBy: z.string(), at }),
  LlmCredentialSet: z.object({
    provider: llmProviderSchema,
    /** SealedBox output (`v1.…`), never the key. */
    sealedApiKey: z.string().startsWith('v1.'),
    baseUrl: z.string().nullable(),
    setBy: z.string(),
    at,
  }),
  LlmCredentialRemoved: z.object({ provider: llmProviderSchema, removedBy: z.string(), at }),
};

export type OrgEvent = EventsOf<typeof orgEventSchemas>;
export type OrgEventOf<K extends OrgEvent['type']> = Extract<OrgEvent, { type: K }>;
