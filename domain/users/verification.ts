import { DomainError } from '../shared/decider.js';
import type { UserEvent } from './events.js';
import type { UserState } from './state.js';

/**
 * Email ownership. A password sign-up proves its address by sending back a single-use token that
 * was mailed to it; until then the account can sign in, but social sign-in will not link to it,
 * and once it is older than the unverified-account TTL it expires: it can no longer sign in, and
 * the next person to register its email takes the address over (UnverifiedAccountExpired on the
 * old account; no sweeper). Secrets reach the decider as SHA-256 hashes only.
 */
export type EmailVerificationCommand =
  /** Another mail for the current address; the earlier token stops working. */
  | { type: 'RequestEmailVerification'; tokenHash: string; expiresAt: string; at: string }
  /**
   * `passwordProven`: the caller checked the password the clicker typed against the account's
   * (scrypt is slow, so before the command). An account with a password is not verified by the
   * link alone: the link proves the address, not that the clicker set up the account.
   */
  | { type: 'VerifyEmail'; tokenHash: string; passwordProven: boolean; at: string }
  /** Start over: the link's holder gives up the never-verified account holding their address (UnverifiedAccountDisowned). */
  | { type: 'DisownUnverifiedAccount'; via: 'email_verification' | 'password_reset'; tokenHash: string; at: string }
  /** Someone registers this account's email: allowed only once the account has expired unverified. */
  | { type: 'ExpireUnverifiedAccount'; email: string; ttlHours: number; at: string };

/** What a new mail needs: the hash of its secret and when the token stops working. */
export interface VerificationRequest {
  tokenHash: string;
  expiresAt: string;
}

export const DEFAULT_EMAIL_VERIFICATION_TTL_HOURS = 48;
export const DEFAULT_UNVERIFIED_ACCOUNT_TTL_HOURS = 168;

/** One code for unknown user, wrong secret, superseded and consumed token, so the answer says nothing about which. */
export const invalidVerificationToken = () =>
  new DomainError('INVALID_VERIFICATION_TOKEN', 'the verification token is invalid or has already been used', 'invalid', { field: 'body.token' });

export const accountEmailUnverified = () =>
  new DomainError(
    'ACCOUNT_EMAIL_UNVERIFIED',
    'an account with this email exists but has not verified it: sign in with its password and verify the email first, then sign in with the provider again',
    'conflict',
  );

/** 403 (the caller is not shown to be this account's owner yet), after the token was found valid: it says nothing to a guesser. */
export const passwordRequired = () =>
  new DomainError(
    'PASSWORD_REQUIRED',
    "this account has a password: send it with the token to verify the address, or, if you never set up this account, send startOver {name, password} to take the address to a new account of your own",
    'forbidden',
    { field: 'body.password', startOver: true },
  );

export const startOverNotAllowed = () =>
  new DomainError('START_OVER_NOT_ALLOWED', 'this account has proven an email address before; it cannot be disowned, verify with its password', 'conflict', { field: 'body.startOver' });

export const unverifiedAccountExpiredError = (kind: 'forbidden' | 'unauthenticated') =>
  new DomainError('UNVERIFIED_ACCOUNT_EXPIRED', 'this account never verified its email in time and has expired; register again', kind);

/**
 * The rule for expiry, on whatever holds the facts (the folded state, or the users read model for
 * the login and authentication paths): never proven any address, and registered at least
 * `ttlHours` ago.
 */
export function unverifiedAccountExpired(account: { verifiedOnce: boolean; registeredAt: string | null }, at: string, ttlHours: number): boolean {
  if (account.verifiedOnce || account.registeredAt === null) return false;
  return Date.parse(account.registeredAt) + ttlHours * 3_600_000 <= Date.parse(at);
}

/** Hashes are equal-length hex; comparing every character keeps the time independent of where they differ. */
export function sameHash(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

export function verificationRequested(email: string, request: VerificationRequest, at: string): UserEvent {
  return { type: 'EmailVerificationRequested', data: { email, tokenHash: request.tokenHash, expiresAt: request.expiresAt, requestedAt: at } };
}

/** The pending verification `tokenHash` names, for the account's current address and unexpired; else the one code for every bad token. */
function validPendingVerification(state: UserState, tokenHash: string, at: string) {
  const pending = state.pendingVerification;
  // A request for an address the account no longer has is as dead as a consumed one.
  if (!state.exists || state.expired || !pending || pending.email !== state.email || !sameHash(pending.tokenHash, tokenHash)) {
    throw invalidVerificationToken();
  }
  if (Date.parse(pending.expiresAt) <= Date.parse(at)) {
    throw new DomainError('VERIFICATION_TOKEN_EXPIRED', 'the verification token has expired; ask for a new mail', 'invalid', { field: 'body.token' });
  }
  return pending;
}

export const invalidResetToken = () => new DomainError('INVALID_RESET_TOKEN', 'the reset token is invalid or has already been used', 'invalid', { field: 'body.token' });

export function validPendingReset(state: UserState, tokenHash: string, at: string) {
  const pending = state.pendingReset;
  if (!state.exists || state.expired || !pending || !sameHash(pending.tokenHash, tokenHash)) throw invalidResetToken();
  if (Date.parse(pending.expiresAt) <= Date.parse(at)) {
    throw new DomainError('RESET_TOKEN_EXPIRED', 'the reset token has expired; request a new one', 'invalid', { field: 'body.token' });
  }
  return pending;
}

export function decideEmailVerification(command: EmailVerificationCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RequestEmailVerification':
      if (!state.exists || state.expired) throw new DomainError('USER_NOT_FOUND', 'user not found', 'not_found');
      if (state.emailVerified) throw new DomainError('EMAIL_ALREADY_VERIFIED', 'this account has already verified its email', 'conflict');
      return [verificationRequested(state.email!, command, command.at)];
    case 'VerifyEmail': {
      const pending = validPendingVerification(state, command.tokenHash, command.at);
      if (state.hasPassword && !command.passwordProven) throw passwordRequired();
      return [{ type: 'EmailVerified', data: { email: pending.email, tokenHash: command.tokenHash, verifiedAt: command.at } }];
    }
    case 'DisownUnverifiedAccount': {
      if (command.via === 'email_verification') validPendingVerification(state, command.tokenHash, command.at);
      else validPendingReset(state, command.tokenHash, command.at);
      // An account that proved an address once belongs to whoever proved it; only a never-verified one is up for grabs.
      if (state.verifiedOnce) throw startOverNotAllowed();
      const tokensValidAfter = Math.max(state.tokensValidAfter, Math.floor(Date.parse(command.at) / 1000));
      return [{ type: 'UnverifiedAccountDisowned', data: { email: state.email!, via: command.via, tokensValidAfter, disownedAt: command.at } }];
    }
    case 'ExpireUnverifiedAccount': {
      // Already handed over: the caller only has to finish releasing the reservation.
      if (state.exists && state.expired && state.email === command.email) return [];
      const expired = state.exists && state.email === command.email && unverifiedAccountExpired(state, command.at, command.ttlHours);
      if (!expired) throw new DomainError('ACCOUNT_NOT_EXPIRED', 'the account holding this email is verified or still within its time to verify', 'conflict');
      const tokensValidAfter = Math.max(state.tokensValidAfter, Math.floor(Date.parse(command.at) / 1000));
      return [{ type: 'UnverifiedAccountExpired', data: { email: command.email, tokensValidAfter, expiredAt: command.at } }];
    }
  }
}
