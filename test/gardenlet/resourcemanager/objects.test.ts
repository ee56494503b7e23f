import { describe, expect, it } from 'vitest';
import {
  applyOrder,
  decodeManifests,
  healthOf,
  prepareObjects,
  referenceKey,
  toPrune,
} from '../../../src/gardenlet/resourcemanager/objects.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('decodeManifests', () => {
  it('reads every document of every key, skipping empty ones', () => {
    const { objects, errors } = decodeManifests([
      {
        name: 's',
        data: {
          'b.yaml': b64(
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n',
          ),
          'a.yaml': b64('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}'),
        },
      },
    ]);
    expect(errors).toEqual([]);
    expect(objects.map((o) => `${o.kind}/${o.metadata!.name}`)).toEqual(['ConfigMap/a', 'ConfigMap/b', 'Secret/c']);
  });

  it('names the secret and key of what is not an object, lacks a field, or appears twice', () => {
    const { errors } = decodeManifests([
      {
        name: 's',
        data: {
          'list.yaml': b64('- a\n'),
          'nokind.yaml': b64('apiVersion: v1\nmetadata:\n  name: x\n'),
          'broken.yaml': b64('kind: [\n'),
          'one.yaml': b64('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n'),
          'two.yaml': b64('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n'),
        },
      },
    ]);
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/^secret s key broken.yaml: /);
    expect(errors).toContain('secret s key list.yaml: not an object');
    expect(errors).toContain('secret s key nokind.yaml: kind missing');
    expect(errors).toContain('ConfigMap d appears 2 times');
  });
});

describe('prepareObjects', () => {
  it('adds the injected labels and the origin, and leaves the input alone', () => {
    const input = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { x: '1' } } }];
    const [out] = prepareObjects(input, { injectLabels: { y: '2' }, origin: 'shoot:ns/mr' });
    expect(out!.metadata!.labels).toEqual({ x: '1', y: '2' });
    expect(out!.metadata!.annotations).toEqual({ 'resources.gardener.cloud/origin': 'shoot:ns/mr' });
    expect(input[0]!.metadata).toEqual({ name: 'a', labels: { x: '1' } });
  });
});

describe('applyOrder and toPrune', () => {
  it('puts namespaces, definitions and identities before workloads and custom objects, stably', () => {
    const kinds = ['IPPool', 'Deployment', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace', 'ConfigMap'];
    expect(applyOrder(kinds.map((kind) => ({ kind }))).map((o) => o.kind)).toEqual([
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRoleBinding',
      'ConfigMap',
      'IPPool',
      'Deployment',
    ]);
  });

  it('prunes what was applied and is no longer wanted, whatever version names it', () => {
    const previous = [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', namespace: 'n' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', namespace: 'n' },
    ];
    const desired = [{ apiVersion: 'apps/v1beta2', kind: 'Deployment', name: 'a', namespace: 'n' }];
    expect(toPrune(previous, desired).map(referenceKey)).toEqual(['ConfigMap n/b']);
  });
});

describe('healthOf', () => {
  const deployment = (status: Record<string, unknown>, generation = 2) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'n', generation },
    spec: { replicas: 2 },
    status,
  });

  it('judges workloads by ready and updated replicas and the observed generation', () => {
    expect(healthOf(deployment({ observedGeneration: 2, readyReplicas: 1, updatedReplicas: 2 }))).toEqual({
      healthy: false,
      progressing: true,
      message: 'Deployment n/d: 1/2 replicas ready',
    });
    expect(healthOf(deployment({ observedGeneration: 1, readyReplicas: 2, updatedReplicas: 2 })).progressing).toBe(
      true,
    );
    expect(healthOf(deployment({ observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2 }))).toEqual({
      healthy: true,
      progressing: false,
    });
    const ds = { kind: 'DaemonSet', metadata: { name: 'x' }, status: { desiredNumberScheduled: 3, numberReady: 2 } };
    expect(healthOf(ds).healthy).toBe(false);
  });

  it('is progressing while pods of an earlier template are left', () => {
    // A surge: the new pods ready, an old one not gone yet.
    expect(healthOf(deployment({ observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 2 }))).toEqual({
      healthy: true,
      progressing: true,
      message: 'Deployment n/d: pods of an earlier template left',
    });
    const statefulSet = (currentRevision: string) => ({
      kind: 'StatefulSet',
      metadata: { name: 's', namespace: 'n', generation: 1 },
      spec: { replicas: 1 },
      status: { observedGeneration: 1, readyReplicas: 1, updatedReplicas: 1, currentRevision, updateRevision: 's-2' },
    });
    expect(healthOf(statefulSet('s-1')).progressing).toBe(true);
    expect(healthOf(statefulSet('s-2'))).toEqual({ healthy: true, progressing: false });
  });

  it('wants definitions established and takes other kinds as healthy', () => {
    const crd = (status: string) => ({
      kind: 'CustomResourceDefinition',
      metadata: { name: 'c' },
      status: { conditions: [{ type: 'Established', status }] },
    });
    expect(healthOf(crd('False')).healthy).toBe(false);
    expect(healthOf(crd('True')).healthy).toBe(true);
    expect(healthOf({ kind: 'ConfigMap', metadata: { name: 'x' } })).toEqual({ healthy: true, progressing: false });
  });
});
