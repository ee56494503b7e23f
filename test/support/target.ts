/**
 * Where the integration (e2e) tests run, chosen from the environment as Gardener's e2e tests do: with `KUBECONFIG`
 * and `IPFAMILY=ipv6|ipv4|dual` set, against that existing cluster (e.g. the kind cluster of hack/local/kind-up.sh
 * with the chart installed); otherwise against the local control plane the global setup starts.
 *
 * Both variables are needed on purpose: a `KUBECONFIG` left in a shell must not send the tests to a real cluster.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The IP family of the cluster the tests run against (`ipv6` for the local control plane). */
    ipFamily: IPFamilySelection;
  }
}

export const IP_FAMILY_SELECTIONS = ['ipv6', 'ipv4', 'dual'] as const;
export type IPFamilySelection = (typeof IP_FAMILY_SELECTIONS)[number];

/**
 * The local control plane started for the run: kube-apiserver on IPv6 loopback, service ranges fd00:10:2::/112
 * (primary) and an IPv4 one only for ClusterIPs of IPv4 and dual-stack shoots' Services; its family is `ipv6`.
 */
export interface LocalControlPlaneTarget {
  readonly kind: 'local-control-plane';
  readonly ipFamily: 'ipv6';
  /** Why this target, for the run's log. */
  readonly reason: string;
}

export interface ExistingClusterTarget {
  readonly kind: 'existing-cluster';
  readonly ipFamily: IPFamilySelection;
  /** Absolute path of the kubeconfig. */
  readonly kubeconfig: string;
  /** The API server of the kubeconfig's current context. */
  readonly server: string;
}

export type E2ETarget = LocalControlPlaneTarget | ExistingClusterTarget;

/** `KUBECONFIG` or `IPFAMILY` can't be used; the message says which and why. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

/** The Service/pod IP families of a cluster of that selection, primary first (the kind configs' order). */
export function clusterIPFamilies(selection: IPFamilySelection): ('IPv4' | 'IPv6')[] {
  switch (selection) {
    case 'ipv4':
      return ['IPv4'];
    case 'ipv6':
      return ['IPv6'];
    case 'dual':
      return ['IPv6', 'IPv4'];
  }
}

function parseIPFamily(value: string): IPFamilySelection {
  const family = value.trim().toLowerCase();
  if (!(IP_FAMILY_SELECTIONS as readonly string[]).includes(family)) {
    throw new TargetError(`IPFAMILY=${value} is not one of ${IP_FAMILY_SELECTIONS.join(', ')}`);
  }
  return family as IPFamilySelection;
}

/**
 * Decides the target from `env` (KUBECONFIG, IPFAMILY). Throws TargetError when IPFAMILY is invalid, or names an
 * existing cluster whose kubeconfig can't be read or has no current cluster. A KUBECONFIG with several files
 * (`a:b`) is not supported: the tests hand one file to every client.
 */
export function selectE2ETarget(env: NodeJS.ProcessEnv = process.env): E2ETarget {
  const kubeconfig = env.KUBECONFIG?.trim() ?? '';
  const ipFamily = env.IPFAMILY?.trim() ?? '';
  const family = ipFamily === '' ? undefined : parseIPFamily(ipFamily);
  if (kubeconfig === '') {
    return {
      kind: 'local-control-plane',
      ipFamily: 'ipv6',
      reason:
        family === undefined || family === 'ipv6'
          ? 'KUBECONFIG is not set'
          : `KUBECONFIG is not set (IPFAMILY=${family} needs an existing cluster of that family)`,
    };
  }
  if (family === undefined) {
    return {
      kind: 'local-control-plane',
      ipFamily: 'ipv6',
      reason: 'KUBECONFIG is set but IPFAMILY is not: set IPFAMILY=ipv6|ipv4|dual to run against that cluster',
    };
  }
  if (kubeconfig.includes(':')) {
    throw new TargetError(`KUBECONFIG=${kubeconfig} lists several files; point it at one kubeconfig file`);
  }
  const path = resolve(kubeconfig);
  if (!existsSync(path)) throw new TargetError(`KUBECONFIG=${kubeconfig}: no such file`);
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (e) {
    throw new TargetError(`KUBECONFIG=${kubeconfig} cannot be read: ${(e as Error).message}`);
  }
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new TargetError(`KUBECONFIG=${kubeconfig} has no current context with a cluster`);
  return { kind: 'existing-cluster', ipFamily: family, kubeconfig: path, server };
}

/** One line for the run's log. */
export function describeE2ETarget(target: E2ETarget): string {
  return target.kind === 'existing-cluster'
    ? `running against the existing ${target.ipFamily} cluster ${target.server} (KUBECONFIG=${target.kubeconfig})`
    : `running against the local control plane (${target.reason})`;
}

/**
 * For the global setup, when the target is an existing cluster: provides what a local control plane would
 * (`kubeconfig`, `apiServerURL`, `netns` empty) and the `ipFamily`. The cluster is expected to have the project's
 * CRDs (the chart installs them).
 */
export function provideExistingCluster(project: TestProject, target: ExistingClusterTarget): void {
  project.provide('kubeconfig', target.kubeconfig);
  project.provide('apiServerURL', target.server);
  project.provide('netns', '');
  project.provide('ipFamily', target.ipFamily);
}
