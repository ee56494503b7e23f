// reconciler.ts imports these from here until its imports name src/runtime/last-operation.ts.
export * from '../runtime/last-operation.js';
