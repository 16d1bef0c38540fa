import { z } from 'zod';
import { isNeverVerified, registerUser, requestPasswordReset, resetPassword, startOver } from '../../commands/users.js';
import type { CommandContext } from '../../commands/handle.js';
import { DomainError } from '../../domain/shared/decider.js';
import {
  PASSWORD_MAX_LENGTH,
  emailSchema,
  nameSchema,
  passwordSchema,
  unverifiedAccountExpired,
  unverifiedAccountExpiredError,
  userStreamId,
} from '../../domain/users/index.js';
import { dummyPasswordHash, hashPassword, randomSecret, sha256, verifyPassword } from '../../commands/users-credentials.js';
import type { Services } from '../../ports/services.js';
import { findPasswordHash, findUserByEmail, type UserView } from '../../projections/users.js';
import { defineRoute } from '../route.js';
import { emailVerificationRoutes, newVerification, parseUserToken, rateLimitAuth as rateLimit, sendVerificationMail } from './users-email-verification.js';

export const publicUserSchema = z.object({ id: z.string(), email: z.string(), name: z.string(), createdAt: z.string() });
const publicUser = (u: Pick<UserView, '_id' | 'email' | 'name' | 'createdAt'>) => ({ id: u._id, email: u.email, name: u.name, createdAt: u.createdAt });

const tokenReply = z.object({ success: z.literal(true), token: z.string(), expiresIn: z.number().describe('seconds'), user: publicUserSchema });
const invalidCredentials = () => new DomainError('INVALID_CREDENTIALS', 'the email or password is incorrect', 'unauthenticated');
const invalidResetToken = () => new DomainError('INVALID_RESET_TOKEN', 'the reset token is invalid or has already been used', 'invalid', { field: 'body.token' });
const FORGOT_REPLY = { success: true, message: 'if an account exists for this email, a password reset link has been sent to it' } as const;
const NO_USER_ID = 'no-such-user';

/**
 * Records the reset request and mails the link. Runs after the answer has gone out, so the
 * forgot-password response takes the same time whether or not the account exists.
 */
async function sendResetLink(services: Services, command: CommandContext, user: UserView) {
  const secret = randomSecret();
  const ttlMinutes = services.config.PASSWORD_RESET_TTL_MINUTES;
  const expiresAt = new Date(command.now.getTime() + ttlMinutes * 60_000).toISOString();
  await requestPasswordReset(services.eventStore, { ...command, actorId: user._id }, user._id, sha256(secret), expiresAt);
  const token = `${user._id}.${secret}`;
  const link = `${services.config.FRONTEND_URL.replace(/\/+$/, '')}/reset-password?token=${encodeURIComponent(token)}`;
  await services.mailer.send({
    to: user.email,
    subject: 'Reset your password',
    text: `Someone asked to reset the password of your account.\n\nOpen this link within ${ttlMinutes} minutes to choose a new password:\n${link}\n\nIf it was not you, ignore this mail; your password stays as it is.`,
  });
}

export const authRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/register',
    operationId: 'register',
    summary: 'register a new user; 201 with the user and a token (personal workspace); a verification link is mailed to the address',
    tag: 'Authentication',
    auth: 'none',
    body: z.strictObject({ email: emailSchema, password: passwordSchema, name: nameSchema }),
    responses: {
      201: { description: 'registered', schema: z.object({ success: z.literal(true), user: publicUserSchema, token: z.string(), expiresIn: z.number() }) },
      409: { description: 'EMAIL_TAKEN: an account with this email (case-insensitive) exists (an account that expired unverified gives it up)' },
      429: { description: 'RATE_LIMITED (per IP), with Retry-After' },
    },
    async handler({ body, services, command, settle, koa }) {
      await rateLimit(services, `register:ip:${koa.request.ip}`);
      const userId = services.newId();
      const passwordHash = await hashPassword(body.password);
      const { secret, request } = newVerification(services, command.now);
      const result = await registerUser(
        services.eventStore,
        { ...command, actorId: userId },
        { userId, email: body.email, name: body.name, passwordHash, verification: request },
        { unverifiedAccountTtlHours: services.config.UNVERIFIED_ACCOUNT_TTL_HOURS },
      );
      // The authenticator reads the users model: the token must not come back before the user is there.
      await settle(result.position, userStreamId(userId));
      await sendVerificationMail(services, command, userId, body.email, secret);
      const { token, expiresIn } = await services.tokens.issue({ userId, orgId: null, workspaceId: null });
      const user = { id: userId, email: body.email, name: body.name, createdAt: command.now.toISOString() };
      return { status: 201, body: { success: true, user, token, expiresIn } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/login',
    operationId: 'login',
    summary: 'log in with email and password; 200 with token, expiresIn, user',
    tag: 'Authentication',
    auth: 'none',
    // No length policy here: it would only tell an attacker the rules, and older passwords stay usable.
    body: z.strictObject({ email: emailSchema, password: z.string().min(1).max(PASSWORD_MAX_LENGTH) }),
    responses: {
      200: { description: 'logged in', schema: tokenReply },
      401: { description: 'INVALID_CREDENTIALS: unknown email or wrong password (one answer for both)' },
      403: { description: 'UNVERIFIED_ACCOUNT_EXPIRED: right password, but the account never verified its email within UNVERIFIED_ACCOUNT_TTL_HOURS' },
      429: { description: 'RATE_LIMITED (per IP and per email), with Retry-After' },
    },
    async handler({ body, services, command, koa }) {
      await rateLimit(services, `login:ip:${koa.request.ip}`, `login:email:${body.email}`);
      const user = await findUserByEmail(services.readStore, body.email);
      // Same reads and the same scrypt work whether or not the account exists (or has a password).
      const stored = await findPasswordHash(services.readStore, user?._id ?? NO_USER_ID);
      const matches = await verifyPassword(body.password, stored ?? (await dummyPasswordHash()));
      if (!user || !stored || !matches) throw invalidCredentials();
      // Said only to whoever knows the password: an unverified sign-up may log in until its time runs out.
      const account = { verifiedOnce: user.accountVerified !== false, registeredAt: user.createdAt };
      if (unverifiedAccountExpired(account, command.now.toISOString(), services.config.UNVERIFIED_ACCOUNT_TTL_HOURS)) throw unverifiedAccountExpiredError('forbidden');
      const { token, expiresIn } = await services.tokens.issue({ userId: user._id, orgId: user.activeOrgId, workspaceId: user.activeWorkspaceId });
      return { status: 200, body: { success: true, token, expiresIn, user: publicUser(user) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/forgot-password',
    operationId: 'forgotPassword',
    summary: 'request a password reset; the same answer whether or not the email exists',
    tag: 'Authentication',
    auth: 'none',
    body: z.strictObject({ email: emailSchema }),
    responses: {
      200: { description: 'accepted (a link is mailed if the account exists)', schema: z.object({ success: z.literal(true), message: z.string() }) },
      429: { description: 'RATE_LIMITED (per IP and per email), with Retry-After' },
    },
    async handler({ body, services, command, koa }) {
      await rateLimit(services, `forgot:ip:${koa.request.ip}`, `forgot:email:${body.email}`);
      const user = await findUserByEmail(services.readStore, body.email);
      if (user) {
        void sendResetLink(services, command, user).catch((err: Error) =>
          services.logger.error({ userId: user._id, error: err.message, requestId: command.requestId }, 'password reset request failed'),
        );
      }
      return { status: 200, body: FORGOT_REPLY };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/reset-password',
    operationId: 'resetPassword',
    summary:
      'set a new password with the emailed single-use token; tokens issued before stop working. An account that never verified its email starts over instead: it is disowned (every credential dies) and a new, verified account with this password takes the address',
    tag: 'Authentication',
    auth: 'none',
    body: z.strictObject({ token: z.string().min(1).max(512), password: passwordSchema }),
    responses: {
      200: {
        description: 'password changed (startedOver: true: on a new account that now holds the address, the old one disowned)',
        schema: z.object({ success: z.literal(true), message: z.string(), startedOver: z.boolean() }),
      },
      400: { description: 'INVALID_RESET_TOKEN (unknown, superseded or used) or RESET_TOKEN_EXPIRED, or invalid input' },
      429: { description: 'RATE_LIMITED (per IP and per account), with Retry-After' },
    },
    async handler({ body, services, command, settle, koa }) {
      await rateLimit(services, `reset:ip:${koa.request.ip}`);
      const parsed = parseUserToken(body.token);
      if (!parsed) throw invalidResetToken();
      await rateLimit(services, `reset:user:${parsed.userId}`);
      const passwordHash = await hashPassword(body.password);
      const account = await isNeverVerified(services.eventStore, parsed.userId);
      if (account.neverVerified) {
        // Whoever set this account up may not be the address's owner: hand the owner a clean account, not theirs.
        const userId = services.newId();
        const { registered } = await startOver(
          services.eventStore,
          command,
          parsed.userId,
          { via: 'password_reset', tokenHash: sha256(parsed.secret) },
          { userId, name: account.name ?? 'user', passwordHash },
          { unverifiedAccountTtlHours: services.config.UNVERIFIED_ACCOUNT_TTL_HOURS },
        );
        await settle(registered.position, userStreamId(userId));
        return { status: 200, body: { success: true, message: 'a new account with this password now holds the address (the unverified one was given up); sign in', startedOver: true } };
      }
      const result = await resetPassword(services.eventStore, { ...command, actorId: parsed.userId }, parsed.userId, sha256(parsed.secret), passwordHash);
      await settle(result.position, userStreamId(parsed.userId));
      return { status: 200, body: { success: true, message: 'the password has been changed; sign in again', startedOver: false } };
    },
  }),
  ...emailVerificationRoutes,
];
