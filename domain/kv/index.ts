export * from './url.js';
export * from './presets.js';
