import { z } from 'zod';
import type { CommandContext } from '../../commands/handle.js';
import { hashPassword, randomSecret, sha256 } from '../../commands/users-credentials.js';
import { requestEmailVerification, startOver, verifyEmail } from '../../commands/users.js';
import { PASSWORD_MAX_LENGTH, emailSchema, invalidVerificationToken, nameSchema, passwordSchema, userStreamId, type VerificationRequest } from '../../domain/users/index.js';
import type { Services } from '../../ports/services.js';
import { findUserByEmail } from '../../projections/users.js';
import { defineRoute } from '../route.js';

const RATE_WINDOW_MS = 60_000;

/** Each key gets RATE_LIMIT_AUTH_PER_MINUTE attempts per minute; the first exhausted one answers 429. */
export async function rateLimitAuth(services: Services, ...keys: string[]): Promise<void> {
  for (const key of keys) await services.rateLimiter.hit(`auth:${key}`, services.config.RATE_LIMIT_AUTH_PER_MINUTE, RATE_WINDOW_MS);
}

/** Mailed tokens (password reset, email verification) are `<userId>.<secret>`; only sha256(secret) is recorded. */
export function parseUserToken(token: string): { userId: string; secret: string } | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const userId = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(userId) || !/^[A-Za-z0-9_-]{16,128}$/.test(secret)) return null;
  return { userId, secret };
}

/** A fresh verification secret: the request (its hash, its expiry) goes to the log, the secret only into the mail. */
export function newVerification(services: Services, now: Date): { secret: string; request: VerificationRequest } {
  const secret = randomSecret();
  const expiresAt = new Date(now.getTime() + services.config.EMAIL_VERIFICATION_TTL_HOURS * 3_600_000).toISOString();
  return { secret, request: { tokenHash: sha256(secret), expiresAt } };
}

/**
 * Mails the link to FRONTEND_URL/verify-email?token=…, whose page posts the token to
 * /auth/verify-email. A mailer failure is logged, not answered: the account stands, and the person
 * can ask for another mail.
 */
export async function sendVerificationMail(services: Services, command: CommandContext, userId: string, email: string, secret: string) {
  const token = `${userId}.${secret}`;
  const link = `${services.config.FRONTEND_URL.replace(/\/+$/, '')}/verify-email?token=${encodeURIComponent(token)}`;
  const hours = services.config.EMAIL_VERIFICATION_TTL_HOURS;
  try {
    await services.mailer.send({
      to: email,
      subject: 'Verify your email address',
      text:
        `Please confirm that this address belongs to your account.\n\nOpen this link within ${hours} hours:\n${link}\n\n` +
        `An account that has not verified its email within ${services.config.UNVERIFIED_ACCOUNT_TTL_HOURS} hours of signing up expires.\n` +
        'If you did not sign up, ignore this mail.',
    });
  } catch (err) {
    services.logger.error({ userId, error: (err as Error).message, requestId: command.requestId }, 'email verification mail failed');
  }
}

/**
 * `password`: the account's own, required when it has one (pre-hijacking). `startOver`: the
 * clicker never set up this account: disown it and take the address to a new account with this
 * name and password. At most one of the two.
 */
const verifyBody = z
  .strictObject({
    token: z.string().min(1).max(512),
    password: z.string().min(1).max(PASSWORD_MAX_LENGTH).optional(),
    startOver: z.strictObject({ name: nameSchema, password: passwordSchema }).optional(),
  })
  .refine((b) => !(b.password !== undefined && b.startOver !== undefined), { path: ['startOver'], message: 'send either password or startOver, not both' });

const startedOverUser = z.object({ id: z.string(), email: z.string(), name: z.string(), createdAt: z.string() });

const RESEND_REPLY = { success: true, message: 'if an unverified account exists for this email, a new verification link has been sent to it' } as const;

export const emailVerificationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/verify-email',
    operationId: 'verifyEmail',
    summary:
      "verify the account's email with the single-use token from the verification mail and the account's password; or start over (the clicker never set up this account): disown it and take the address to a new account",
    tag: 'Authentication',
    auth: 'none',
    body: verifyBody,
    responses: {
      200: { description: 'verified', schema: z.object({ success: z.literal(true), message: z.string(), email: z.string() }) },
      201: {
        description: 'started over: the never-verified account that held the address is disowned (its sessions and keys stop working); a new, verified account of the caller holds it',
        schema: z.object({ success: z.literal(true), startedOver: z.literal(true), email: z.string(), user: startedOverUser, token: z.string(), expiresIn: z.number() }),
      },
      400: { description: 'INVALID_VERIFICATION_TOKEN (unknown, superseded, used, or for an address the account no longer has) or VERIFICATION_TOKEN_EXPIRED, or invalid input (password and startOver together)' },
      403: { description: 'PASSWORD_REQUIRED: the token is valid but the account has a password, and `password` is missing or wrong (details.startOver: true: starting over is possible)' },
      409: { description: 'START_OVER_NOT_ALLOWED: the account proved an address before and cannot be disowned; EMAIL_TAKEN: someone claimed the freed address first' },
      429: { description: 'RATE_LIMITED (per IP and per account), with Retry-After' },
    },
    async handler({ body, services, command, settle, koa }) {
      await rateLimitAuth(services, `verify:ip:${koa.request.ip}`);
      const parsed = parseUserToken(body.token);
      if (!parsed) throw invalidVerificationToken();
      await rateLimitAuth(services, `verify:user:${parsed.userId}`);
      if (body.startOver) {
        const userId = services.newId();
        const passwordHash = await hashPassword(body.startOver.password);
        const { email, registered } = await startOver(
          services.eventStore,
          command,
          parsed.userId,
          { via: 'email_verification', tokenHash: sha256(parsed.secret) },
          { userId, name: body.startOver.name, passwordHash },
          { unverifiedAccountTtlHours: services.config.UNVERIFIED_ACCOUNT_TTL_HOURS },
        );
        await settle(registered.position, userStreamId(userId));
        const { token, expiresIn } = await services.tokens.issue({ userId, orgId: null, workspaceId: null });
        const user = { id: userId, email, name: body.startOver.name, createdAt: command.now.toISOString() };
        return { status: 201, body: { success: true, startedOver: true, email, user, token, expiresIn } };
      }
      const result = await verifyEmail(services.eventStore, { ...command, actorId: parsed.userId }, parsed.userId, sha256(parsed.secret), body.password ?? null);
      await settle(result.position, userStreamId(parsed.userId));
      return { status: 200, body: { success: true, message: 'the email address is verified', email: result.state.email! } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/resend-verification',
    operationId: 'resendEmailVerification',
    summary: 'mail a new verification link (earlier ones stop working); the same answer whether or not such an account exists',
    tag: 'Authentication',
    auth: 'none',
    body: z.strictObject({ email: emailSchema }),
    responses: {
      200: { description: 'accepted (a link is mailed if an unverified account has this email)', schema: z.object({ success: z.literal(true), message: z.string() }) },
      429: { description: 'RATE_LIMITED (per IP and per email), with Retry-After' },
    },
    async handler({ body, services, command, koa }) {
      await rateLimitAuth(services, `resend:ip:${koa.request.ip}`, `resend:email:${body.email}`);
      const user = await findUserByEmail(services.readStore, body.email);
      // After the answer, so that it takes the same time whether or not there is anything to send.
      if (user && user.emailVerified === false) {
        const { secret, request } = newVerification(services, command.now);
        void requestEmailVerification(services.eventStore, { ...command, actorId: user._id }, user._id, request)
          .then(async (result) => {
            // To the address the request was decided for, which the read model may not show yet.
            for (const event of result.events) {
              if (event.type === 'EmailVerificationRequested') await sendVerificationMail(services, command, user._id, event.data.email, secret);
            }
          })
          .catch((err: Error) => services.logger.warn({ userId: user._id, error: err.message, requestId: command.requestId }, 'email verification request refused'));
      }
      return { status: 200, body: RESEND_REPLY };
    },
  }),
];
