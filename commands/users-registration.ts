import { DomainError } from '../domain/shared/decider.js';
import { userDecider, userStreamId, type UserCommand } from '../domain/users/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';
import { claimReservation, releaseReservation } from './reservations.js';

/** One account per email: the reservation stream, keyed by the normalized email, decides. */
export const EMAIL_SCOPE = 'user-email';

export const emailTaken = (field: string | null = 'body.email') =>
  new DomainError('EMAIL_TAKEN', 'an account with this email already exists', 'conflict', field ? { field } : undefined);

export function runUserCommand(store: EventStore, context: CommandContext, userId: string, command: UserCommand) {
  return handleCommand(store, { streamId: userStreamId(userId), decider: userDecider, command, context });
}

/** Claims `email` for `userId`; a claim held by someone else is EMAIL_TAKEN. */
export async function claimEmail(store: EventStore, context: CommandContext, email: string, userId: string) {
  try {
    await claimReservation(store, context, EMAIL_SCOPE, email, userId);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ALREADY_TAKEN') throw emailTaken();
    throw err;
  }
}

/** Undo a claim whose command failed, without hiding the command's own error. */
export async function releaseQuietly(store: EventStore, context: CommandContext, scope: string, key: string, ownerId: string) {
  await releaseReservation(store, context, scope, key, ownerId).catch(() => undefined);
}

export interface Registration {
  userId: string;
  /** Normalized (lowercase) already. */
  email: string;
  name: string;
  /** scrypt hash, or null for a passwordless (social) account. */
  passwordHash: string | null;
  avatarUrl?: string | null;
  socialIdentity?: { provider: 'google' | 'github'; subject: string } | null;
}

/** Claims the email, then records the user; the claim is released again if the user cannot be recorded. */
export async function registerUser(store: EventStore, context: CommandContext, registration: Registration) {
  const { userId, email } = registration;
  await claimEmail(store, context, email, userId);
  try {
    return await runUserCommand(store, context, userId, {
      type: 'RegisterUser',
      userId,
      email,
      name: registration.name,
      passwordHash: registration.passwordHash,
      avatarUrl: registration.avatarUrl ?? null,
      socialIdentity: registration.socialIdentity ?? null,
      at: context.now.toISOString(),
    });
  } catch (err) {
    await releaseQuietly(store, context, EMAIL_SCOPE, email, userId);
    throw err;
  }
}
