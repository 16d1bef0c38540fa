import { createHash } from 'node:crypto';
import { DomainError } from '../domain/shared/decider.js';
import { signInDecider, signInStreamId, type SignInState } from '../domain/signins/index.js';
import type { SocialProvider } from '../domain/users/fields.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, handleCommand, type CommandContext } from './handle.js';

/**
 * The sign-in id is a hash of the OAuth `state`: the state never appears in the log, and knowing
 * a stream id (from the audit log) does not let anyone forge a state that reaches it.
 */
export function signInIdForState(state: string): string {
  return createHash('sha256').update(`signin\u0000${state}`).digest('hex').slice(0, 40);
}

export interface StartSignInInput {
  signInId: string;
  provider: SocialProvider;
  codeVerifierSealed: string;
  nonceSealed: string | null;
  redirectUri: string;
  expiresAt: string;
}

export async function startSocialSignIn(store: EventStore, context: CommandContext, input: StartSignInInput) {
  return handleCommand(store, {
    streamId: signInStreamId(input.signInId),
    decider: signInDecider,
    command: { type: 'StartSocialSignIn', ...input, at: context.now.toISOString() },
    context,
    maxAttempts: 1,
  });
}

/**
 * Consumes the state: exactly one callback gets past this (the append is conditional on the
 * stream's revision, so a concurrent second one re-decides and is refused). Answers what the
 * exchange needs; an expired or misdirected attempt is recorded as failed, then refused.
 */
export async function receiveSocialSignInCallback(
  store: EventStore,
  context: CommandContext,
  signInId: string,
  provider: SocialProvider,
): Promise<SignInState> {
  const result = await handleAtContextTime(store, context, signInStreamId(signInId), signInDecider, { type: 'ReceiveSocialSignInCallback', provider });
  if (result.state.status !== 'callback_received') {
    const expired = result.state.failureReason === 'STATE_EXPIRED';
    throw new DomainError('INVALID_STATE', expired ? 'this sign-in attempt has expired; start again' : 'this sign-in state is not valid here', 'invalid', {
      field: 'query.state',
    });
  }
  return result.state;
}

export async function completeSocialSignIn(store: EventStore, context: CommandContext, signInId: string, outcome: { userId: string; created: boolean }) {
  return handleAtContextTime(store, context, signInStreamId(signInId), signInDecider, { type: 'CompleteSocialSignIn', ...outcome });
}

export async function failSocialSignIn(store: EventStore, context: CommandContext, signInId: string, reason: string, detail: string | null = null) {
  return handleAtContextTime(store, context, signInStreamId(signInId), signInDecider, { type: 'FailSocialSignIn', reason, detail });
}
