import { z } from 'zod';
import { createCliToken, decideDeviceAuthorization, DevicePollTracker, exchangeDeviceCode, hashUserCode, requestDeviceAuthorization, revokeCliToken } from '../../commands/cli.js';
import {
  clientNameSchema,
  cliTokenNameSchema,
  cliTokenStreamId,
  deviceAuthorizationStreamId,
  deviceTokenError,
  formatUserCode,
  isWellFormedUserCode,
  normalizeUserCode,
} from '../../domain/cli/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { PERMISSIONS } from '../../domain/shared/permissions.js';
import { CLI_TOKEN_PREFIX, formatSecretCredential, type Principal } from '../../domain/shared/principal.js';
import { randomSecret, sha256 } from '../../commands/users-credentials.js';
import type { Services } from '../../ports/services.js';
import { findCliToken, findDeviceCodeByUserCodeHash } from '../../projections/cli.js';
import { defineRoute } from '../route.js';

/**
 * CLI sign-in: the OAuth 2.0 device authorization grant (RFC 8628) and CLI tokens.
 *
 * The token endpoint's errors use our standard body, `{success: false, error: {code, message}}`,
 * with `error.code` exactly the RFC 8628 / RFC 6749 error string (`authorization_pending`,
 * `slow_down`, `access_denied`, `expired_token`, `invalid_grant`, `unsupported_grant_type`): a CLI
 * matches `error.code` where a plain RFC client would read `error`.
 */
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const MINUTE = 60_000;

/** Limits per minute, from RATE_LIMIT_AUTH_PER_MINUTE: starting a login, guessing user codes, polling. */
const limits = (services: Services) => {
  const perMinute = services.config.RATE_LIMIT_AUTH_PER_MINUTE;
  // Polls are expected every 5 s per device; three times the auth limit leaves room for a few CLIs behind one address.
  return { codes: perMinute, guesses: perMinute, polls: perMinute * 3 };
};

// One tracker per running service (tests run several in one process).
const trackers = new WeakMap<Services, DevicePollTracker>();
const trackerOf = (services: Services) => {
  let tracker = trackers.get(services);
  if (!tracker) trackers.set(services, (tracker = new DevicePollTracker()));
  return tracker;
};

/** A CLI token can do everything its user can: an API key limited to some scopes must not mint one (or approve a login that does). */
function refuseScopedCredential(principal: Principal) {
  const scopes = principal.scopes;
  if (scopes !== null && !PERMISSIONS.every((p) => scopes.includes(p))) {
    throw new DomainError('FORBIDDEN', 'an API key with scopes cannot create CLI tokens, which have none; sign in or use an unscoped credential', 'forbidden');
  }
}

const DEVICE_CODE_FORMAT = /^([A-Za-z0-9-]{1,64})\.([A-Za-z0-9_-]{16,128})$/;
const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const userCodeBody = z.strictObject({
  user_code: z
    .string()
    .max(32)
    .transform(normalizeUserCode)
    .refine(isWellFormedUserCode, { message: 'must be the 8 letters shown by the CLI (XXXX-XXXX; case and dashes do not matter)' }),
});

const deviceCodeAnswer = z.object({
  success: z.literal(true),
  device_code: z.string(),
  user_code: z.string(),
  verification_uri: z.string(),
  verification_uri_complete: z.string(),
  expires_in: z.number(),
  interval: z.number(),
});
const decisionAnswer = z.object({ success: z.literal(true), status: z.enum(['approved', 'denied']), clientName: z.string().nullable() });
const tokenAnswer = z.object({ success: z.literal(true), access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number() });
const createdTokenAnswer = z.object({ success: z.literal(true), token: z.string(), tokenId: z.string(), expiresAt: z.string(), name: z.string().nullable() });
const verifyAnswer = z.object({
  success: z.literal(true),
  valid: z.literal(true),
  userId: z.string(),
  credential: z.enum(['jwt', 'api_key', 'cli_token']),
  tokenId: z.string().optional(),
  name: z.string().nullable().optional(),
  source: z.enum(['device', 'manual']).optional(),
  expiresAt: z.string().optional(),
});

function decisionRoute(decision: 'approve' | 'deny') {
  return defineRoute({
    method: 'POST',
    path: `/cli/device/${decision}`,
    operationId: decision === 'approve' ? 'approveDeviceCode' : 'denyDeviceCode',
    summary: `${decision} a CLI's device login with the user code it shows (case and separators ignored); limited per user and per address`,
    tag: 'CLI',
    auth: 'bearer',
    body: userCodeBody,
    responses: {
      200: { description: decision === 'approve' ? 'approved: the CLI receives a token for you at its next poll' : 'denied', schema: decisionAnswer },
      401: { description: 'not signed in' },
      403: { description: 'FORBIDDEN: an API key with scopes cannot approve (the CLI token would have no scopes)' },
      404: { description: 'DEVICE_CODE_NOT_FOUND: no login has this code' },
      409: { description: 'DEVICE_CODE_ALREADY_DECIDED' },
      410: { description: 'DEVICE_CODE_EXPIRED' },
      429: { description: 'too many guesses (Retry-After)' },
    },
    async handler({ body, principal, services, command, settle, koa }) {
      if (decision === 'approve') refuseScopedCredential(principal!);
      const { guesses } = limits(services);
      // Counted before the lookup, so a rejected guess and a right one cost the same.
      await services.rateLimiter.hit(`cli-device-guess:user:${principal!.userId}`, guesses, MINUTE);
      await services.rateLimiter.hit(`cli-device-guess:ip:${koa.ip}`, guesses, MINUTE);
      const device = await findDeviceCodeByUserCodeHash(services.readStore, hashUserCode(body.user_code));
      if (!device) throw new DomainError('DEVICE_CODE_NOT_FOUND', 'no device login has this code; check it, or start again from the CLI', 'not_found');
      const result = await decideDeviceAuthorization(services.eventStore, command, device._id, decision, principal!.userId);
      await settle(result.position, deviceAuthorizationStreamId(device._id));
      return { status: 200, body: { success: true, status: result.state.status, clientName: result.state.clientName } };
    },
  });
}

export const cliRoutes = [
  defineRoute({
    method: 'POST',
    path: '/cli/device/code',
    operationId: 'startDeviceLogin',
    summary: 'start a CLI device login (RFC 8628 §3.1-3.2): show user_code at verification_uri, then poll /cli/device/token every interval seconds',
    tag: 'CLI',
    auth: 'none',
    // client_id and scope are what generic RFC 8628 clients send; they are accepted and ignored.
    body: z.strictObject({ clientName: clientNameSchema.optional(), client_id: z.string().max(200).optional(), scope: z.string().max(500).optional() }),
    responses: { 200: { description: 'a device code and the user code to show', schema: deviceCodeAnswer }, 429: { description: 'too many logins started from this address (Retry-After)' } },
    async handler({ body, services, command, settle, koa }) {
      const { config } = services;
      await services.rateLimiter.hit(`cli-device-code:ip:${koa.ip}`, limits(services).codes, MINUTE);
      const deviceId = services.newId();
      const secret = randomSecret();
      const requested = await requestDeviceAuthorization(services.eventStore, command, {
        deviceId,
        deviceSecretHash: sha256(secret),
        clientName: body.clientName ?? null,
        ttlSeconds: config.DEVICE_CODE_TTL_SECONDS,
        interval: config.DEVICE_POLL_INTERVAL_SECONDS,
      });
      await settle(requested.position, deviceAuthorizationStreamId(deviceId));
      const userCode = formatUserCode(requested.userCode);
      const verificationUri = `${config.FRONTEND_URL.replace(/\/+$/, '')}/cli/device`;
      return {
        status: 200,
        headers: noStore,
        body: {
          success: true,
          device_code: `${deviceId}.${secret}`,
          user_code: userCode,
          verification_uri: verificationUri,
          verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
          expires_in: config.DEVICE_CODE_TTL_SECONDS,
          interval: config.DEVICE_POLL_INTERVAL_SECONDS,
        },
      };
    },
  }),
  decisionRoute('approve'),
  decisionRoute('deny'),
  defineRoute({
    method: 'POST',
    path: '/cli/device/token',
    operationId: 'pollDeviceToken',
    summary:
      'poll a device login (RFC 8628 §3.4-3.5); errors are 400 with error.code exactly authorization_pending, slow_down (add 5 s to your interval), access_denied, expired_token, invalid_grant or unsupported_grant_type; the token is given once',
    tag: 'CLI',
    auth: 'none',
    body: z.strictObject({ device_code: z.string().max(300), grant_type: z.string().max(200).optional(), client_id: z.string().max(200).optional() }),
    responses: {
      200: { description: 'approved: a new CLI token, shown this once', schema: tokenAnswer },
      400: { description: 'error.code is the RFC 8628 error string (see summary), or VALIDATION_FAILED' },
      429: { description: 'too many polls from this address (Retry-After)' },
    },
    async handler({ body, services, command, settle, koa }) {
      const { config } = services;
      await services.rateLimiter.hit(`cli-device-poll:ip:${koa.ip}`, limits(services).polls, MINUTE);
      if (body.grant_type !== undefined && body.grant_type !== DEVICE_GRANT_TYPE) {
        throw new DomainError('unsupported_grant_type', `grant_type must be ${DEVICE_GRANT_TYPE}`, 'invalid', { field: 'body.grant_type' });
      }
      const parts = DEVICE_CODE_FORMAT.exec(body.device_code);
      if (!parts) throw deviceTokenError('invalid_grant');
      const tokenId = services.newId();
      const tokenSecret = randomSecret();
      const issued = await exchangeDeviceCode(services.eventStore, command, trackerOf(services), {
        deviceId: parts[1],
        presentedSecretHash: sha256(parts[2]),
        tokenId,
        tokenSecretHash: sha256(tokenSecret),
        tokenTtlDays: config.CLI_TOKEN_TTL_DAYS,
      });
      // The CLI uses the token right away: the authenticator must already find it.
      await settle(issued.position, cliTokenStreamId(tokenId));
      return {
        status: 200,
        headers: noStore,
        body: {
          success: true,
          access_token: formatSecretCredential(CLI_TOKEN_PREFIX, tokenId, tokenSecret),
          token_type: 'Bearer',
          expires_in: config.CLI_TOKEN_TTL_DAYS * 86_400,
        },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/cli/tokens',
    operationId: 'createCliToken',
    summary: 'create a CLI token by hand (fcli_…, shown once; default lifetime CLI_TOKEN_TTL_DAYS)',
    tag: 'CLI',
    auth: 'bearer',
    body: z.strictObject({ name: cliTokenNameSchema.optional(), expiresInDays: z.number().int().min(1).max(365).optional() }),
    responses: {
      201: { description: 'created; the token is not shown again', schema: createdTokenAnswer },
      401: { description: 'not signed in' },
      403: { description: 'FORBIDDEN: an API key with scopes cannot create a CLI token' },
    },
    async handler({ body, principal, services, command, settle }) {
      refuseScopedCredential(principal!);
      const tokenId = services.newId();
      const secret = randomSecret();
      const created = await createCliToken(services.eventStore, command, {
        tokenId,
        userId: principal!.userId,
        name: body.name ?? null,
        secretHash: sha256(secret),
        source: 'manual',
        deviceId: null,
        lifetimeDays: body.expiresInDays ?? services.config.CLI_TOKEN_TTL_DAYS,
      });
      await settle(created.position, cliTokenStreamId(tokenId));
      return {
        status: 201,
        headers: noStore,
        body: { success: true, token: formatSecretCredential(CLI_TOKEN_PREFIX, tokenId, secret), tokenId, expiresAt: created.expiresAt, name: body.name ?? null },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/cli/tokens/verify',
    operationId: 'verifyCliToken',
    summary: 'check the bearer credential; with a CLI token, describe that token',
    tag: 'CLI',
    auth: 'bearer',
    responses: { 200: { description: 'the credential is valid', schema: verifyAnswer }, 401: { description: 'missing, invalid, expired or revoked' } },
    async handler({ principal, services }) {
      const base = { success: true, valid: true, userId: principal!.userId, credential: principal!.credential };
      if (principal!.credential !== 'cli_token' || !principal!.credentialId) return { status: 200, body: base };
      const token = await findCliToken(services.readStore, principal!.credentialId);
      return {
        status: 200,
        body: { ...base, tokenId: principal!.credentialId, name: token?.name ?? null, source: token?.source, expiresAt: token?.expiresAt ?? undefined },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/cli/tokens/{tokenId}',
    operationId: 'revokeCliToken',
    summary: 'revoke one of your CLI tokens (refused from the next request on; revoking again is harmless)',
    tag: 'CLI',
    auth: 'bearer',
    params: z.strictObject({ tokenId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/) }),
    responses: {
      200: { description: 'revoked', schema: z.object({ success: z.literal(true), tokenId: z.string(), revokedAt: z.string() }) },
      401: { description: 'not signed in' },
      404: { description: 'CLI_TOKEN_NOT_FOUND (also for another user\'s token)' },
    },
    async handler({ params, principal, services, command, settle }) {
      const result = await revokeCliToken(services.eventStore, command, params.tokenId, principal!.userId);
      await settle(result.position, cliTokenStreamId(params.tokenId));
      return { status: 200, body: { success: true, tokenId: params.tokenId, revokedAt: result.state.revokedAt } };
    },
  }),
];
