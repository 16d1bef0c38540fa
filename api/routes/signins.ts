import { z } from 'zod';
import { completeSocialSignIn, failSocialSignIn, receiveSocialSignInCallback, signInIdForState, startSocialSignIn } from '../../commands/signins.js';
import { signInWithSocialIdentity } from '../../commands/users.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SOCIAL_SIGNIN_TTL_SECONDS } from '../../domain/signins/index.js';
import { SOCIAL_PROVIDERS, type SocialProvider as ProviderName } from '../../domain/users/fields.js';
import { SocialConfigurationError, SocialExchangeError, type SocialProvider } from '../../ports/social.js';
import type { Services } from '../../ports/services.js';
import { findUserAuth } from '../../projections/users-auth.js';
import type { RouteDef, RouteInput } from '../route.js';
import { defineRoute } from '../route.js';

const LABEL: Record<ProviderName, string> = { google: 'Google (OpenID Connect)', github: 'GitHub (OAuth 2.0)' };
/** openid-client's randomState() is 43 characters of base64url; anything else cannot be ours. */
const STATE_FORMAT = /^[A-Za-z0-9_-]{20,128}$/;

const callbackQuery = z.looseObject({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});

const notConfigured = { description: 'PROVIDER_NOT_CONFIGURED: no client id and secret for this provider' };

function resolve(services: Services, name: ProviderName): SocialProvider {
  let provider: SocialProvider | null;
  try {
    provider = services.social.provider(name);
  } catch (err) {
    if (err instanceof SocialConfigurationError) throw new DomainError('PROVIDER_MISCONFIGURED', `${name}: ${err.message}`, 'internal');
    throw err;
  }
  if (!provider) throw new DomainError('PROVIDER_NOT_CONFIGURED', `sign-in with ${name} is not configured on this server`, 'not_found');
  return provider;
}

/** Koa 3's `ctx.origin` is the Origin request header, not this server's origin: build it from protocol and host. */
const publicBase = (input: RouteInput<unknown, unknown, unknown>) =>
  (input.services.config.PUBLIC_URL ?? `${input.koa.protocol}://${input.koa.host}`).replace(/\/+$/, '');
/** Provider-supplied codes go into events and answers: keep them short and plain. */
const plainCode = (value: string) => value.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64) || 'unknown';

async function start(name: ProviderName, input: RouteInput<unknown, unknown, unknown>) {
  const { services, command, koa } = input;
  const provider = resolve(services, name);
  // Each start appends a stream: unauthenticated callers must not be able to grow the log at will.
  await services.rateLimiter.hit(`social-start:${koa.ip}`, services.config.RATE_LIMIT_AUTH_PER_MINUTE, 60_000);
  const redirectUri = `${publicBase(input)}/api/auth/${name}/callback`;
  let started;
  try {
    started = await provider.start(redirectUri);
  } catch (err) {
    services.logger.warn({ provider: name, error: (err as Error).message, requestId: command.requestId }, 'social sign-in: provider unreachable');
    throw new DomainError('PROVIDER_UNAVAILABLE', `${name} could not be reached; try again later`, 'upstream');
  }
  await startSocialSignIn(services.eventStore, command, {
    signInId: signInIdForState(started.state),
    provider: name,
    codeVerifierSealed: services.sealedBox.seal(started.codeVerifier),
    nonceSealed: started.nonce ? services.sealedBox.seal(started.nonce) : null,
    redirectUri,
    expiresAt: new Date(command.now.getTime() + SOCIAL_SIGNIN_TTL_SECONDS * 1000).toISOString(),
  });
  return { status: 302, body: { success: true, redirectUrl: started.url }, headers: { Location: started.url, 'Cache-Control': 'no-store' } };
}

async function callback(name: ProviderName, input: RouteInput<unknown, z.infer<typeof callbackQuery>, unknown>) {
  const { services, command, koa, query } = input;
  const provider = resolve(services, name);
  const state = query.state;
  if (!state || !STATE_FORMAT.test(state)) throw new DomainError('INVALID_STATE', 'the sign-in state is missing or malformed', 'invalid', { field: 'query.state' });
  const signInId = signInIdForState(state);
  const attempt = await receiveSocialSignInCallback(services.eventStore, command, signInId, name);

  let outcome: { userId: string; created: boolean };
  try {
    if (query.error) {
      const providerError = plainCode(query.error);
      throw new DomainError('PROVIDER_ERROR', `${name} did not grant the sign-in (${providerError})`, 'invalid', { providerError });
    }
    if (!query.code) throw new DomainError('MISSING_CODE', 'the callback carries no authorization code', 'invalid', { field: 'query.code' });
    let identity;
    try {
      identity = await provider.complete(new URLSearchParams(koa.querystring), {
        state,
        codeVerifier: services.sealedBox.open(attempt.codeVerifierSealed!),
        nonce: attempt.nonceSealed ? services.sealedBox.open(attempt.nonceSealed) : undefined,
        redirectUri: attempt.redirectUri!,
      });
    } catch (err) {
      if (!(err instanceof SocialExchangeError)) throw err;
      const cause = err.cause as Error | undefined;
      services.logger.warn({ provider: name, reason: err.reason, error: cause?.message ?? err.message, requestId: command.requestId }, 'social sign-in: exchange failed');
      throw new DomainError('EXCHANGE_FAILED', `the sign-in with ${name} could not be completed`, 'invalid', { reason: err.reason });
    }
    const accounts = {
      eventStore: services.eventStore,
      newId: () => services.newId(),
      waitForProjection: (position: number, streamId: string) => services.projections.waitFor(position, streamId, services.config.READ_YOUR_WRITES_TIMEOUT_MS),
      unverifiedAccountTtlHours: services.config.UNVERIFIED_ACCOUNT_TTL_HOURS,
    };
    outcome = await signInWithSocialIdentity(accounts, command, { provider: name, ...identity });
    await completeSocialSignIn(services.eventStore, { ...command, actorId: outcome.userId }, signInId, outcome);
  } catch (err) {
    const reason = err instanceof DomainError ? err.code : 'INTERNAL_ERROR';
    const details = err instanceof DomainError ? (err.details as { providerError?: string; reason?: string } | undefined) : undefined;
    const detail = details?.providerError ?? details?.reason ?? null;
    await failSocialSignIn(services.eventStore, command, signInId, reason, detail).catch((recordErr: unknown) =>
      services.logger.error({ err: recordErr, signInId }, 'social sign-in: could not record the failure'),
    );
    if (reason === 'ACCOUNT_EMAIL_UNVERIFIED') return toFrontEnd(services, { error: reason, provider: name, message: (err as DomainError).message });
    throw err;
  }

  // The token carries the active scope the account already has (a returning member of an organization).
  const user = await findUserAuth(services.readStore, outcome.userId);
  const { token, expiresIn } = await services.tokens.issue({
    userId: outcome.userId,
    orgId: user?.activeOrgId ?? null,
    workspaceId: user?.activeWorkspaceId ?? null,
  });
  return toFrontEnd(services, { token, expiresIn: String(expiresIn), provider: name, new: String(outcome.created) });
}

/**
 * 302 to FRONTEND_URL/auth/callback with the outcome in the fragment: browsers never send a
 * fragment to a server, not even in Referer. A refusal the person can act on (sign in with the
 * password and verify the email first) travels the same way, as `error=<code>`, so the front end
 * can say what to do instead of the browser showing a JSON error.
 */
function toFrontEnd(services: Services, outcome: Record<string, string>) {
  const location = `${services.config.FRONTEND_URL.replace(/\/+$/, '')}/auth/callback#${new URLSearchParams(outcome)}`;
  const success = outcome.error === undefined;
  return {
    status: 302,
    body: success ? { success } : { success, error: { code: outcome.error, message: outcome.message } },
    headers: { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
  };
}

/** `GET /auth/{provider}` and `GET /auth/{provider}/callback` for each provider we know. */
export const socialAuthRoutes: RouteDef[] = SOCIAL_PROVIDERS.flatMap((name) => [
  defineRoute({
    method: 'GET',
    path: `/auth/${name}`,
    operationId: `startSignInWith${name[0].toUpperCase()}${name.slice(1)}`,
    summary: `start sign-in with ${LABEL[name]}: 302 to the provider with state, PKCE (S256)${name === 'google' ? ' and nonce' : ''}`,
    tag: 'Social authentication',
    auth: 'none',
    responses: {
      302: { description: 'Location: the provider\'s authorization URL (also in body.redirectUrl); the attempt expires after 10 minutes' },
      404: notConfigured,
      429: { description: 'RATE_LIMITED: more than RATE_LIMIT_AUTH_PER_MINUTE starts from this address (Retry-After)' },
      502: { description: 'PROVIDER_UNAVAILABLE: the provider\'s discovery document could not be fetched' },
    },
    handler: (input) => start(name, input),
  }),
  defineRoute({
    method: 'GET',
    path: `/auth/${name}/callback`,
    operationId: `finishSignInWith${name[0].toUpperCase()}${name.slice(1)}`,
    summary: `${LABEL[name]} callback: exchanges the code, finds or creates the account (linking by an email verified on both sides), 302 to FRONTEND_URL/auth/callback#token=…&expiresIn=…&provider=…&new=…`,
    tag: 'Social authentication',
    auth: 'none',
    query: callbackQuery,
    responses: {
      302: {
        description:
          'Location: FRONTEND_URL/auth/callback with token, expiresIn, provider and new (true for a new account) in the fragment; or with error=ACCOUNT_EMAIL_UNVERIFIED, provider and message: an account has this email but has not verified it, so it is not linked: sign in with its password, verify the email, then sign in with the provider again',
      },
      400: {
        description:
          'INVALID_STATE (missing, unknown, expired, already used or for the other provider), MISSING_CODE, PROVIDER_ERROR (details.providerError), EXCHANGE_FAILED (details.reason), SOCIAL_EMAIL_REQUIRED, SOCIAL_EMAIL_INVALID, SOCIAL_EMAIL_UNVERIFIED (the provider has not verified the address, and no account has it)',
      },
      404: notConfigured,
      409: { description: 'EMAIL_TAKEN: the email belongs to another account and the provider has not verified it, so it is not linked' },
    },
    seedStatuses: [302, 400],
    handler: (input) => callback(name, input),
  }),
]);
