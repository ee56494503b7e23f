/**
 * The admin kubeconfig of the local control plane: certificates embedded, so the file works on its own (after the
 * control plane's temporary folder is gone it is merely stale, not broken in confusing ways).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { Certificates } from './certs.js';

export const CONTEXT_NAME = 'gardener-ipv6-local';

const b64 = async (file: string) => (await readFile(file)).toString('base64');

/** Writes the kubeconfig (mode 0600: it holds a system:masters key) and returns its text. */
export async function writeAdminKubeconfig(path: string, server: string, certs: Certificates): Promise<string> {
  const text = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT_NAME, cluster: { server, 'certificate-authority-data': await b64(certs.caCert) } }],
    users: [
      {
        name: `${CONTEXT_NAME}-admin`,
        user: {
          'client-certificate-data': await b64(certs.adminCert),
          'client-key-data': await b64(certs.adminKey),
        },
      },
    ],
    contexts: [{ name: CONTEXT_NAME, context: { cluster: CONTEXT_NAME, user: `${CONTEXT_NAME}-admin` } }],
    'current-context': CONTEXT_NAME,
  });
  await writeFile(path, text, { mode: 0o600 });
  return text;
}
