import { z } from 'zod';
import { setLlmCredential } from '../../commands/orgs.js';
import { llmProviderSchema, orgStreamId } from '../../domain/orgs/index.js';
import { periodStartOf } from '../../domain/orgs/spend.js';
import type { Services } from '../../ports/services.js';
import { getOrg, listLlmCredentialsSealed, spentUsd } from '../../projections/orgs.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { llmCredentialBody, llmCredentialsReply, maskedCredentials } from './llm-credentials.js';
import { orgParams } from './orgs-schemas.js';

const tag = 'Organizations';
const credentialsReply = llmCredentialsReply(llmProviderSchema);

const maskedOrgCredentials = async (services: Services, orgId: string) =>
  maskedCredentials(services.sealedBox, await listLlmCredentialsSealed(services.readStore, orgId));

const credentialBody = llmCredentialBody(llmProviderSchema);

export const orgSettingsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/budget',
    operationId: 'getOrganizationBudget',
    summary: "the organization's monthly LLM budget and this month's spend (UTC calendar month)",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    responses: {
      200: {
        description: 'budget',
        schema: z.object({ success: z.literal(true), limitUsd: z.number().nullable(), spentUsd: z.number(), period: z.literal('month'), periodStart: z.string() }),
      },
      403: { description: 'role lacks manage_settings' },
      404: { description: 'no such organization' },
    },
    async handler({ params, services }) {
      const org = await getOrg(services.readStore, params.orgId);
      if (!org) throw new NotFoundError('organization', 'ORGANIZATION_NOT_FOUND');
      const periodStart = periodStartOf(services.now());
      const spent = await spentUsd(services.readStore, params.orgId, periodStart.slice(0, 7));
      return { status: 200, body: { success: true, limitUsd: org.budgetLimitUsd ?? null, spentUsd: spent, period: 'month', periodStart } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/llm-credentials',
    operationId: 'getOrganizationLlmCredentials',
    summary: "the organization's LLM provider credentials, masked",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    responses: { 200: { description: 'masked credentials', schema: credentialsReply }, 403: { description: 'role lacks manage_settings' }, 404: { description: 'no such organization' } },
    async handler({ params, services }) {
      return { status: 200, body: { success: true, credentials: await maskedOrgCredentials(services, params.orgId) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/orgs/{orgId}/llm-credentials',
    operationId: 'setOrganizationLlmCredential',
    summary: "set one provider's API key (encrypted at rest), or remove it with apiKey: null",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    body: credentialBody,
    responses: { 200: { description: 'all credentials, masked', schema: credentialsReply }, 403: { description: 'role lacks manage_settings' }, 404: { description: 'no such organization' } },
    async handler({ params, body, principal, services, command, settle }) {
      const input = { provider: body.provider, apiKey: body.apiKey, baseUrl: body.baseUrl ?? null };
      const result = await setLlmCredential(services.eventStore, command, params.orgId, principal!.userId, input, (key) => services.sealedBox.seal(key));
      await settle(result.position, orgStreamId(params.orgId));
      return { status: 200, body: { success: true, credentials: await maskedOrgCredentials(services, params.orgId) } };
    },
  }),
];
