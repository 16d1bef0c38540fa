import { decider, type Decider } from '../shared/decider.js';
import { decideApp, type AppCommand } from './decide.js';
import { appEventSchemas, type AppEvent } from './events.js';
import { evolveApp, initialAppState, type AppState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './limits.js';
export * from './contract.js';
export * from './scaffold.js';
export * from './packages.js';

/** One stream per app (`app-<id>`): its files, contract, linked flow and versions. */
export const appDecider: Decider<AppCommand, AppState, AppEvent> = decider(initialAppState, evolveApp, decideApp, appEventSchemas);
