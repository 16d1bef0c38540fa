import { DomainError, type Decider } from '../shared/decider.js';
import type { SocialProvider } from '../users/fields.js';
import { signInEventSchemas, type SignInEvent } from './events.js';

export { signInEventSchemas, type SignInEvent } from './events.js';

/**
 * A social sign-in attempt (`signin-<id>`, the id being a hash of the OAuth `state`): started by
 * the redirect to the provider, consumed by exactly one callback, then completed or failed. The
 * stream makes a state single-use in every API process and puts each attempt in the audit log.
 */
export const SOCIAL_SIGNIN_TTL_SECONDS = 600;

export type SignInStatus = 'none' | 'started' | 'callback_received' | 'completed' | 'failed';

export interface SignInState {
  status: SignInStatus;
  provider: SocialProvider | null;
  codeVerifierSealed: string | null;
  nonceSealed: string | null;
  redirectUri: string | null;
  expiresAt: string | null;
  userId: string | null;
  failureReason: string | null;
}

export type SignInCommand =
  | {
      type: 'StartSocialSignIn';
      signInId: string;
      provider: SocialProvider;
      codeVerifierSealed: string;
      nonceSealed: string | null;
      redirectUri: string;
      at: string;
      expiresAt: string;
    }
  /** The provider sent the browser back with this attempt's state. */
  | { type: 'ReceiveSocialSignInCallback'; provider: SocialProvider; at: string }
  | { type: 'CompleteSocialSignIn'; userId: string; created: boolean; at: string }
  | { type: 'FailSocialSignIn'; reason: string; detail: string | null; at: string };

const invalidState = (message: string) => new DomainError('INVALID_STATE', message, 'invalid', { field: 'query.state' });

export const signInDecider: Decider<SignInCommand, SignInState, SignInEvent> = {
  initialState: {
    status: 'none',
    provider: null,
    codeVerifierSealed: null,
    nonceSealed: null,
    redirectUri: null,
    expiresAt: null,
    userId: null,
    failureReason: null,
  },
  eventSchemas: signInEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'SocialSignInStarted': {
        const { provider, codeVerifierSealed, nonceSealed, redirectUri, expiresAt } = event.data;
        return { ...state, status: 'started', provider, codeVerifierSealed, nonceSealed, redirectUri, expiresAt };
      }
      case 'SocialSignInCallbackReceived':
        return { ...state, status: 'callback_received' };
      case 'SocialSignInCompleted':
        return { ...state, status: 'completed', userId: event.data.userId };
      case 'SocialSignInFailed':
        return { ...state, status: 'failed', failureReason: event.data.reason };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'StartSocialSignIn': {
        if (state.status !== 'none') throw new DomainError('SIGNIN_EXISTS', 'this sign-in attempt already exists', 'conflict');
        const { signInId, provider, codeVerifierSealed, nonceSealed, redirectUri, at, expiresAt } = command;
        return [{ type: 'SocialSignInStarted', data: { signInId, provider, codeVerifierSealed, nonceSealed, redirectUri, startedAt: at, expiresAt } }];
      }
      case 'ReceiveSocialSignInCallback': {
        if (state.status === 'none') throw invalidState('unknown sign-in state');
        if (state.status !== 'started') throw invalidState('this sign-in state was already used');
        // A callback that arrives too late, or at the other provider's URL, closes the attempt.
        if (command.provider !== state.provider) return [failed('PROVIDER_MISMATCH', command.provider, command.at)];
        if (Date.parse(command.at) >= Date.parse(state.expiresAt!)) return [failed('STATE_EXPIRED', null, command.at)];
        return [{ type: 'SocialSignInCallbackReceived', data: { receivedAt: command.at } }];
      }
      case 'CompleteSocialSignIn':
        if (state.status !== 'callback_received') {
          throw new DomainError('SIGNIN_NOT_IN_PROGRESS', `a sign-in attempt that is ${state.status} cannot complete`, 'conflict');
        }
        return [{ type: 'SocialSignInCompleted', data: { userId: command.userId, created: command.created, completedAt: command.at } }];
      case 'FailSocialSignIn':
        // Nothing to record for an attempt that never started or already ended.
        if (state.status !== 'started' && state.status !== 'callback_received') return [];
        return [failed(command.reason, command.detail, command.at)];
    }
  },
};

function failed(reason: string, detail: string | null, at: string): SignInEvent {
  return { type: 'SocialSignInFailed', data: { reason, detail, failedAt: at } };
}

export const signInStreamId = (signInId: string) => `signin-${signInId}`;
