import { setUserLlmCredential } from '../../commands/users-llm-credentials.js';
import { userLlmProviderSchema, userStreamId } from '../../domain/users/index.js';
import type { Services } from '../../ports/services.js';
import { listUserLlmCredentialsSealed } from '../../projections/users-llm-credentials.js';
import { defineRoute } from '../route.js';
import { llmCredentialBody, llmCredentialsReply, maskedCredentials } from './llm-credentials.js';

const tag = 'Profile';
const credentialsReply = llmCredentialsReply(userLlmProviderSchema);

const maskedUserCredentials = async (services: Services, userId: string) =>
  maskedCredentials(services.sealedBox, await listUserLlmCredentialsSealed(services.readStore, userId));

const credentialBody = llmCredentialBody(userLlmProviderSchema);

/** The user's own LLM provider keys, used in the personal workspace (an organization's workspace uses the organization's). */
export const userLlmRoutes = [
  defineRoute({
    method: 'GET',
    path: '/users/me/llm-credentials',
    operationId: 'getMyLlmCredentials',
    summary: "the authenticated user's own LLM provider credentials, masked",
    tag,
    auth: 'bearer',
    responses: { 200: { description: 'masked credentials', schema: credentialsReply }, 401: { description: 'no valid credential' } },
    async handler({ principal, services }) {
      return { status: 200, body: { success: true, credentials: await maskedUserCredentials(services, principal!.userId) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/users/me/llm-credentials',
    operationId: 'setMyLlmCredential',
    summary: "set one provider's API key for the personal workspace (encrypted at rest), or remove it with apiKey: null",
    tag,
    auth: 'bearer',
    body: credentialBody,
    responses: {
      200: { description: 'all credentials, masked', schema: credentialsReply },
      400: { description: 'VALIDATION_FAILED: unknown provider, openai_compatible without baseUrl, unknown field' },
      401: { description: 'no valid credential' },
    },
    async handler({ body, principal, services, command, settle }) {
      const userId = principal!.userId;
      const input = { provider: body.provider, apiKey: body.apiKey, baseUrl: body.baseUrl ?? null };
      const result = await setUserLlmCredential(services.eventStore, command, userId, input, (key) => services.sealedBox.seal(key));
      await settle(result.position, userStreamId(userId));
      return { status: 200, body: { success: true, credentials: await maskedUserCredentials(services, userId) } };
    },
  }),
];
