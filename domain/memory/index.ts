export * from './decide.js';
export * from './events.js';
export * from './limits.js';
export * from './rank.js';
export * from './text.js';
export * from './operations.js';
export * from './filter.js';
