import { DomainError, fold } from '../domain/shared/decider.js';
import { userDecider, userStreamId, type Preferences, type VerificationRequest } from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { CommandContext } from './handle.js';
import { releaseReservation } from './reservations.js';
import { EMAIL_SCOPE, claimEmail, releaseQuietly, runUserCommand } from './users-registration.js';

export { signInWithSocialIdentity, type SocialIdentity } from './signins-accounts.js';
export { createApiKey, revokeApiKey } from './users-api-keys.js';
export { EMAIL_SCOPE, claimEmail, emailTaken, registerUser, reservationOwner, runUserCommand, takeOverExpiredEmail, type Registration } from './users-registration.js';

export function updateProfile(
  store: EventStore,
  context: CommandContext,
  userId: string,
  changes: { name?: string; avatarUrl?: string | null; preferences?: Preferences },
) {
  return runUserCommand(store, context, userId, { type: 'UpdateProfile', ...changes, at: context.now.toISOString() });
}

/**
 * Claims the new email before recording the change and releases the old one after, so the
 * address is never free for someone else in between. With `verification` (the mail about to be
 * sent to the new address) the account's email counts as unverified until that mail's token comes
 * back. Returns null when the email is unchanged.
 */
export async function changeEmail(store: EventStore, context: CommandContext, userId: string, email: string, verification?: VerificationRequest) {
  const streamId = userStreamId(userId);
  const current = fold(userDecider.evolve, userDecider.initialState, (await store.readStream(streamId)) as never[]);
  if (!current.exists) throw new DomainError('USER_NOT_FOUND', 'user not found', 'not_found');
  if (current.email === email) return null;
  await claimEmail(store, context, email, userId);
  let result;
  try {
    result = await runUserCommand(store, context, userId, { type: 'ChangeEmail', email, ...(verification ? { verification } : {}), at: context.now.toISOString() });
  } catch (err) {
    await releaseQuietly(store, context, EMAIL_SCOPE, email, userId);
    throw err;
  }
  // The event names the email actually replaced, even if another change got in first.
  for (const event of result.events) {
    if (event.type === 'UserEmailChanged') await releaseReservation(store, context, EMAIL_SCOPE, event.data.previousEmail, userId);
  }
  return result;
}

/** Records a new verification mail for the current (unverified) address; earlier tokens stop working. */
export function requestEmailVerification(store: EventStore, context: CommandContext, userId: string, verification: VerificationRequest) {
  return runUserCommand(store, context, userId, { type: 'RequestEmailVerification', ...verification, at: context.now.toISOString() });
}

export { isNeverVerified, startOver, verifyEmailWithPassword as verifyEmail, type FreshAccount } from './users-start-over.js';

export function requestPasswordReset(store: EventStore, context: CommandContext, userId: string, tokenHash: string, expiresAt: string) {
  return runUserCommand(store, context, userId, { type: 'RequestPasswordReset', tokenHash, expiresAt, at: context.now.toISOString() });
}

export function resetPassword(store: EventStore, context: CommandContext, userId: string, tokenHash: string, passwordHash: string) {
  return runUserCommand(store, context, userId, { type: 'ResetPassword', tokenHash, passwordHash, at: context.now.toISOString() });
}

/**
 * Records the active organization and workspace on the user (null, null: the personal
 * workspace). The caller has checked membership; settle on `userStreamId(userId)` before issuing
 * a token that relies on it.
 */
export function switchActiveScope(store: EventStore, context: CommandContext, userId: string, orgId: string | null, workspaceId: string | null) {
  return runUserCommand(store, context, userId, { type: 'SwitchActiveScope', orgId, workspaceId, at: context.now.toISOString() });
}
