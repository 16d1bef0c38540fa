import { decider, type Decider } from '../shared/decider.js';
import { decideSession, type MessagingCommand } from './decide.js';
import { messagingEventSchemas, type MessagingEvent } from './events.js';
import { evolveSession, initialSessionState, type MessagingSessionState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './addresses.js';

/** The session aggregate (`msgsession-<sessionId>`). */
export const messagingDecider: Decider<MessagingCommand, MessagingSessionState, MessagingEvent> = decider(initialSessionState, evolveSession, decideSession, messagingEventSchemas);
