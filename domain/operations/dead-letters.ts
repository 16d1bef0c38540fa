import { decider, type Decider } from '../shared/decider.js';
import { decide, type DeadLetterCommand } from './decide-dead-letters.js';
import { deadLetterEventSchemas, type DeadLetterEvent } from './events-dead-letters.js';
import { evolve, initialState, type DeadLetterState } from './state-dead-letters.js';

export * from './events-dead-letters.js';
export * from './state-dead-letters.js';
export * from './decide-dead-letters.js';

export const deadLetterDecider: Decider<DeadLetterCommand, DeadLetterState, DeadLetterEvent> = decider(initialState, evolve, decide, deadLetterEventSchemas);
