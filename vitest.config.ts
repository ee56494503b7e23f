import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The kind project's file first: it shares the second group with the integration files and takes longest (Docker
 * images, two kind clusters), mostly waiting on Docker and its clusters, while the integration files run beside it.
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
    // the unit files first, then the kind seed's e2e beside the integration files. Projects of one group share its
    // worker count: two for the second, so that the kind file (mostly waiting on Docker) takes one for its whole run
    // while the integration files take turns on the other; they run one at a time however many workers are free
    // (test/support/one-file-at-a-time.ts: each starts its own seed Nodes and shoots, and two at once on a 2-core
    // machine would only slow each other beyond their deadlines).
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
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
          include: ['test/kind/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/one-file-at-a-time.ts'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
