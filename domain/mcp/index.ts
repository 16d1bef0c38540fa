export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './backoff.js';
export * from './input.js';
