import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { SOCIAL_PROVIDERS } from '../users/fields.js';

/** A failure reason is one of our stable codes; `detail` may carry the provider's own short code. */
const reasonSchema = z.string().regex(/^[A-Z][A-Z0-9_]{1,63}$/);
const sealedSchema = z.string().regex(/^v1\./, 'must be a SealedBox value');

export const signInEventSchemas = {
  /**
   * The PKCE verifier and the nonce are needed in clear at the callback, so they are sealed (never
   * stored in clear); the state itself is not stored at all: the stream id is its hash.
   */
  SocialSignInStarted: z.object({
    signInId: z.string(),
    provider: z.enum(SOCIAL_PROVIDERS),
    codeVerifierSealed: sealedSchema,
    nonceSealed: sealedSchema.nullable(),
    redirectUri: z.string().url(),
    startedAt: z.string(),
    expiresAt: z.string(),
  }),
  /** The state was presented once: from here on any other callback with it is refused. */
  SocialSignInCallbackReceived: z.object({ receivedAt: z.string() }),
  SocialSignInCompleted: z.object({ userId: z.string(), created: z.boolean(), completedAt: z.string() }),
  SocialSignInFailed: z.object({ reason: reasonSchema, detail: z.string().max(100).nullable(), failedAt: z.string() }),
};

export type SignInEvent = EventsOf<typeof signInEventSchemas>;
