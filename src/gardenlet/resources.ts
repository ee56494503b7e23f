// reconciler.ts imports the resource table from here until its imports name src/apis/refs.ts.
export { Refs } from '../apis/refs.js';
