import { userDecider, userStreamId } from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import { loadState, type CommandContext } from './handle.js';
import { releaseReservation } from './reservations.js';
import { verifyPassword } from './users-credentials.js';
import { EMAIL_SCOPE, registerUser, runUserCommand } from './users-registration.js';

/**
 * Pre-hijacking (issue 37): someone registers a victim's address with a password of their own and
 * waits. The link mailed to the address proves who holds the address, not who set up the account,
 * so it no longer verifies (or resets the password of) such an account alone: the clicker either
 * knows the password, or starts over: the never-verified account is disowned (every credential it
 * had dies) and the address goes to a new account with the clicker's own password.
 */

/** VerifyEmail, with the password checked here (scrypt) and the verdict handed to the decider. */
export async function verifyEmailWithPassword(store: EventStore, context: CommandContext, userId: string, tokenHash: string, password: string | null) {
  const { state } = await loadState(store, userStreamId(userId), userDecider);
  const passwordProven = password !== null && state.passwordHash !== null && (await verifyPassword(password, state.passwordHash));
  return runUserCommand(store, context, userId, { type: 'VerifyEmail', tokenHash, passwordProven, at: context.now.toISOString() });
}

export interface FreshAccount {
  userId: string;
  name: string;
  passwordHash: string;
}

/**
 * Disowns the never-verified account `oldUserId` (the link's token proves the address), releases
 * its address, and registers `fresh` with it, verified. Should someone claim the freed address in
 * between, the answer is EMAIL_TAKEN and the old account stays disowned (it was never the clicker's).
 */
export async function startOver(
  store: EventStore,
  context: CommandContext,
  oldUserId: string,
  proof: { via: 'email_verification' | 'password_reset'; tokenHash: string },
  fresh: FreshAccount,
  policy: { unverifiedAccountTtlHours?: number } = {},
) {
  const disowned = await runUserCommand(store, { ...context, actorId: oldUserId }, oldUserId, { type: 'DisownUnverifiedAccount', ...proof, at: context.now.toISOString() });
  const event = disowned.events.find((e) => e.type === 'UnverifiedAccountDisowned');
  const email = event!.data.email as string;
  await releaseReservation(store, context, EMAIL_SCOPE, email, oldUserId);
  const registered = await registerUser(
    store,
    { ...context, actorId: fresh.userId },
    { userId: fresh.userId, email, name: fresh.name, passwordHash: fresh.passwordHash, verification: null },
    policy,
  );
  return { email, disownedPosition: disowned.position, registered };
}

/** A reset of a never-verified account starts over (keeping its name); any other is a plain reset. */
export async function isNeverVerified(store: EventStore, userId: string): Promise<{ neverVerified: boolean; name: string | null }> {
  const { state } = await loadState(store, userStreamId(userId), userDecider);
  return { neverVerified: state.exists && !state.expired && !state.verifiedOnce, name: state.name };
}
