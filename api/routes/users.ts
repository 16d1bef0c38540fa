import { z } from 'zod';
import { changeEmail, updateProfile } from '../../commands/users.js';
import { DomainError } from '../../domain/shared/decider.js';
import { avatarUrlSchema, emailSchema, nameSchema, preferencesSchema, userStreamId } from '../../domain/users/index.js';
import type { Services } from '../../ports/services.js';
import { findUserById, type UserView } from '../../projections/users.js';
import { liveWorkspace } from '../../projections/users-auth.js';
import { NotFoundError } from '../errors.js';
import { defineRoute } from '../route.js';
import { newVerification, sendVerificationMail } from './users-email-verification.js';
import { userLlmRoutes } from './users-llm-credentials.js';

const profileSchema = z.object({
  id: z.string(),
  email: z.string(),
  emailVerified: z.boolean().describe('false until the link mailed to this address comes back (POST /auth/verify-email)'),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  preferences: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
  activeOrganizationId: z.string().nullable(),
  activeWorkspaceId: z.string().nullable(),
});
const profileReply = z.object({ success: z.literal(true), user: profileSchema });

const profile = (u: UserView) => ({
  id: u._id,
  email: u.email,
  // Documents projected before verification existed lack the flag: those accounts count as verified.
  emailVerified: u.emailVerified !== false,
  name: u.name,
  avatarUrl: u.avatarUrl,
  preferences: JSON.parse(u.preferencesJson) as Record<string, unknown>,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
  activeOrganizationId: u.activeOrgId,
  activeWorkspaceId: u.activeWorkspaceId,
});

async function loadProfile(services: Services, userId: string) {
  const user = await findUserById(services.readStore, userId);
  if (!user) throw new NotFoundError('user', 'USER_NOT_FOUND');
  // A deleted active workspace shows as where the member now lands: the organization's default.
  const activeWorkspaceId = (user.activeOrgId && (await liveWorkspace(services.readStore, user.activeOrgId, user.activeWorkspaceId))) || user.activeWorkspaceId;
  return profile({ ...user, activeWorkspaceId });
}

export const userRoutes = [
  defineRoute({
    method: 'GET',
    path: '/users/me',
    operationId: 'getMyProfile',
    summary: "the authenticated user's profile",
    tag: 'Profile',
    auth: 'bearer',
    responses: { 200: { description: 'the profile', schema: profileReply }, 401: { description: 'no valid credential' } },
    async handler({ principal, services }) {
      return { status: 200, body: { success: true, user: await loadProfile(services, principal!.userId) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/users/me',
    operationId: 'updateMyProfile',
    summary: 'update the profile (name, avatar URL, preferences, email); fields left out stay as they are',
    tag: 'Profile',
    auth: 'bearer',
    body: z.strictObject({
      name: nameSchema.optional(),
      avatarUrl: avatarUrlSchema.nullable().optional().describe('http(s) URL, or null to remove'),
      preferences: preferencesSchema.optional().describe('any JSON object up to 16 KiB; replaces the stored one'),
      email: emailSchema
        .optional()
        .describe('claims the new address (409 EMAIL_TAKEN if another account has it), frees the old one, and mails a verification link to the new one (unverified until it comes back)'),
    }),
    responses: {
      200: { description: 'the updated profile', schema: profileReply },
      401: { description: 'no valid credential' },
      403: { description: 'FORBIDDEN: an API key cannot change the email' },
      409: { description: 'EMAIL_TAKEN' },
    },
    async handler({ body, principal, services, command, settle }) {
      const userId = principal!.userId;
      const streamId = userStreamId(userId);
      // The email is what can fail (taken), so it goes first: a refused change leaves the profile as it was.
      if (body.email !== undefined) {
        // Email plus a password reset would be an account takeover, too much for a leaked API key.
        if (principal!.credential === 'api_key') throw new DomainError('FORBIDDEN', 'changing the email needs a signed-in session, not an API key', 'forbidden');
        const { secret, request } = newVerification(services, command.now);
        const changed = await changeEmail(services.eventStore, command, userId, body.email, request);
        if (changed) {
          await settle(changed.position, streamId);
          await sendVerificationMail(services, command, userId, body.email, secret);
        }
      }
      const { name, avatarUrl, preferences } = body;
      if (name !== undefined || avatarUrl !== undefined || preferences !== undefined) {
        const result = await updateProfile(services.eventStore, command, userId, { name, avatarUrl, preferences });
        await settle(result.position, streamId);
      }
      return { status: 200, body: { success: true, user: await loadProfile(services, userId) } };
    },
  }),
  ...userLlmRoutes,
];
