import { z } from 'zod';
import { switchActiveScope } from '../../commands/users.js';
import { DomainError } from '../../domain/shared/decider.js';
import { userStreamId } from '../../domain/users/index.js';
import type { Principal } from '../../domain/shared/principal.js';
import type { Services } from '../../ports/services.js';
import { firstWorkspace, getMember, getOrg, getWorkspace } from '../../projections/orgs.js';
import type { RouteInput } from '../route.js';
import { ValidationError } from '../errors.js';
import { defineRoute } from '../route.js';
import { idSchema, myOrganizationSchema, myOrgView, workspaceSchema, workspaceView } from './orgs-schemas.js';

const tag = 'Organizations';
const switchReply = z.object({
  success: z.literal(true),
  token: z.string(),
  expiresIn: z.number(),
  organization: myOrganizationSchema.nullable(),
  workspace: workspaceSchema.nullable(),
});

const workspaceNotFound = () => new DomainError('WORKSPACE_NOT_FOUND', 'workspace not found', 'not_found');

/**
 * Records the new scope on the account (API keys and CLI tokens follow it) and answers a new JWT
 * carrying it; the old token keeps its scope until it expires.
 */
async function switchTo(
  input: Pick<RouteInput<unknown, unknown, unknown>, 'services' | 'command' | 'settle'> & { principal: Principal },
  orgId: string | null,
  workspaceId: string | null,
) {
  const { services, command, settle, principal } = input;
  const result = await switchActiveScope(services.eventStore, command, principal.userId, orgId, workspaceId);
  await settle(result.position, userStreamId(principal.userId));
  const { token, expiresIn } = await services.tokens.issue({ userId: principal.userId, orgId, workspaceId });
  return { token, expiresIn };
}

async function scopeOf(services: Services, userId: string, orgId: string) {
  const [org, member] = await Promise.all([getOrg(services.readStore, orgId), getMember(services.readStore, orgId, userId)]);
  if (!org || !member) throw new DomainError('ORGANIZATION_NOT_FOUND', 'organization not found', 'not_found');
  return { org, member };
}

export const orgSwitchRoutes = [
  defineRoute({
    method: 'POST',
    path: '/orgs/switch',
    operationId: 'switchOrganization',
    summary: 'switch the active organization (and workspace; default: its first); orgId null is the personal workspace. Answers a new token.',
    tag,
    auth: 'bearer',
    body: z.strictObject({ orgId: idSchema.nullable(), workspaceId: idSchema.optional() }),
    responses: { 200: { description: 'switched', schema: switchReply }, 404: { description: 'not a member of that organization, or no such workspace in it' } },
    async handler({ body, principal, services, command, settle }) {
      if (body.orgId === null) {
        if (body.workspaceId) throw new ValidationError([{ field: 'body.workspaceId', message: 'the personal workspace has no workspaces; leave it out' }]);
        const issued = await switchTo({ services, command, settle, principal: principal! }, null, null);
        return { status: 200, body: { success: true, ...issued, organization: null, workspace: null } };
      }
      const { org, member } = await scopeOf(services, principal!.userId, body.orgId);
      const workspace = body.workspaceId ? await getWorkspace(services.readStore, org._id, body.workspaceId) : await firstWorkspace(services.readStore, org._id);
      if (!workspace) throw workspaceNotFound();
      const issued = await switchTo({ services, command, settle, principal: principal! }, org._id, workspace._id);
      return { status: 200, body: { success: true, ...issued, organization: myOrgView(org, member.role, member.joinedAt), workspace: workspaceView(workspace) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workspaces/switch',
    operationId: 'switchWorkspace',
    summary: 'switch the active workspace within the active organization. Answers a new token.',
    tag,
    auth: 'bearer',
    body: z.strictObject({ workspaceId: idSchema }),
    responses: { 200: { description: 'switched', schema: switchReply }, 404: { description: 'no such workspace in the active organization' } },
    async handler({ body, principal, services, command, settle }) {
      // The personal workspace has no workspaces to switch between.
      if (!principal!.orgId) throw workspaceNotFound();
      const { org, member } = await scopeOf(services, principal!.userId, principal!.orgId).catch(() => {
        throw workspaceNotFound();
      });
      const workspace = await getWorkspace(services.readStore, org._id, body.workspaceId);
      if (!workspace) throw workspaceNotFound();
      const issued = await switchTo({ services, command, settle, principal: principal! }, org._id, workspace._id);
      return { status: 200, body: { success: true, ...issued, organization: myOrgView(org, member.role, member.joinedAt), workspace: workspaceView(workspace) } };
    },
  }),
];
