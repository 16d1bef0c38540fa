import { z } from 'zod';
import { ROLES, type Role } from '../../domain/shared/permissions.js';
import type { InvitationView, MemberView, OrgView, TeamView, WorkspaceView } from '../../projections/orgs.js';

/** Ids are service-made UUIDs; anything else is refused before it reaches a stream name. */
export const idSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an id');
export const orgParams = z.strictObject({ orgId: idSchema });

export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  budgetLimitUsd: z.number().nullable(),
  /** Null: the service's RUN_HISTORY_KEEP_DAYS / RUN_HISTORY_KEEP_LAST; 0: no such bound. */
  runHistoryKeepDays: z.number().nullable(),
  runHistoryKeepLast: z.number().nullable(),
});
export const myOrganizationSchema = organizationSchema.extend({ role: z.enum(ROLES), joinedAt: z.string().optional() });
export const memberSchema = z.object({ userId: z.string(), email: z.string().nullable(), name: z.string().nullable(), role: z.enum(ROLES), joinedAt: z.string() });
export const invitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  expiresAt: z.string(),
  status: z.enum(['pending', 'accepted', 'expired']),
  invitedBy: z.string().optional(),
  createdAt: z.string().optional(),
  acceptedAt: z.string().nullable().optional(),
});
export const workspaceSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  description: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const teamSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  description: z.string(),
  memberIds: z.array(z.string()),
  createdBy: z.string(),
  createdAt: z.string(),
});
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ success: z.literal(true), items: z.array(item), nextCursor: z.string().nullable() });
export const ok = z.object({ success: z.literal(true) });

// Views pick their fields one by one, so a field added to a read model is never published by accident.
export const orgView = (o: OrgView) => ({
  id: o._id,
  name: o.name,
  description: o.description,
  createdBy: o.createdBy,
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
  budgetLimitUsd: o.budgetLimitUsd ?? null,
  runHistoryKeepDays: o.runHistoryKeepDays ?? null,
  runHistoryKeepLast: o.runHistoryKeepLast ?? null,
});
export const myOrgView = (o: OrgView, role: Role, joinedAt?: string) => ({ ...orgView(o), role, ...(joinedAt && { joinedAt }) });
export const memberView = (m: MemberView) => ({ userId: m.userId, email: m.email ?? null, name: m.name ?? null, role: m.role, joinedAt: m.joinedAt });
export const invitationView = (i: InvitationView, now: Date) => ({
  id: i._id,
  email: i.email,
  role: i.role,
  expiresAt: i.expiresAt,
  status: i.acceptedAt ? ('accepted' as const) : Date.parse(i.expiresAt) <= now.getTime() ? ('expired' as const) : ('pending' as const),
  invitedBy: i.invitedBy,
  createdAt: i.createdAt,
  acceptedAt: i.acceptedAt,
});
export const workspaceView = (w: WorkspaceView) => ({
  id: w._id,
  orgId: w.orgId,
  name: w.name,
  description: w.description,
  createdBy: w.createdBy,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});
export const teamView = (t: TeamView) => ({
  id: t._id,
  orgId: t.orgId,
  name: t.name,
  description: t.description,
  memberIds: t.memberIds,
  createdBy: t.createdBy,
  createdAt: t.createdAt,
});

/** A body with only optional fields must still change something. */
export const notEmpty = <T extends z.ZodObject>(schema: T) =>
  schema.refine((value) => Object.values(value as object).some((v) => v !== undefined), { message: 'give at least one field to change' });
