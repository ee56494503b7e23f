/**
 * The gardenlet's wait for an extension resource on the real API server: "not yet" while an extension may still
 * pick it up, an error naming the missing extension once nobody has reconciled it for the pickup timeout after its
 * last change.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { EXTENSION_PICKUP_TIMEOUT_MS, waitExtensionReady } from '../../src/gardenlet/apply.js';
import { NotReadyError } from '../../src/gardenlet/component.js';
import { Refs } from '../../src/apis/refs.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { realClock, type Clock } from '../../src/runtime/clock.js';
import { networkObject } from '../fixtures/objects.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';

const client = new ResourceClient(kubeConfig());
const ctx = { signal: AbortSignal.timeout(30_000) };
/** The real time, moved past the pickup timeout. */
const later: Clock = { ...realClock, now: () => Date.now() + EXTENSION_PICKUP_TIMEOUT_MS + 5_000 };

describe('waiting for an extension resource', () => {
  it('is "not yet" at first, and an error naming the missing extension after the pickup timeout', async () => {
    const namespace = await newTestNamespace();
    const network = networkObject({ type: 'cilium' }, { name: 'n', namespace });
    await client.create(Refs.network, network as KubernetesObject);

    const wait = (clock: Clock) => waitExtensionReady(client, Refs.network, 'n', namespace, ctx, { clock });
    await expect(wait(realClock)).rejects.toBeInstanceOf(NotReadyError);
    const error = await wait(later).catch((e: unknown) => e as Error);
    expect(error).not.toBeInstanceOf(NotReadyError);
    expect((error as Error).message).toBe(
      `Network ${namespace}/n was not reconciled within 120s of its last change: no extension for Network type ` +
        '"cilium" seems to run in this installation',
    );

    // Once an extension reports success the wait is over, however late.
    await client.mergePatch(
      Refs.network,
      'n',
      namespace,
      {
        status: {
          observedGeneration: 1,
          lastOperation: {
            type: 'Reconcile',
            state: 'Succeeded',
            progress: 100,
            description: 'ok',
            lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        },
      },
      { subresource: 'status' },
    );
    await expect(wait(later)).resolves.toBeUndefined();
  });

  it('gives an extension the whole timeout after the last change', async () => {
    const namespace = await newTestNamespace();
    await client.create(Refs.network, networkObject({}, { name: 'n', namespace }) as KubernetesObject);
    const soon: Clock = { ...realClock, now: () => Date.now() + 60_000 };
    // One minute later is within the timeout of a fresh change.
    await expect(waitExtensionReady(client, Refs.network, 'n', namespace, ctx, { clock: soon })).rejects.toBeInstanceOf(
      NotReadyError,
    );
  });

  it("waits for the extension to answer a deploy's operation annotation, an earlier success notwithstanding", async () => {
    const namespace = await newTestNamespace();
    await client.create(Refs.network, networkObject({}, { name: 'n', namespace }) as KubernetesObject);
    const succeeded = {
      status: {
        observedGeneration: 1,
        lastOperation: {
          type: 'Reconcile',
          state: 'Succeeded',
          progress: 100,
          description: 'ok',
          lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      },
    };
    await client.mergePatch(Refs.network, 'n', namespace, succeeded, { subresource: 'status' });
    const wait = (clock: Clock = realClock) => waitExtensionReady(client, Refs.network, 'n', namespace, ctx, { clock });
    await expect(wait()).resolves.toBeUndefined();
    await client.mergePatch(Refs.network, 'n', namespace, {
      metadata: { annotations: { 'gardener.cloud/operation': 'reconcile' } },
    });
    const error = await wait().catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(NotReadyError);
    expect(error?.message).toContain('operation annotation');
    // Nobody answers it within the pickup timeout: no extension runs.
    expect(await wait(later).catch((e: unknown) => e)).not.toBeInstanceOf(NotReadyError);
    await client.mergePatch(Refs.network, 'n', namespace, {
      metadata: { annotations: { 'gardener.cloud/operation': null } },
    });
    await expect(wait()).resolves.toBeUndefined();
  });
});
