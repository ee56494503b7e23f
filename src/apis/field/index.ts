export * from './errors.js';
export * from './path.js';
export * from './status.js';
