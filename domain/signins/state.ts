import type { SocialProvider } from '../users/fields.js';
import type { SignInEvent } from './events.js';

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

export const initialSignInState: SignInState = {
  status: 'none',
  provider: null,
  codeVerifierSealed: null,
  nonceSealed: null,
  redirectUri: null,
  expiresAt: null,
  userId: null,
  failureReason: null,
};

export function evolveSignIn(state: SignInState, event: SignInEvent): SignInState {
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
}
