import { decider, type Decider } from '../shared/decider.js';
import { decideSignIn, type SignInCommand } from './decide.js';
import { signInEventSchemas, type SignInEvent } from './events.js';
import { evolveSignIn, initialSignInState, type SignInState } from './state.js';

export { signInEventSchemas, type SignInEvent } from './events.js';
export { evolveSignIn, initialSignInState, type SignInState, type SignInStatus } from './state.js';
export { decideSignIn, type SignInCommand } from './decide.js';

/**
 * A social sign-in attempt (`signin-<id>`, the id being a hash of the OAuth `state`): started by
 * the redirect to the provider, consumed by exactly one callback, then completed or failed. The
 * stream makes a state single-use in every API process and puts each attempt in the audit log.
 */
export const SOCIAL_SIGNIN_TTL_SECONDS = 600;

export const signInStreamId = (signInId: string) => `signin-${signInId}`;

export const signInDecider: Decider<SignInCommand, SignInState, SignInEvent> = decider(initialSignInState, evolveSignIn, decideSignIn, signInEventSchemas);
