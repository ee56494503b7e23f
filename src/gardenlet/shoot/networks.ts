// reconciler.ts imports these from here until its imports name src/apis/core/v1beta1/networks.ts.
export * from '../../apis/core/v1beta1/networks.js';
