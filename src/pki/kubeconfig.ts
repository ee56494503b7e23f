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

const b64 = (text: string) => Buffer.from(text).toString('base64');

export function renderKubeconfig(input: KubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: input.name,
        cluster: {
          server: input.server,
          'certificate-authority-data': b64(input.caPEM),
          ...(input.tlsServerName !== undefined ? { 'tls-server-name': input.tlsServerName } : {}),
        },
      },
    ],
    users: [
      {
        name: input.name,
        user: { 'client-certificate-data': b64(input.certPEM), 'client-key-data': b64(input.keyPEM) },
      },
    ],
    contexts: [{ name: input.name, context: { cluster: input.name, user: input.name } }],
    'current-context': input.name,
  });
}
