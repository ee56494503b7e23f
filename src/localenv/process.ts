// machine.ts imports the host toolkit from here until its imports name src/system.
export * from '../system/process.js';
