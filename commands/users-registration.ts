import { reservationDecider } from '../domain/reservations/index.js';
import { DomainError, fold } from '../domain/shared/decider.js';
import { DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS, userDecider, userStreamId, type UserCommand, type VerificationRequest } from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';
import { claimReservation, releaseReservation, reservationStreamId } from './reservations.js';

/** One account per email: the reservation stream, keyed by the normalized email, decides. */
export const EMAIL_SCOPE = 'user-email';

export const emailTaken = (field: string | null = 'body.email') =>
  new DomainError('EMAIL_TAKEN', 'an account with this email already exists', 'conflict', field ? { field } : undefined);

export function runUserCommand(store: EventStore, context: CommandContext, userId: string, command: UserCommand) {
  return handleCommand(store, { streamId: userStreamId(userId), decider: userDecider, command, context });
}

/** Who holds a reservation, read from its stream: the command side's source of truth, not a read model. */
export async function reservationOwner(store: EventStore, scope: string, key: string): Promise<string | null> {
  const events = await store.readStream(reservationStreamId(scope, key));
  return fold(reservationDecider.evolve, reservationDecider.initialState, events as never[]).ownerId;
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

/**
 * Frees `email` from `holderId` when that account expired unverified: records the expiry on the
 * holder's stream (the holder's decider judges), then releases the reservation. False when the
 * holder is verified or still within its time. Idempotent: an expiry recorded by an interrupted
 * earlier attempt only has its release finished.
 */
export async function takeOverExpiredEmail(store: EventStore, context: CommandContext, email: string, holderId: string, ttlHours: number): Promise<boolean> {
  try {
    await runUserCommand(store, context, holderId, { type: 'ExpireUnverifiedAccount', email, ttlHours, at: context.now.toISOString() });
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ACCOUNT_NOT_EXPIRED') return false;
    throw err;
  }
  await releaseReservation(store, context, EMAIL_SCOPE, email, holderId);
  return true;
}

/** Claims `email`, taking it over from an expired unverified holder; anyone else's claim is EMAIL_TAKEN. */
export async function claimEmailOrTakeOver(store: EventStore, context: CommandContext, email: string, userId: string, ttlHours: number) {
  try {
    await claimEmail(store, context, email, userId);
    return;
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'EMAIL_TAKEN')) throw err;
    const holder = await reservationOwner(store, EMAIL_SCOPE, email);
    if (!holder || holder === userId || !(await takeOverExpiredEmail(store, context, email, holder, ttlHours))) throw err;
  }
  // Someone faster may claim the freed address first: then it is theirs, and this is EMAIL_TAKEN.
  await claimEmail(store, context, email, userId);
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
  /** The verification mail about to be sent (a password sign-up), or null for an address a provider verified. */
  verification?: VerificationRequest | null;
}

/**
 * Claims the email (taking it over from an account that expired unverified), then records the
 * user; the claim is released again if the user cannot be recorded.
 */
export async function registerUser(
  store: EventStore,
  context: CommandContext,
  registration: Registration,
  policy: { unverifiedAccountTtlHours?: number } = {},
) {
  const { userId, email } = registration;
  await claimEmailOrTakeOver(store, context, email, userId, policy.unverifiedAccountTtlHours ?? DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS);
  try {
    return await runUserCommand(store, context, userId, {
      type: 'RegisterUser',
      userId,
      email,
      name: registration.name,
      passwordHash: registration.passwordHash,
      avatarUrl: registration.avatarUrl ?? null,
      socialIdentity: registration.socialIdentity ?? null,
      ...(registration.verification !== undefined ? { verification: registration.verification } : {}),
      at: context.now.toISOString(),
    });
  } catch (err) {
    await releaseQuietly(store, context, EMAIL_SCOPE, email, userId);
    throw err;
  }
}
