import { DomainError } from '../domain/shared/decider.js';
import {
  DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS,
  NAME_MAX_LENGTH,
  accountEmailUnverified,
  avatarUrlSchema,
  emailSchema,
  userDecider,
  userStreamId,
} from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import { loadState, type CommandContext } from './handle.js';
import { claimReservation } from './reservations.js';
import { EMAIL_SCOPE, emailTaken, registerUser, releaseQuietly, reservationOwner, runUserCommand, takeOverExpiredEmail } from './users-registration.js';

export interface SocialIdentity {
  provider: 'google' | 'github';
  /** The provider's stable user id (`sub` for OIDC, the numeric id for GitHub). */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  avatarUrl?: string | null;
}

/** What finding or creating the account needs: the log, an id source, and read-your-writes on the users model. */
export interface SocialAccountPorts {
  eventStore: EventStore;
  newId(): string;
  /** Waits (bounded) until the projection serving `streamId` has reached `position`. */
  waitForProjection(position: number, streamId: string): Promise<unknown>;
  /** UNVERIFIED_ACCOUNT_TTL_HOURS: an account unverified this long gives its email up. */
  unverifiedAccountTtlHours?: number;
}

const socialScope = (provider: SocialIdentity['provider']) => `social-${provider}`;

const isTaken = (err: unknown) => err instanceof DomainError && err.code === 'ALREADY_TAKEN';

function displayName(identity: SocialIdentity, email: string): string {
  const name = identity.name?.trim() || email.split('@')[0] || 'User';
  return name.slice(0, NAME_MAX_LENGTH);
}

/**
 * Finds or creates the account for a provider identity: the account already linked to
 * (provider, subject); else the account holding the same email, linked only when the address is
 * verified on both sides; else a new passwordless account, verified from the start, which needs
 * the provider to have verified the address.
 * - the provider did not verify it: EMAIL_TAKEN (409) when it belongs to an account (linking on
 *   it would hand that account to whoever typed it), else SOCIAL_EMAIL_UNVERIFIED (400);
 * - our account did not verify it: ACCOUNT_EMAIL_UNVERIFIED (409): someone may have registered
 *   the address before its owner; the owner signs in with the password and verifies it first.
 *   An account that stayed unverified past its TTL gives the address up to the new account.
 * Settles the `users` projection before returning, so a token issued next authenticates.
 */
export async function signInWithSocialIdentity(
  ports: SocialAccountPorts,
  context: CommandContext,
  identity: SocialIdentity,
): Promise<{ userId: string; created: boolean }> {
  return attempt(ports, context, identity, 2);
}

async function attempt(ports: SocialAccountPorts, context: CommandContext, identity: SocialIdentity, retries: number): Promise<{ userId: string; created: boolean }> {
  const store = ports.eventStore;
  const scope = socialScope(identity.provider);
  const settle = async (position: number | null, userId: string) => {
    if (position !== null) await ports.waitForProjection(position, userStreamId(userId));
  };
  // A lost race below (someone claimed the same key meanwhile) is resolved by looking again.
  const again = (err: unknown) => {
    if (isTaken(err) && retries > 0) return attempt(ports, context, identity, retries - 1);
    throw err;
  };

  const linked = await reservationOwner(store, scope, identity.subject);
  if (linked) return { userId: linked, created: false };

  if (!identity.email) throw new DomainError('SOCIAL_EMAIL_REQUIRED', `the ${identity.provider} account has no email address to sign in with`, 'invalid');
  const parsedEmail = emailSchema.safeParse(identity.email);
  if (!parsedEmail.success) throw new DomainError('SOCIAL_EMAIL_INVALID', `the ${identity.provider} account's email address is not valid`, 'invalid');
  const email = parsedEmail.data;

  const ttlHours = ports.unverifiedAccountTtlHours ?? DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS;
  const owner = await reservationOwner(store, EMAIL_SCOPE, email);
  if (!identity.emailVerified) {
    if (owner) throw emailTaken(null);
    throw new DomainError('SOCIAL_EMAIL_UNVERIFIED', `the ${identity.provider} account's email address is not verified there; verify it with ${identity.provider} first`, 'invalid');
  }
  if (owner) {
    const { state } = await loadState(store, userStreamId(owner), userDecider);
    if (!state.emailVerified) {
      if (await takeOverExpiredEmail(store, context, email, owner, ttlHours)) return attempt(ports, context, identity, retries);
      // Checked here to spare a claim and release of the provider key; the decider refuses the link as well.
      throw accountEmailUnverified();
    }
    try {
      await claimReservation(store, { ...context, actorId: owner }, scope, identity.subject, owner);
    } catch (err) {
      return again(err);
    }
    try {
      const result = await runUserCommand(store, { ...context, actorId: owner }, owner, {
        type: 'LinkSocialIdentity',
        provider: identity.provider,
        subject: identity.subject,
        at: context.now.toISOString(),
      });
      await settle(result.position, owner);
    } catch (err) {
      await releaseQuietly(store, context, scope, identity.subject, owner);
      throw err;
    }
    return { userId: owner, created: false };
  }

  const userId = ports.newId();
  const own = { ...context, actorId: userId };
  try {
    await claimReservation(store, own, scope, identity.subject, userId);
  } catch (err) {
    return again(err);
  }
  try {
    const avatar = avatarUrlSchema.safeParse(identity.avatarUrl ?? undefined);
    const result = await registerUser(store, own, {
      userId,
      email,
      name: displayName(identity, email),
      passwordHash: null,
      avatarUrl: avatar.success ? avatar.data : null,
      socialIdentity: { provider: identity.provider, subject: identity.subject },
      verification: null,
    }, { unverifiedAccountTtlHours: ttlHours });
    await settle(result.position, userId);
  } catch (err) {
    await releaseQuietly(store, own, scope, identity.subject, userId);
    // The email was claimed meanwhile: a verified email links to that account on the next look.
    if (err instanceof DomainError && err.code === 'EMAIL_TAKEN') {
      if (retries > 0) return attempt(ports, context, identity, retries - 1);
      throw emailTaken(null);
    }
    throw err;
  }
  return { userId, created: true };
}
