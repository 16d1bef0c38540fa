import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { PERMISSIONS } from '../shared/permissions.js';
import { API_KEY_NAME_MAX_LENGTH, NAME_MAX_LENGTH, SOCIAL_PROVIDERS, preferencesSchema } from './fields.js';
import { userLlmProviderSchema } from './llm-credentials.js';

/**
 * Events of the `user-<id>` stream. Secrets appear only as hashes: scrypt for passwords, SHA-256
 * for the high-entropy reset and API-key secrets.
 */
const socialIdentity = z.object({ provider: z.enum(SOCIAL_PROVIDERS), subject: z.string().min(1).max(255) });
const scrypt = z.string().startsWith('scrypt$');
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const userEventSchemas = {
  /**
   * `passwordHash` null: a passwordless account (social sign-in); password login always fails for it.
   * `emailVerified` false: a password sign-up whose address is still to be proven (an
   * EmailVerificationRequested follows). Absent on accounts registered before verification
   * existed, which count as verified.
   */
  UserRegistered: z.object({
    userId: z.string(),
    email: z.email(),
    name: z.string().min(1).max(NAME_MAX_LENGTH),
    passwordHash: scrypt.nullable(),
    avatarUrl: z.string().nullable(),
    registeredAt: z.string(),
    emailVerified: z.boolean().optional(),
  }),
  /** Only the fields that changed are present. */
  UserProfileUpdated: z.object({
    name: z.string().min(1).max(NAME_MAX_LENGTH).optional(),
    avatarUrl: z.string().nullable().optional(),
    preferences: preferencesSchema.optional(),
    updatedAt: z.string(),
  }),
  UserEmailChanged: z.object({ previousEmail: z.string(), email: z.email(), changedAt: z.string() }),
  /** Only the newest request counts; its token is `<userId>.<secret>`, of which only sha256(secret) is kept. */
  PasswordResetRequested: z.object({ tokenHash: sha256Hex, expiresAt: z.string(), requestedAt: z.string() }),
  /** Consumes the pending request; JWTs issued (iat, epoch seconds) before `tokensValidAfter` are refused. */
  PasswordResetCompleted: z.object({ tokenHash: sha256Hex, passwordHash: scrypt, tokensValidAfter: z.number().int(), resetAt: z.string() }),
  /**
   * A verification mail went to `email`; the address counts as unverified until the token comes
   * back. Only the newest request counts; its token is `<userId>.<secret>`, of which only
   * sha256(secret) is kept (as for password resets).
   */
  EmailVerificationRequested: z.object({ email: z.email(), tokenHash: sha256Hex, expiresAt: z.string(), requestedAt: z.string() }),
  /** The token came back: `email` is proven to belong to this account; consumes the request. */
  EmailVerified: z.object({ email: z.email(), tokenHash: sha256Hex, verifiedAt: z.string() }),
  /**
   * An account that never proved an address outlived UNVERIFIED_ACCOUNT_TTL_HOURS and someone
   * else registered its email: the reservation of `email` is released, the account can no
   * longer sign in, and tokens issued before `tokensValidAfter` are refused.
   */
  UnverifiedAccountExpired: z.object({ email: z.string(), tokensValidAfter: z.number().int(), expiredAt: z.string() }),
  /**
   * Pre-hijacking defence (issue 37): whoever proved control of `email` (the verification or
   * reset link mailed to it) chose to start over instead of taking an account whose password
   * someone else set. The never-verified account loses the address and every credential (sessions
   * before `tokensValidAfter`, API keys, CLI tokens: it no longer authenticates); the address goes
   * to a new account. `via` names the link that proved it.
   */
  UnverifiedAccountDisowned: z.object({ email: z.string(), via: z.enum(['email_verification', 'password_reset']), tokensValidAfter: z.number().int(), disownedAt: z.string() }),
  ActiveScopeSwitched: z.object({ orgId: z.string().nullable(), workspaceId: z.string().nullable(), switchedAt: z.string() }),
  SocialIdentityLinked: socialIdentity.extend({ linkedAt: z.string() }),
  ApiKeyCreated: z.object({
    keyId: z.string(),
    name: z.string().min(1).max(API_KEY_NAME_MAX_LENGTH),
    secretHash: sha256Hex,
    /** `fsk_<keyId>`: what the key starts with, to recognise it in a list. */
    prefix: z.string(),
    /** The secret's last four characters, to tell keys apart; 4 of 43 base64url characters. */
    lastFour: z.string().length(4),
    scopes: z.array(z.enum(PERMISSIONS)),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
  }),
  ApiKeyRevoked: z.object({ keyId: z.string(), revokedAt: z.string() }),
  /** The user's own key for a provider (personal workspace); replaces any earlier one. */
  UserLlmCredentialSet: z.object({
    provider: userLlmProviderSchema,
    /** SealedBox output (`v1.…`), never the key. */
    sealedApiKey: z.string().startsWith('v1.'),
    baseUrl: z.string().nullable(),
    at: z.string(),
  }),
  UserLlmCredentialRemoved: z.object({ provider: userLlmProviderSchema, at: z.string() }),
};

export type UserEvent = EventsOf<typeof userEventSchemas>;

export type UserEventOf<K extends UserEvent['type']> = Extract<UserEvent, { type: K }>;
