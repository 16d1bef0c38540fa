import { decider, type Decider } from '../shared/decider.js';
import { decideOperation, type OperationCommand } from './decide.js';
import { operationEventSchemas, type OperationEvent } from './events.js';
import { evolveOperation, initialOperationState, type OperationState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

export const operationDecider: Decider<OperationCommand, OperationState, OperationEvent> = decider(initialOperationState, evolveOperation, decideOperation, operationEventSchemas);
