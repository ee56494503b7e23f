/**
 * The machine agent's watch client (api-client.ts `watchJSON`) and its change tracking (resource-changes.ts) against
 * the shared kube-apiserver: what the node sync relies on to read the Nodes only when they changed.
 */
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  requestJSON,
  watchJSON,
  type APIServerAccess,
  type ClientCredentials,
} from '../../src/extensions/provider-local/machine/api-client.js';
import { ResourceChanges, watchPath } from '../../src/extensions/provider-local/machine/resource-changes.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

interface Item {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

// Annotations count as a change, data does not (as the node sync leaves the Nodes' heartbeats out).
const relevant = (o: Item) => JSON.stringify(o.metadata.annotations ?? {});

describe('watchJSON against a real API server', () => {
  function access(): { server: APIServerAccess; credentials: ClientCredentials } {
    const kc = kubeConfig();
    const cluster = kc.getCurrentCluster()!;
    const user = kc.getCurrentUser()!;
    const pem = (b64: string | undefined) => Buffer.from(b64!, 'base64').toString();
    return {
      server: { url: cluster.server, caPEM: pem(cluster.caData) },
      credentials: { certPEM: pem(user.certData), keyPEM: pem(user.keyData) },
    };
  }

  it('tells a ConfigMap change that matters, not one that does not, and ends on abort', async () => {
    const ns = await newTestNamespace('changes');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const { server, credentials } = access();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const lines: string[] = [];
    let events = 0;
    const changes = new ResourceChanges<Item>(
      path,
      relevant,
      (rv, onEvent, signal) =>
        watchJSON<Item>(
          server,
          credentials,
          watchPath(path, rv),
          (e) => {
            onEvent(e);
            if (e.type !== 'BOOKMARK') events++;
          },
          signal,
        ),
      (l) => lines.push(l),
    );
    onTestFinished(() => changes.stop());
    const list = async () => {
      changes.listing();
      const l = await requestJSON<{ items: Item[]; metadata: { resourceVersion: string } }>(
        server,
        credentials,
        'GET',
        path,
      );
      changes.listed(l.items, l.metadata.resourceVersion);
    };
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' }, data: { beat: '0' } } });
    await list();
    expect(changes.hasChanged).toBe(false);

    const update = async (change: (cm: V1ConfigMap) => void) => {
      const cm = await core.readNamespacedConfigMap({ name: 'a', namespace: ns });
      change(cm);
      await core.replaceNamespacedConfigMap({ name: 'a', namespace: ns, body: cm });
    };
    await update((cm) => (cm.data = { beat: '1' }));
    await waitFor(() => events === 1, { message: 'the data change to arrive' });
    expect(changes.hasChanged).toBe(false);

    await update((cm) => (cm.metadata!.annotations = { overlay: 'fd00::1' }));
    await waitFor(() => changes.hasChanged, { message: 'the annotation to count as a change' });
    await list();
    expect(changes.hasChanged).toBe(false);
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: ns });
    await waitFor(() => changes.hasChanged, { message: 'the deletion to count as a change' });
    expect(lines).toEqual([]);
  });

  it('rejects with the HTTP status when the watch is refused', async () => {
    const { server } = access();
    const nobody = { certPEM: '', keyPEM: '' };
    await expect(
      watchJSON(server, nobody, '/api/v1/nodes?watch=1', () => {}, AbortSignal.timeout(10_000)),
    ).rejects.toThrow(/HTTP 40[13]/);
  });
});
