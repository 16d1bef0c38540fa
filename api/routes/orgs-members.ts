import { z } from 'zod';
import { acceptInvitation, changeMemberRole, inviteMember, removeMember } from '../../commands/orgs.js';
import { orgStreamId, roleSchema } from '../../domain/orgs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { findUserAuth } from '../../projections/users-auth.js';
import { getMember, getOrg, listInvitations, listMembers } from '../../projections/orgs.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { idSchema, invitationSchema, invitationView, memberSchema, memberView, myOrganizationSchema, myOrgView, ok, orgParams, pageOf } from './orgs-schemas.js';

const tag = 'Organizations';
const memberParams = z.strictObject({ orgId: idSchema, userId: idSchema });

export const orgMemberRoutes = [
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/members',
    operationId: 'listOrganizationMembers',
    summary: 'list members, oldest first',
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: orgParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: pageOf(memberSchema) }, 404: { description: 'no such organization' } },
    async handler({ params, query, services }) {
      return pageReply(await listMembers(services.readStore, params.orgId, query.limit, query.cursor ?? null), memberView);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/orgs/{orgId}/members/{userId}',
    operationId: 'changeMemberRole',
    summary: "change a member's role (only an owner grants or takes away owner; the last owner stays owner)",
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    params: memberParams,
    body: z.strictObject({ role: roleSchema }),
    responses: {
      200: { description: 'changed', schema: z.object({ success: z.literal(true), member: memberSchema }) },
      403: { description: 'role lacks manage_members, or owner role without being owner' },
      404: { description: 'no such organization or member' },
      409: { description: 'LAST_OWNER' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const result = await changeMemberRole(services.eventStore, command, params.orgId, principal!.userId, params.userId, body.role);
      await settle(result.position, orgStreamId(params.orgId));
      const member = await getMember(services.readStore, params.orgId, params.userId);
      if (!member) throw new NotFoundError('member', 'MEMBER_NOT_FOUND');
      return { status: 200, body: { success: true, member: memberView(member) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/orgs/{orgId}/members/{userId}',
    // No route-level permission: leaving (your own userId) needs none, removing someone else needs manage_members.
    operationId: 'removeMember',
    summary: 'remove a member (manage_members), or leave (your own userId); the last owner cannot go',
    tag,
    auth: 'bearer',
    params: memberParams,
    responses: {
      200: { description: 'removed', schema: ok },
      403: { description: 'role lacks manage_members, or removing an owner without being owner' },
      404: { description: 'no such organization or member' },
      409: { description: 'LAST_OWNER' },
    },
    async handler({ params, principal, services, command, settle }) {
      const leaving = params.userId === principal!.userId;
      await services.auth.authorize(principal!, leaving ? 'view_resources' : 'manage_members', params.orgId);
      const result = await removeMember(services.eventStore, command, params.orgId, principal!.userId, params.userId);
      await settle(result.position, orgStreamId(params.orgId));
      return { status: 200, body: { success: true } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/orgs/{orgId}/invitations',
    operationId: 'inviteMember',
    summary: 'invite someone by email; the single-use token is mailed, never returned',
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    params: orgParams,
    body: z.strictObject({ email: z.email().max(254), role: roleSchema }),
    responses: {
      201: { description: 'invited', schema: z.object({ success: z.literal(true), invitation: invitationSchema }) },
      403: { description: 'role lacks manage_members, or inviting an owner without being owner' },
      404: { description: 'no such organization' },
      409: { description: 'already a member' },
      502: { description: 'MAIL_DELIVERY_FAILED: the invitation was recorded but its mail could not be sent (details.invitationId); invite again' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const org = await getOrg(services.readStore, params.orgId);
      if (!org) throw new NotFoundError('organization', 'ORGANIZATION_NOT_FOUND');
      const { result, invitation } = await inviteMember(
        services.eventStore,
        command,
        params.orgId,
        principal!.userId,
        { invitationId: services.newId(), email: body.email, role: body.role },
        { mailer: services.mailer, frontendUrl: services.config.FRONTEND_URL, ttlHours: services.config.INVITATION_TTL_HOURS, organizationName: org.name },
      );
      await settle(result.position, orgStreamId(params.orgId));
      return { status: 201, body: { success: true, invitation } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/invitations',
    operationId: 'listInvitations',
    summary: 'list invitations, newest first (tokens are never shown)',
    tag,
    auth: 'bearer',
    permission: 'manage_members',
    params: orgParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: pageOf(invitationSchema) }, 403: { description: 'role lacks manage_members' }, 404: { description: 'no such organization' } },
    async handler({ params, query, services }) {
      const page = await listInvitations(services.readStore, params.orgId, query.limit, query.cursor ?? null);
      const now = services.now();
      return { status: 200, body: { success: true, items: page.items.map((i) => invitationView(i, now)), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/invitations/{token}/accept',
    operationId: 'acceptInvitation',
    summary: 'accept an invitation with the mailed token; the signed-in account must have the invited email',
    tag,
    auth: 'bearer',
    // Lenient on purpose: a malformed token is answered like an unknown one (404), not as bad input.
    params: z.strictObject({ token: z.string().min(1).max(2048) }),
    responses: {
      200: {
        description: 'joined',
        schema: z.object({ success: z.literal(true), organization: myOrganizationSchema, member: memberSchema }),
      },
      403: { description: 'INVITATION_EMAIL_MISMATCH' },
      404: { description: 'INVITATION_NOT_FOUND' },
      409: { description: 'INVITATION_ALREADY_USED or ALREADY_A_MEMBER' },
      410: { description: 'INVITATION_EXPIRED' },
    },
    async handler({ params, principal, services, command, settle }) {
      const userId = principal!.userId;
      const account = await findUserAuth(services.readStore, userId);
      if (!account) throw new DomainError('UNAUTHENTICATED', 'the account no longer exists', 'unauthenticated');
      const { result, orgId } = await acceptInvitation(services.eventStore, command, params.token, { userId, email: account.email, name: account.name });
      await settle(result.position, orgStreamId(orgId));
      const [org, member] = await Promise.all([getOrg(services.readStore, orgId), getMember(services.readStore, orgId, userId)]);
      if (!org || !member) throw new NotFoundError('invitation', 'INVITATION_NOT_FOUND');
      return { status: 200, body: { success: true, organization: myOrgView(org, member.role, member.joinedAt), member: memberView(member) } };
    },
  }),
];
