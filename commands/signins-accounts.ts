import { reservationDecider } from '../domain/reservations/index.js';
import { DomainError, fold } from '../domain/shared/decider.js';
import { NAME_MAX_LENGTH, avatarUrlSchema, emailSchema, userStreamId } from '../domain/users/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import type { Services } from '../infra/ports/services.js';
import type { CommandContext } from './handle.js';
import { claimReservation, reservationStreamId } from './reservations.js';
import { EMAIL_SCOPE, emailTaken, registerUser, releaseQuietly, runUserCommand } from './users-registration.js';

export interface SocialIdentity {
  provider: 'google' | 'github';
  /** The provider's stable user id (`sub` for OIDC, the numeric id for GitHub). */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  avatarUrl?: string | null;
}

const socialScope = (provider: SocialIdentity['provider']) => `social-${provider}`;

/** Who holds a reservation, read from its stream: the command side's source of truth, not a read model. */
async function reservationOwner(store: EventStore, scope: string, key: string): Promise<string | null> {
  const events = await store.readStream(reservationStreamId(scope, key));
  return fold(reservationDecider.evolve, reservationDecider.initialState, events as never[]).ownerId;
}

const isTaken = (err: unknown) => err instanceof DomainError && err.code === 'ALREADY_TAKEN';

function displayName(identity: SocialIdentity, email: string): string {
  const name = identity.name?.trim() || email.split('@')[0] || 'User';
  return name.slice(0, NAME_MAX_LENGTH);
}

/**
 * Finds or creates the account for a provider identity: the account already linked to
 * (provider, subject); else the account holding the same email, linked only when the provider
 * verified that email; else a new passwordless account. An unverified email that belongs to
 * someone else is EMAIL_TAKEN (409): linking on it would hand that account to whoever typed it.
 * Settles the `users` projection before returning, so a token issued next authenticates.
 */
export async function signInWithSocialIdentity(
  services: Services,
  context: CommandContext,
  identity: SocialIdentity,
): Promise<{ userId: string; created: boolean }> {
  return attempt(services, context, identity, 2);
}

async function attempt(services: Services, context: CommandContext, identity: SocialIdentity, retries: number): Promise<{ userId: string; created: boolean }> {
  const store = services.eventStore;
  const scope = socialScope(identity.provider);
  const settle = async (position: number | null, userId: string) => {
    if (position !== null) await services.projections.waitFor(position, userStreamId(userId), services.config.READ_YOUR_WRITES_TIMEOUT_MS);
  };
  // A lost race below (someone claimed the same key meanwhile) is resolved by looking again.
  const again = (err: unknown) => {
    if (isTaken(err) && retries > 0) return attempt(services, context, identity, retries - 1);
    throw err;
  };

  const linked = await reservationOwner(store, scope, identity.subject);
  if (linked) return { userId: linked, created: false };

  if (!identity.email) throw new DomainError('SOCIAL_EMAIL_REQUIRED', `the ${identity.provider} account has no email address to sign in with`, 'invalid');
  const parsedEmail = emailSchema.safeParse(identity.email);
  if (!parsedEmail.success) throw new DomainError('SOCIAL_EMAIL_INVALID', `the ${identity.provider} account's email address is not valid`, 'invalid');
  const email = parsedEmail.data;

  const owner = await reservationOwner(store, EMAIL_SCOPE, email);
  if (owner) {
    if (!identity.emailVerified) throw emailTaken(null);
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

  const userId = services.newId();
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
    });
    await settle(result.position, userId);
  } catch (err) {
    await releaseQuietly(store, own, scope, identity.subject, userId);
    // The email was claimed meanwhile: a verified email links to that account on the next look.
    if (err instanceof DomainError && err.code === 'EMAIL_TAKEN') {
      if (identity.emailVerified && retries > 0) return attempt(services, context, identity, retries - 1);
      throw emailTaken(null);
    }
    throw err;
  }
  return { userId, created: true };
}
