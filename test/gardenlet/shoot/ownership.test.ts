import type { V1Namespace } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import { seedNamespaceName, shootLabels } from '../../../src/apis/core/v1beta1/names.js';
import { desiredSeedNamespace } from '../../../src/gardenlet/shoot/components/namespace.js';
import {
  classifySeedNamespace,
  describeOwner,
  namespaceOwner,
  SeedNamespaceOwnedError,
} from '../../../src/gardenlet/shoot/ownership.js';

function shoot(namespace: string, name: string, uid?: string): Shoot {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace, ...(uid ? { uid } : {}) },
    spec: {},
  };
}

// Shoot "x--yy" of project "local" and shoot "yy" of project "local--x": one seed namespace.
const owner = shoot('garden-local--x', 'yy', 'uid-owner');
const other = shoot('garden-local', 'x--yy', 'uid-other');

function existing(ns: V1Namespace, extra: { deletionTimestamp?: Date } = {}): V1Namespace {
  return { ...ns, metadata: { ...ns.metadata, uid: 'ns-uid', ...extra } };
}

describe('the seed namespace of a shoot', () => {
  it('is the same for both readings of a name with "--"', () => {
    expect(seedNamespaceName(owner)).toBe('shoot--local--x--yy');
    expect(seedNamespaceName(other)).toBe('shoot--local--x--yy');
  });

  it("records its owner's UID (annotation, as Gardener's, and label) when the shoot has one", () => {
    expect(desiredSeedNamespace(owner).metadata).toEqual({
      name: 'shoot--local--x--yy',
      labels: {
        'gardener.cloud/role': 'shoot',
        'project.gardener.cloud/name': 'local--x',
        'shoot.gardener.cloud/name': 'yy',
        'shoot.gardener.cloud/uid': 'uid-owner',
      },
      annotations: { 'shoot.gardener.cloud/uid': 'uid-owner' },
    });
    expect(desiredSeedNamespace(shoot('garden-dev', 'a')).metadata?.annotations).toBeUndefined();
    expect(shootLabels(owner)['shoot.gardener.cloud/uid']).toBe('uid-owner');
    expect(shootLabels(shoot('garden-dev', 'a'))).not.toHaveProperty(['shoot.gardener.cloud/uid']);
  });
});

describe('classifySeedNamespace', () => {
  const ns = existing(desiredSeedNamespace(owner));

  it('is absent without a namespace', () => {
    expect(classifySeedNamespace(undefined, owner)).toEqual({ kind: 'absent' });
  });

  it("is the owner's by UID, and another shoot's for the other reading of the name", () => {
    expect(classifySeedNamespace(ns, owner)).toEqual({ kind: 'own', uid: 'ns-uid', terminating: false });
    expect(classifySeedNamespace(ns, other)).toEqual({
      kind: 'foreign',
      owner: { project: 'local--x', name: 'yy', uid: 'uid-owner' },
      terminating: false,
    });
  });

  it('is not the own of a former shoot of the same name (another UID)', () => {
    expect(classifySeedNamespace(ns, shoot('garden-local--x', 'yy', 'uid-new')).kind).toBe('foreign');
  });

  it('decides by the labels when the namespace was written before UIDs were recorded', () => {
    const legacy = existing({
      metadata: {
        name: 'shoot--local--x--yy',
        labels: { 'project.gardener.cloud/name': 'local--x', 'shoot.gardener.cloud/name': 'yy' },
      },
    });
    expect(classifySeedNamespace(legacy, owner).kind).toBe('own');
    expect(classifySeedNamespace(legacy, other)).toMatchObject({
      kind: 'foreign',
      owner: { project: 'local--x', name: 'yy' },
    });
    expect(classifySeedNamespace(existing({ metadata: { name: 'shoot--local--x--yy' } }), other).kind).toBe('own');
  });

  it('says when the namespace is being deleted', () => {
    const deleting = existing(desiredSeedNamespace(owner), { deletionTimestamp: new Date('2026-01-01T00:00:00Z') });
    expect(classifySeedNamespace(deleting, owner)).toMatchObject({ kind: 'own', terminating: true });
    expect(classifySeedNamespace(deleting, other)).toMatchObject({ kind: 'foreign', terminating: true });
  });
});

describe('the owner in messages', () => {
  it('names the shoot, its project and its UID as far as known', () => {
    expect(describeOwner(namespaceOwner(desiredSeedNamespace(owner)))).toBe(
      'shoot "yy" of project "local--x" (uid uid-owner)',
    );
    expect(describeOwner({ uid: 'u' })).toBe('another shoot (uid u)');
    expect(describeOwner({ name: 'a' })).toBe('shoot "a"');
    expect(new SeedNamespaceOwnedError('shoot--local--x--yy', { project: 'local--x', name: 'yy' }).message).toBe(
      'the seed namespace shoot--local--x--yy belongs to shoot "yy" of project "local--x": project and shoot names ' +
        'containing "--" map two shoots to one namespace; this shoot is not deployed (rename it, or delete it)',
    );
  });
});
