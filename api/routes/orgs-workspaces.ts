import { z } from 'zod';
import { createTeam, createWorkspace, deleteWorkspace, updateWorkspace } from '../../commands/orgs.js';
import { descriptionSchema, orgNameSchema, orgStreamId } from '../../domain/orgs/index.js';
import { getTeam, getWorkspace, listTeams, listWorkspaces } from '../../projections/orgs.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';
import { idSchema, notEmpty, ok, orgParams, pageOf, teamSchema, teamView, workspaceSchema, workspaceView } from './orgs-schemas.js';

const tag = 'Organizations';
const workspaceParams = z.strictObject({ orgId: idSchema, workspaceId: idSchema });
const MAX_TEAM_SIZE = 500;

export const orgWorkspaceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/workspaces',
    operationId: 'listWorkspaces',
    summary: 'list workspaces, oldest first',
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: orgParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: pageOf(workspaceSchema) }, 404: { description: 'no such organization' } },
    async handler({ params, query, services }) {
      return pageReply(await listWorkspaces(services.readStore, params.orgId, query.limit, query.cursor ?? null), workspaceView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/orgs/{orgId}/workspaces',
    operationId: 'createWorkspace',
    summary: 'create a workspace (names are unique in the organization, case-insensitive)',
    tag,
    auth: 'bearer',
    permission: 'manage_workspaces',
    params: orgParams,
    body: z.strictObject({ name: orgNameSchema, description: descriptionSchema.optional() }),
    responses: {
      201: { description: 'created', schema: z.object({ success: z.literal(true), workspace: workspaceSchema }) },
      403: { description: 'role lacks manage_workspaces' },
      404: { description: 'no such organization' },
      409: { description: 'WORKSPACE_NAME_TAKEN' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const workspaceId = services.newId();
      const result = await createWorkspace(services.eventStore, command, params.orgId, principal!.userId, { workspaceId, ...body });
      await settle(result.position, orgStreamId(params.orgId));
      const workspace = await getWorkspace(services.readStore, params.orgId, workspaceId);
      if (!workspace) throw new NotFoundError('workspace', 'WORKSPACE_NOT_FOUND');
      return { status: 201, body: { success: true, workspace: workspaceView(workspace) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/orgs/{orgId}/workspaces/{workspaceId}',
    operationId: 'updateWorkspace',
    summary: 'rename or describe a workspace',
    tag,
    auth: 'bearer',
    permission: 'manage_workspaces',
    params: workspaceParams,
    body: notEmpty(z.strictObject({ name: orgNameSchema.optional(), description: descriptionSchema.optional() })),
    responses: {
      200: { description: 'updated', schema: z.object({ success: z.literal(true), workspace: workspaceSchema }) },
      403: { description: 'role lacks manage_workspaces' },
      404: { description: 'no such organization or workspace' },
      409: { description: 'WORKSPACE_NAME_TAKEN' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const result = await updateWorkspace(services.eventStore, command, params.orgId, principal!.userId, params.workspaceId, body);
      await settle(result.position, orgStreamId(params.orgId));
      const workspace = await getWorkspace(services.readStore, params.orgId, params.workspaceId);
      if (!workspace) throw new NotFoundError('workspace', 'WORKSPACE_NOT_FOUND');
      return { status: 200, body: { success: true, workspace: workspaceView(workspace) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/orgs/{orgId}/workspaces/{workspaceId}',
    operationId: 'deleteWorkspace',
    summary: "delete a workspace (never the organization's last one)",
    tag,
    auth: 'bearer',
    permission: 'manage_workspaces',
    params: workspaceParams,
    responses: {
      200: { description: 'deleted', schema: ok },
      403: { description: 'role lacks manage_workspaces' },
      404: { description: 'no such organization or workspace' },
      409: { description: 'LAST_WORKSPACE' },
    },
    async handler({ params, principal, services, command, settle }) {
      const result = await deleteWorkspace(services.eventStore, command, params.orgId, principal!.userId, params.workspaceId);
      await settle(result.position, orgStreamId(params.orgId));
      return { status: 200, body: { success: true } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/teams',
    operationId: 'listTeams',
    summary: 'list teams, oldest first',
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: orgParams,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: pageOf(teamSchema) }, 404: { description: 'no such organization' } },
    async handler({ params, query, services }) {
      return pageReply(await listTeams(services.readStore, params.orgId, query.limit, query.cursor ?? null), teamView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/orgs/{orgId}/teams',
    operationId: 'createTeam',
    summary: `create a team of organization members (at most ${MAX_TEAM_SIZE})`,
    tag,
    auth: 'bearer',
    permission: 'manage_teams',
    params: orgParams,
    body: z.strictObject({ name: orgNameSchema, description: descriptionSchema.optional(), memberIds: z.array(idSchema).max(MAX_TEAM_SIZE).optional() }),
    responses: {
      201: { description: 'created', schema: z.object({ success: z.literal(true), team: teamSchema }) },
      400: { description: 'TEAM_MEMBER_NOT_FOUND: a memberId is not a member (details.fields names it)' },
      403: { description: 'role lacks manage_teams' },
      404: { description: 'no such organization' },
      409: { description: 'TEAM_NAME_TAKEN' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const teamId = services.newId();
      const result = await createTeam(services.eventStore, command, params.orgId, principal!.userId, { teamId, ...body });
      await settle(result.position, orgStreamId(params.orgId));
      const team = await getTeam(services.readStore, params.orgId, teamId);
      if (!team) throw new NotFoundError('team', 'TEAM_NOT_FOUND');
      return { status: 201, body: { success: true, team: teamView(team) } };
    },
  }),
];
