export * from './cli-token.js';
export * from './device-authorization.js';
export * from './device-poll.js';
export * from './user-code.js';
