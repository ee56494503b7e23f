/**
 * Kubeconfigs with embedded credentials: a client certificate, the cluster's CA, and optionally the name the
 * server's certificate is checked against when the server is given by address (`tls-server-name`).
 */
import { stringify } from 'yaml';

export interface KubeconfigInput {
  /** Cluster and context name. */
  readonly name: string;
  readonly server: string;
  readonly caPEM: string;
  readonly certPEM: string;
  readonly keyPEM: string;
  readonly tlsServerName?: string;
}

export interface KubeconfigCluster {
  /** Cluster and context name. */
  readonly name: string;
  readonly server: string;
  readonly tlsServerName?: string;
}

export interface MultiClusterKubeconfigInput {
  /** The first is the current context. */
  readonly clusters: readonly [KubeconfigCluster, ...KubeconfigCluster[]];
  /** Name of the one user every context uses. */
  readonly user: string;
  readonly caPEM: string;
  readonly certPEM: string;
  readonly keyPEM: string;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

export function renderKubeconfig(input: KubeconfigInput): string {
  const { name, server, tlsServerName, ...credentials } = input;
  return renderMultiClusterKubeconfig({
    clusters: [{ name, server, ...(tlsServerName !== undefined ? { tlsServerName } : {}) }],
    user: name,
    ...credentials,
  });
}

/** One context per way to reach the same API server (its DNS name, an address), all with the same credentials. */
export function renderMultiClusterKubeconfig(input: MultiClusterKubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: input.clusters.map((c) => ({
      name: c.name,
      cluster: {
        server: c.server,
        'certificate-authority-data': b64(input.caPEM),
        ...(c.tlsServerName !== undefined ? { 'tls-server-name': c.tlsServerName } : {}),
      },
    })),
    users: [
      {
        name: input.user,
        user: { 'client-certificate-data': b64(input.certPEM), 'client-key-data': b64(input.keyPEM) },
      },
    ],
    contexts: input.clusters.map((c) => ({ name: c.name, context: { cluster: c.name, user: input.user } })),
    'current-context': input.clusters[0].name,
  });
}
