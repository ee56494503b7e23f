import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { structuralViolations, type JSONSchemaProps } from '../../../src/apis/crds.js';
import {
  desiredNetworkResources,
  InvalidProviderConfigError,
  MANAGED_RESOURCE_NAME,
  calicoStatusFields,
  SECRET_NAME,
  secretDataKey,
} from '../../../src/extensions/network/actuator.js';
import { actuatorStatusPatch } from '../../../src/extensions/common/reconciler.js';
import { managedResourceCRD } from '../../../src/apis/resources/v1alpha1/managedresource-crd.js';
import type { Manifest } from '../../../src/extensions/network/manifests.js';
import { CalicoValuesError, MissingPodCIDRError } from '../../../src/extensions/network/values.js';
import { dualStackNetwork, ipv4Network, ipv6Network, IPV4_PODS, IPV6_PODS } from './fixtures.js';

const NOW = Date.UTC(2026, 10, 21, 20, 0, 0);

describe('desiredNetworkResources', () => {
  it('puts every manifest into the Secret behind the ManagedResource extension-networking-calico', () => {
    const network = dualStackNetwork();
    const desired = desiredNetworkResources(network, { secondFamilyPodCIDR: IPV6_PODS });
    expect(desired.managedResource).toEqual({
      apiVersion: 'resources.gardener.cloud/v1alpha1',
      kind: 'ManagedResource',
      metadata: {
        name: MANAGED_RESOURCE_NAME,
        namespace: 'shoot--dev--a',
        labels: { 'app.kubernetes.io/managed-by': 'gardener-extension-networking-calico' },
      },
      spec: { secretRefs: [{ name: 'managedresource-extension-networking-calico' }], keepObjects: false },
    });
    expect(desired.secret.metadata).toMatchObject({ name: SECRET_NAME, namespace: 'shoot--dev--a' });
    expect(desired.secret.type).toBe('Opaque');
    const keys = Object.keys(desired.secret.data);
    expect(keys).toHaveLength(desired.manifests.length);
    expect(keys).toContain('daemonset__kube-system__calico-node.yaml');
    expect(keys).toContain('ippool____default-ipv6-ippool.yaml');
    expect(keys).toContain('customresourcedefinition____ippools.crd.projectcalico.org.yaml');
    const decoded = keys.map((k) => parse(Buffer.from(desired.secret.data[k]!, 'base64').toString('utf8')));
    expect(decoded).toEqual(desired.manifests);
    expect(desired.ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it('reports the families IPv4 first, whatever the Network order', () => {
    const network = dualStackNetwork({ ipFamilies: ['IPv6', 'IPv4'], podCIDR: IPV6_PODS });
    const desired = desiredNetworkResources(network, { secondFamilyPodCIDR: IPV4_PODS });
    expect(desired.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(desired.values.ipFamilies).toEqual(['IPv6', 'IPv4']);
    expect(desiredNetworkResources(ipv6Network()).ipFamilies).toEqual(['IPv6']);
  });

  it('applies chart value overrides (images)', () => {
    const images = {
      node: 'registry.example/node:1',
      cni: 'registry.example/cni:1',
      kubeControllers: 'registry.example/kc:1',
      typha: 'registry.example/typha:1',
    };
    const desired = desiredNetworkResources(ipv4Network(), { chartValues: { images } });
    const ds = desired.manifests.find((m) => m.kind === 'DaemonSet') as unknown as {
      spec: { template: { spec: { containers: { image: string }[]; initContainers: { image: string }[] } } };
    };
    expect(ds.spec.template.spec.containers[0]!.image).toBe(images.node);
    expect(ds.spec.template.spec.initContainers[0]!.image).toBe(images.cni);
  });

  it('throws InvalidProviderConfigError with the field errors for an invalid providerConfig', () => {
    const network = ipv6Network({ providerConfig: { ipv6: { pool: 'ipip' }, ipv4: {} } });
    let error: unknown;
    try {
      desiredNetworkResources(network);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidProviderConfigError);
    expect((error as InvalidProviderConfigError).errors).toHaveLength(2);
    expect((error as Error).message).toBe(
      "invalid providerConfig: spec.providerConfig.ipv4: Forbidden: IPv4 configuration must not be specified if the shoot doesn't use IPv4 networking; " +
        'spec.providerConfig.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"',
    );
  });

  it('throws CalicoValuesError when families and ranges do not fit', () => {
    expect(() => desiredNetworkResources(dualStackNetwork())).toThrow(MissingPodCIDRError);
    expect(() => desiredNetworkResources(ipv4Network({ podCIDR: IPV6_PODS }))).toThrow(CalicoValuesError);
  });
});

describe('secretDataKey', () => {
  const manifest = (kind: string, name: string, namespace?: string) =>
    ({ apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } }) as Manifest;
  it('is <kind>__<namespace>__<name>.yaml, with characters a Secret key cannot hold replaced', () => {
    expect(secretDataKey(manifest('ConfigMap', 'calico-config', 'kube-system'))).toBe(
      'configmap__kube-system__calico-config.yaml',
    );
    expect(secretDataKey(manifest('ClusterRole', 'system:calico'))).toBe('clusterrole____system_calico.yaml');
    expect(secretDataKey(manifest('X', 'a/b c\n'))).toBe('x____a_b_c_.yaml');
  });
});

describe("a Network's status patch", () => {
  const network = { ...ipv4Network(), metadata: { ...ipv4Network().metadata, generation: 3 } };

  it('on success: families IPv4 first, the NetworkStatus, lastOperation Succeeded, observedGeneration, lastError cleared', () => {
    expect(
      actuatorStatusPatch(
        { statusFields: calicoStatusFields },
        network,
        { state: 'Succeeded', result: { ipFamilies: ['IPv6', 'IPv4'] }, description: 'done' },
        NOW,
      ),
    ).toEqual({
      ipFamilies: ['IPv4', 'IPv6'],
      providerStatus: { apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1', kind: 'NetworkStatus' },
      lastOperation: {
        type: 'Create',
        state: 'Succeeded',
        progress: 100,
        description: 'done',
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      observedGeneration: 3,
      lastError: null,
    });
  });

  it('on error: lastError with codes, families untouched', () => {
    const status = actuatorStatusPatch(
      { statusFields: calicoStatusFields },
      network,
      { state: 'Error', description: 'broken', codes: ['ERR_CONFIGURATION_PROBLEM'], error: new Error('broken') },
      NOW,
    );
    expect(status).toEqual({
      lastOperation: {
        type: 'Create',
        state: 'Error',
        progress: 50,
        description: 'broken',
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      observedGeneration: 3,
      lastError: {
        description: 'broken',
        codes: ['ERR_CONFIGURATION_PROBLEM'],
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
    });
  });
});

describe('the ManagedResource CRD', () => {
  it('is a structural, namespaced CRD with the status subresource', () => {
    const crd = managedResourceCRD as {
      metadata: { name: string };
      spec: {
        group: string;
        scope: string;
        names: { kind: string; shortNames: string[] };
        versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps }; subresources: unknown }[];
      };
    };
    expect(crd.metadata.name).toBe('managedresources.resources.gardener.cloud');
    expect(crd.spec).toMatchObject({
      group: 'resources.gardener.cloud',
      scope: 'Namespaced',
      names: { kind: 'ManagedResource', shortNames: ['mr'] },
    });
    const [version] = crd.spec.versions;
    expect(version!.name).toBe('v1alpha1');
    expect(version!.subresources).toEqual({ status: {} });
    expect(structuralViolations(version!.schema.openAPIV3Schema)).toEqual([]);
    const spec = (version!.schema.openAPIV3Schema.properties as Record<string, JSONSchemaProps>).spec!;
    expect(spec.required).toEqual(['secretRefs']);
  });
});
