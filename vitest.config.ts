import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The kind project's file first: it shares the first group with the unit files and takes longest (Docker images, two
 * kind clusters), mostly waiting on Docker and its clusters, while the unit files run beside it.
 */
class KindFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => f.project.name === 'kind'), ...sorted.filter((f) => f.project.name !== 'kind')];
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Projects so unit tests never wait for a control plane: the integration project's global setup (etcd +
    // kube-apiserver, shared by its files) runs only when one of its files is selected. `npm test` runs all three:
    // the unit and kind files first, then the integration files one at a time (each starts its own seed Nodes and
    // shoots; two at once on a 2-core machine would only slow each other beyond their deadlines). Projects of one
    // group share its worker count: three, so that the kind seed's e2e takes one for its whole run (mostly waiting
    // on Docker) and the unit files two.
    sequence: { sequencer: KindFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          maxWorkers: 3,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/integration/**', 'test/kind/**'],
        },
      },
      {
        extends: true,
        test: {
          // A kind cluster in Docker with the chart (test/kind): minutes, not seconds; no shared control plane.
          name: 'kind',
          sequence: { groupOrder: 0 },
          maxWorkers: 3,
          include: ['test/kind/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          maxWorkers: 1,
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
