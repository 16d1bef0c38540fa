export * from './events.js';
export * from './map.js';
