import { z } from 'zod';
import { createApiKey, revokeApiKey } from '../../commands/users.js';
import { DomainError } from '../../domain/shared/decider.js';
import { PERMISSIONS, type Permission } from '../../domain/shared/permissions.js';
import { API_KEY_NAME_MAX_LENGTH, userStreamId } from '../../domain/users/index.js';
import { API_KEY_PREFIX, formatSecretCredential } from '../../domain/shared/principal.js';
import { randomSecret, sha256 } from '../../commands/users-credentials.js';
import { listApiKeys, type ApiKeyView } from '../../projections/users.js';
import { ValidationError } from '../errors.js';
import { defineRoute } from '../route.js';
import { pageQuery, pageReply } from './pagination.js';

const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(PERMISSIONS)),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  prefix: z.string().describe('what the key starts with'),
  lastFour: z.string().describe("the secret's last four characters"),
});

/** Never the hash, never the secret. */
const view = (k: ApiKeyView) => ({
  id: k._id,
  name: k.name,
  scopes: k.scopes as Permission[],
  expiresAt: k.expiresAt,
  createdAt: k.createdAt,
  prefix: k.prefix,
  lastFour: k.lastFour,
});

const keyIdParams = z.strictObject({ keyId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api-keys',
    operationId: 'listApiKeys',
    summary: "list the user's API keys that are not revoked, newest first (never their secrets)",
    tag: 'API keys',
    auth: 'bearer',
    query: pageQuery,
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(apiKeySchema), nextCursor: z.string().nullable() }) },
      401: { description: 'no valid credential' },
    },
    async handler({ query, principal, services }) {
      return pageReply(await listApiKeys(services.readStore, principal!.userId, query.limit, query.cursor ?? null), view);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api-keys',
    operationId: 'createApiKey',
    summary: 'create an API key; the key is in this answer only',
    tag: 'API keys',
    auth: 'bearer',
    body: z.strictObject({
      name: z.string().trim().min(1).max(API_KEY_NAME_MAX_LENGTH),
      expiresAt: z.iso.datetime({ offset: true }).optional().describe('must be in the future'),
      scopes: z
        .array(z.enum(PERMISSIONS))
        .min(1)
        .max(PERMISSIONS.length)
        .optional()
        .describe('permissions the key may use; every permission when left out'),
    }),
    responses: {
      201: { description: 'created', schema: z.object({ success: z.literal(true), apiKey: apiKeySchema, key: z.string().describe('fsk_<id>.<secret>: shown once') }) },
      401: { description: 'no valid credential' },
      403: { description: 'FORBIDDEN: an API key cannot create a key with scopes it lacks itself' },
      409: { description: 'API_KEY_LIMIT_REACHED: 50 active keys per user' },
    },
    async handler({ body, principal, services, command, settle }) {
      const userId = principal!.userId;
      // Checked here, not in the schema: "the future" is the service clock's, which a test can move.
      if (body.expiresAt && Date.parse(body.expiresAt) <= services.now().getTime()) {
        throw new ValidationError([{ field: 'body.expiresAt', message: 'must be in the future' }]);
      }
      // A key may mint keys, but never one that can do more than itself.
      const allowed: readonly Permission[] = (principal!.scopes as Permission[] | null) ?? PERMISSIONS;
      const scopes = [...new Set(body.scopes ?? allowed)];
      const beyond = scopes.filter((s) => !allowed.includes(s));
      if (beyond.length > 0) throw new DomainError('FORBIDDEN', `this credential lacks the scopes ${beyond.join(', ')}`, 'forbidden', { scopes: beyond });
      const keyId = services.newId();
      const secret = randomSecret();
      const result = await createApiKey(services.eventStore, command, userId, {
        keyId,
        name: body.name,
        secretHash: sha256(secret),
        prefix: `${API_KEY_PREFIX}${keyId}`,
        lastFour: secret.slice(-4),
        scopes,
        expiresAt: body.expiresAt ? new Date(body.expiresAt).toISOString() : null,
      });
      // The caller may use the key at once: the authenticator reads the api_keys model.
      await settle(result.position, userStreamId(userId));
      const created = result.events[0];
      if (created?.type !== 'ApiKeyCreated') throw new Error('CreateApiKey recorded no ApiKeyCreated');
      const { name, scopes: granted, expiresAt, createdAt, prefix, lastFour } = created.data;
      const apiKey = { id: keyId, name, scopes: granted, expiresAt, createdAt, prefix, lastFour };
      return { status: 201, body: { success: true, apiKey, key: formatSecretCredential(API_KEY_PREFIX, keyId, secret) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api-keys/{keyId}',
    operationId: 'revokeApiKey',
    summary: 'revoke an API key; the next request with it is refused (401)',
    tag: 'API keys',
    auth: 'bearer',
    params: keyIdParams,
    responses: {
      200: { description: 'revoked', schema: z.object({ success: z.literal(true), apiKey: z.object({ id: z.string(), revokedAt: z.string() }) }) },
      401: { description: 'no valid credential' },
      404: { description: "API_KEY_NOT_FOUND: unknown, already revoked, or another user's key" },
    },
    async handler({ params, principal, services, command, settle }) {
      const userId = principal!.userId;
      // The command runs on the caller's own stream: another user's key id is simply not there (404).
      const result = await revokeApiKey(services.eventStore, command, userId, params.keyId);
      // Settled before answering, so "revoked" means the authenticator already refuses the key.
      await settle(result.position, userStreamId(userId));
      return { status: 200, body: { success: true, apiKey: { id: params.keyId, revokedAt: command.now.toISOString() } } };
    },
  }),
];
