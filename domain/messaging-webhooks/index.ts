export * from './events.js';
export * from './webhook.js';
export * from './delivery.js';
export * from './retry.js';
export * from './payload.js';
