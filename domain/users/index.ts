import { decider, type Decider } from '../shared/decider.js';
import { decideUser, type UserCommand } from './decide.js';
import { userEventSchemas, type UserEvent } from './events.js';
import { evolveUser, initialUserState, type UserState } from './state.js';

export * from './events.js';
export * from './fields.js';
export * from './state.js';
export { decideUser, type UserCommand } from './decide.js';
export { activeApiKeyCount, type ApiKeyCommand } from './api-keys.js';
export * from './llm-credentials.js';
export * from './verification.js';

export const userStreamId = (userId: string) => `user-${userId}`;

/** The user aggregate (`user-<id>`); see decide.ts for what it decides and what it leaves to the command layer. */
export const userDecider: Decider<UserCommand, UserState, UserEvent> = decider(initialUserState, evolveUser, decideUser, userEventSchemas);
