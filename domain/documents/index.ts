export * from './events.js';
export * from './decide.js';
export * from './rules.js';
export * from './schema.js';
export * from './query.js';
export { PersistentMap } from './pmap.js';
