/**
 * A Seed with shoots on it is not deleted, as in Gardener: the gardenlet holds the finalizer `gardener` on its Seed
 * and removes it only once no Shoot references the seed, against the real API server.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Seed } from '../../src/apis/core/v1beta1/seed.js';
import { Refs } from '../../src/apis/refs.js';
import { SEED_FINALIZER } from '../../src/gardenlet/seed/reconciler.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { createSeed, createShootOn, startGardenlet } from '../support/gardenlet.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const client = new ResourceClient(kubeConfig());
afterAll(() => client.close());

const getSeed = (name: string) => client.get<Seed & KubernetesObject>(Refs.seed, name);

describe('deleting a Seed', () => {
  it('waits for the shoots on it, naming them in its status, then goes', async () => {
    const seedName = await createSeed(client, seedIPv6Networks);
    const gardenlet = await startGardenlet(kubeConfig(), { seedName });
    onTestFinished(() => gardenlet.stop());
    await waitFor(async () => (await getSeed(seedName))?.metadata.finalizers?.includes(SEED_FINALIZER), {
      message: 'the seed finalizer',
    });

    const namespace = await newTestNamespace('garden-seeddel');
    await createShootOn(client, namespace, 'a', seedName);
    await createShootOn(client, namespace, 'b', seedName);
    await client.delete(Refs.seed, seedName);
    const kept = await waitFor(
      async () => {
        const seed = await getSeed(seedName);
        return seed?.status?.lastOperation?.type === 'Delete' && seed;
      },
      { message: 'the seed to report its shoots' },
    );
    expect(kept.metadata.deletionTimestamp).toBeDefined();
    expect(kept.metadata.finalizers).toContain(SEED_FINALIZER);
    expect(kept.status?.lastOperation).toMatchObject({
      state: 'Error',
      description:
        `Cannot delete Seed because the following Shoots are still referencing it: ${namespace}/a, ${namespace}/b; ` +
        'it is deleted once they are gone',
    });

    await client.delete(Refs.shoot, 'a', namespace);
    await waitFor(
      async () =>
        (await getSeed(seedName))?.status?.lastOperation?.description?.endsWith(
          `${namespace}/b; it is deleted once they are gone`,
        ),
      { message: 'the seed to name the one shoot left' },
    );
    expect((await getSeed(seedName))?.metadata.finalizers).toContain(SEED_FINALIZER);

    await client.delete(Refs.shoot, 'b', namespace);
    await waitFor(async () => (await getSeed(seedName)) === undefined, {
      timeoutMs: 30_000,
      message: 'the seed to be gone once its last shoot is',
    });
  });

  it('goes at once when no shoot is on it', async () => {
    const seedName = await createSeed(client, seedIPv6Networks);
    const gardenlet = await startGardenlet(kubeConfig(), { seedName });
    onTestFinished(() => gardenlet.stop());
    await waitFor(async () => (await getSeed(seedName))?.metadata.finalizers?.includes(SEED_FINALIZER), {
      message: 'the seed finalizer',
    });
    await client.delete(Refs.seed, seedName);
    await waitFor(async () => (await getSeed(seedName)) === undefined, { message: 'the seed to be gone' });
  });
});
