import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Projects so unit tests never wait for a control plane: the integration project's global setup (etcd +
    // kube-apiserver, shared by its files) runs only when one of its files is selected. `npm test` runs all three.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/integration/**', 'test/kind/**'],
        },
      },
      {
        extends: true,
        test: {
          // A kind cluster in Docker with the chart (test/kind): minutes, not seconds; no shared control plane.
          name: 'kind',
          include: ['test/kind/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
