import { decider, type Decider } from '../shared/decider.js';
import { decideAppInstance, type AppInstanceCommand } from './decide.js';
import { appInstanceEventSchemas, type AppInstanceEvent } from './events.js';
import { evolveAppInstance, initialAppInstanceState, type AppInstanceState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './json-ops.js';
export * from './types.js';

/**
 * An app instance (`appinstance-<id>`): a running copy of an app tool holding a team's data (typed
 * by a JSON Schema), its files (kept in the object store, keys in the events), linked flows and a
 * conversation.
 */
export const appInstanceDecider: Decider<AppInstanceCommand, AppInstanceState, AppInstanceEvent> = decider(
  initialAppInstanceState,
  evolveAppInstance,
  decideAppInstance,
  appInstanceEventSchemas,
);
