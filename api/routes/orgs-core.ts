import { z } from 'zod';
import { createOrganization, deleteOrganization, updateOrganization } from '../../commands/orgs.js';
import { budgetLimitSchema, descriptionSchema, orgNameSchema, orgStreamId, runHistoryKeepDaysSchema, runHistoryKeepLastSchema } from '../../domain/orgs/index.js';
import { PERMISSIONS, ROLES, ROLE_PERMISSIONS } from '../../domain/shared/permissions.js';
import { findUserAuth } from '../../projections/users-auth.js';
import { firstWorkspace, getMember, getOrg, getWorkspace, listMyOrgs } from '../../projections/orgs.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { myOrganizationSchema, myOrgView, notEmpty, ok, orgParams, organizationSchema, pageOf, workspaceSchema, workspaceView } from './orgs-schemas.js';

const tag = 'Organizations';

export const orgCoreRoutes = [
  defineRoute({
    method: 'POST',
    path: '/orgs',
    operationId: 'createOrganization',
    summary: 'create an organization (the creator is its owner; a "Default" workspace comes with it)',
    tag,
    auth: 'bearer',
    body: z.strictObject({ name: orgNameSchema, description: descriptionSchema.optional() }),
    responses: {
      201: { description: 'created', schema: z.object({ success: z.literal(true), organization: myOrganizationSchema, workspace: workspaceSchema }) },
    },
    async handler({ body, principal, services, command, settle }) {
      const userId = principal!.userId;
      const account = await findUserAuth(services.readStore, userId);
      const ids = { orgId: services.newId(), defaultWorkspaceId: services.newId() };
      const result = await createOrganization(services.eventStore, command, ids, {
        name: body.name,
        description: body.description,
        creator: { userId, email: account?.email ?? null, name: account?.name ?? null },
      });
      await settle(result.position, orgStreamId(ids.orgId));
      const [org, member, workspace] = await Promise.all([
        getOrg(services.readStore, ids.orgId),
        getMember(services.readStore, ids.orgId, userId),
        getWorkspace(services.readStore, ids.orgId, ids.defaultWorkspaceId),
      ]);
      if (!org || !workspace) throw new NotFoundError('organization', 'ORGANIZATION_NOT_FOUND');
      return { status: 201, body: { success: true, organization: myOrgView(org, 'owner', member?.joinedAt), workspace: workspaceView(workspace) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs',
    operationId: 'listMyOrganizations',
    summary: 'list the organizations I belong to, with my role',
    tag,
    auth: 'bearer',
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: pageOf(myOrganizationSchema) } },
    async handler({ query, principal, services }) {
      return pageReply(await listMyOrgs(services.readStore, principal!.userId, query.limit, query.cursor ?? null), (i) => myOrgView(i.org, i.role, i.joinedAt));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/active',
    operationId: 'getActiveOrganization',
    summary: "the organization and workspace the caller's credential is scoped to (null: the personal workspace)",
    tag,
    auth: 'bearer',
    responses: {
      200: {
        description: 'the active scope',
        schema: z.object({ success: z.literal(true), organization: myOrganizationSchema.nullable(), workspace: workspaceSchema.nullable() }),
      },
    },
    async handler({ principal, services }) {
      const { userId, orgId, workspaceId } = principal!;
      // A credential still naming an organization the caller left (or that was deleted) is the personal workspace here.
      const [org, member] = orgId ? await Promise.all([getOrg(services.readStore, orgId), getMember(services.readStore, orgId, userId)]) : [null, null];
      if (!org || !member) return { status: 200, body: { success: true, organization: null, workspace: null } };
      const workspace = (workspaceId && (await getWorkspace(services.readStore, org._id, workspaceId))) || (await firstWorkspace(services.readStore, org._id));
      return { status: 200, body: { success: true, organization: myOrgView(org, member.role, member.joinedAt), workspace: workspace ? workspaceView(workspace) : null } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/permissions',
    operationId: 'listRolePermissions',
    summary: 'the permission catalog per role',
    tag,
    auth: 'bearer',
    responses: {
      200: {
        description: 'roles and their permissions',
        schema: z.object({
          success: z.literal(true),
          permissions: z.array(z.string()),
          roles: z.array(z.object({ role: z.enum(ROLES), permissions: z.array(z.string()), ownerOnly: z.array(z.string()) })),
        }),
      },
    },
    async handler() {
      const ownerOnly = ['delete_organization', 'grant_or_revoke_owner_role'];
      const roles = ROLES.map((role) => ({ role, permissions: [...ROLE_PERMISSIONS[role]], ownerOnly: role === 'owner' ? ownerOnly : [] }));
      return { status: 200, body: { success: true, permissions: [...PERMISSIONS], roles } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/orgs/{orgId}',
    operationId: 'updateOrganization',
    summary: "update an organization: name, description, monthly LLM budget limit in USD (null: no limit), run-history retention (null: the service's)",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    body: notEmpty(
      z.strictObject({
        name: orgNameSchema.optional(),
        description: descriptionSchema.optional(),
        budgetLimitUsd: budgetLimitSchema.nullable().optional(),
        runHistoryKeepDays: runHistoryKeepDaysSchema.nullable().optional(),
        runHistoryKeepLast: runHistoryKeepLastSchema.nullable().optional(),
      }),
    ),
    responses: {
      200: { description: 'updated', schema: z.object({ success: z.literal(true), organization: myOrganizationSchema }) },
      403: { description: 'role lacks manage_settings' },
      404: { description: 'no such organization (or not a member)' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const result = await updateOrganization(services.eventStore, command, params.orgId, principal!.userId, body);
      await settle(result.position, orgStreamId(params.orgId));
      const [org, member] = await Promise.all([getOrg(services.readStore, params.orgId), getMember(services.readStore, params.orgId, principal!.userId)]);
      if (!org || !member) throw new NotFoundError('organization', 'ORGANIZATION_NOT_FOUND');
      return { status: 200, body: { success: true, organization: myOrgView(org, member.role, member.joinedAt) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/orgs/{orgId}',
    operationId: 'deleteOrganization',
    summary: 'delete an organization (owner only); its members lose their membership',
    tag,
    auth: 'bearer',
    permission: 'owner',
    params: orgParams,
    responses: { 200: { description: 'deleted', schema: ok }, 403: { description: 'not an owner' }, 404: { description: 'no such organization' } },
    async handler({ params, principal, services, command, settle }) {
      const result = await deleteOrganization(services.eventStore, command, params.orgId, principal!.userId);
      await settle(result.position, orgStreamId(params.orgId));
      return { status: 200, body: { success: true } };
    },
  }),
];
