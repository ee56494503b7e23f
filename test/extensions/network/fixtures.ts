/**
 * Networks of each family for the calico tests, and helpers to read what a render produced.
 */
import type { Network, NetworkSpec } from '../../../src/apis/extensions/v1alpha1/network.js';
import type { NetworkConfig } from '../../../src/apis/calico/v1alpha1/config.js';
import { renderCalicoManifests, type Manifest } from '../../../src/extensions/network/manifests.js';
import { calicoValues, type CalicoValues, type ShootNetworking } from '../../../src/extensions/network/values.js';
import { CNI_MTU_PLACEHOLDER } from '../../../src/extensions/network/cni.js';
import { networkObject } from '../../fixtures/objects.js';

export const IPV4_PODS = '100.96.0.0/11';
export const IPV6_PODS = 'fd00:10:3::/56';

const METADATA = {
  name: 'a',
  namespace: 'shoot--dev--a',
  labels: { 'project.gardener.cloud/name': 'dev', 'shoot.gardener.cloud/name': 'a' },
};

export function ipv4Network(spec: Partial<NetworkSpec> = {}): Network {
  return networkObject({ podCIDR: IPV4_PODS, serviceCIDR: '100.64.0.0/13', ipFamilies: ['IPv4'], ...spec }, METADATA);
}

export function ipv6Network(spec: Partial<NetworkSpec> = {}): Network {
  return networkObject({ podCIDR: IPV6_PODS, serviceCIDR: 'fd00:10:4::/112', ipFamilies: ['IPv6'], ...spec }, METADATA);
}

/** Dual-stack, IPv4 primary; the IPv6 pod range comes from the shoot's status ({@link IPV6_PODS}). */
export function dualStackNetwork(spec: Partial<NetworkSpec> = {}): Network {
  return networkObject(
    { podCIDR: IPV4_PODS, serviceCIDR: '100.64.0.0/13', ipFamilies: ['IPv4', 'IPv6'], ...spec },
    METADATA,
  );
}

export type Family = 'ipv4' | 'ipv6' | 'dual';

export function networkOf(family: Family, spec: Partial<NetworkSpec> = {}): Network {
  return family === 'ipv4' ? ipv4Network(spec) : family === 'ipv6' ? ipv6Network(spec) : dualStackNetwork(spec);
}

/** The node ranges of the shoots of each family. */
export const IPV4_NODES = '10.250.0.0/16';
export const IPV6_NODES = 'fd00:10:1:100::/56';

/** The values of a Network of `family` with `config`; a dual-stack one gets its IPv6 pods from the shoot's status. */
export function valuesOf(family: Family, config: NetworkConfig = {}, shoot: ShootNetworking = {}): CalicoValues {
  const statusPods = family === 'dual' ? { statusPods: [IPV4_PODS, IPV6_PODS] } : {};
  return calicoValues(networkOf(family), config, { shoot: { ...statusPods, ...shoot } });
}

/** Renders the manifests of a Network of `family` with `config`. */
export function renderFamily(family: Family, config: NetworkConfig = {}, shoot: ShootNetworking = {}): Manifest[] {
  return renderCalicoManifests(valuesOf(family, config, shoot));
}

export function find(manifests: readonly Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  resources?: { requests?: Record<string, string> };
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  livenessProbe?: { exec?: { command: string[] } };
  readinessProbe?: { exec?: { command: string[] } };
}

/** The containers of the pod template of a Deployment or DaemonSet. */
export function containersOf(manifests: readonly Manifest[], kind: string, name: string): Container[] {
  const workload = find(manifests, kind, name) as unknown as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  return workload.spec.template.spec.containers;
}

export function calicoNodeContainer(manifests: readonly Manifest[]): Container {
  return containersOf(manifests, 'DaemonSet', 'calico-node').find((c) => c.name === 'calico-node')!;
}

/** The literal env of a container as a map (valueFrom entries left out). */
export function envOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** The data of the ConfigMap calico-config. */
export function configData(manifests: readonly Manifest[]): Record<string, string> {
  return (find(manifests, 'ConfigMap', 'calico-config') as unknown as { data: Record<string, string> }).data;
}

/** The calico-node container's literal env as a map (valueFrom entries left out). */
export function nodeEnv(manifests: readonly Manifest[]): Record<string, string> {
  return envOf(calicoNodeContainer(manifests));
}

/** The CNI configuration of the ConfigMap, parsed as install-cni would after putting in an MTU. */
export function cniConfig(manifests: readonly Manifest[]): {
  plugins: { type: string; ipam?: Record<string, unknown>; mtu?: number }[];
} {
  const cm = find(manifests, 'ConfigMap', 'calico-config') as unknown as { data: Record<string, string> };
  return JSON.parse(cm.data.cni_network_config!.replace(CNI_MTU_PLACEHOLDER, '1440'));
}

export function ipPools(manifests: readonly Manifest[]): Manifest[] {
  return manifests.filter((m) => m.kind === 'IPPool');
}

/** Every string in a document (keys included), depth first. */
export function allStrings(value: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) {
        out.push(k);
        stack.push(item);
      }
    }
  }
  return out;
}
