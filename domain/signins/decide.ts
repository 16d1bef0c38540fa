import { DomainError } from '../shared/decider.js';
import type { SocialProvider } from '../users/fields.js';
import type { SignInEvent } from './events.js';
import type { SignInState } from './state.js';

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

function failed(reason: string, detail: string | null, at: string): SignInEvent {
  return { type: 'SocialSignInFailed', data: { reason, detail, failedAt: at } };
}

export function decideSignIn(command: SignInCommand, state: SignInState): SignInEvent[] {
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
}
