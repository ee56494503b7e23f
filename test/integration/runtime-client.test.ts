/**
 * The runtime's ResourceClient and Informer against the real kube-apiserver: server-side apply (apply-patch+yaml),
 * merge patch, conflicts, 404s and list+watch events.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ResourceClient } from '../../src/runtime/client.js';
import { isAlreadyExists, isConflict } from '../../src/runtime/errors.js';
import { Refs } from '../../src/apis/refs.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

type ConfigMap = KubernetesObject & { data?: Record<string, string> };

describe('ResourceClient and Informer on a real API server', () => {
  it('applies, patches, conflicts, deletes, and the informer sees it all', async () => {
    const namespace = await newTestNamespace('runtime-client');
    const client = new ResourceClient(kubeConfig());
    onTestFinished(() => client.close());
    const cm = Refs.configMap;

    const informer = new Informer<ConfigMap>({ client, ref: cm, namespace, logger: silentLogger() });
    const events: string[] = [];
    informer.onAdd((o) => events.push(`add ${o.metadata?.name}`));
    informer.onUpdate((o) =>
      events.push(
        `update ${o.metadata?.name} ${Object.keys(o.data ?? {})
          .sort()
          .join(',')}`,
      ),
    );
    informer.onDelete((o) => events.push(`delete ${o.metadata?.name}`));
    onTestFinished(() => informer.stop());
    await informer.start();

    const applied = await client.apply<ConfigMap>(
      cm,
      { metadata: { name: 'a', namespace }, data: { owner: 'runtime' } },
      { fieldManager: 'runtime-test' },
    );
    expect(applied.metadata?.managedFields?.[0]?.manager).toBe('runtime-test');
    expect(await client.get(cm, 'missing', namespace)).toBeUndefined();
    expect(
      isAlreadyExists(await client.create(cm, { metadata: { name: 'a', namespace } }).catch((e: unknown) => e)),
    ).toBe(true);

    await client.mergePatch(cm, 'a', namespace, { data: { extra: 'x' } });
    expect(isConflict(await client.update(cm, applied).catch((e: unknown) => e))).toBe(true);

    expect(await client.delete(cm, 'a', namespace)).toBe(true);
    expect(await client.delete(cm, 'a', namespace)).toBe(false);

    await waitFor(() => events.length >= 3 && events.at(-1) === 'delete a', {
      timeoutMs: 10_000,
      message: 'watch events',
    });
    expect(events).toEqual(['add a', 'update a extra,owner', 'delete a']);
  });
});
