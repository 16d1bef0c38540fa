export * from './events.js';
export * from './decider.js';
export * from './rules.js';
export * from './schema.js';
export * from './query.js';
export { PersistentMap } from './pmap.js';
