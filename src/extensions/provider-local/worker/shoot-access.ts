/**
 * provider-local's way into a shoot, as Gardener's extensions reach it: the kubeconfig of the seed namespace's
 * `gardener` Secret, which the gardenlet writes before the Worker. Only while the shoot's API server runs (its
 * Deployment has a ready replica): a hibernated one is not asked.
 */
import { KubeConfig, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import {
  API_SERVER_DEPLOYMENT_NAME,
  SHOOT_ACCESS_KUBECONFIG_KEY,
  SHOOT_ACCESS_SECRET_NAME,
} from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { ResourceClient } from '../../../runtime/client.js';

/** Short: a reconcile of the Worker waits on no single slow call of the shoot for long. */
const SHOOT_REQUEST_TIMEOUT_MS = 15_000;

/** A client of the shoot of `namespace`, or undefined (no running API server, no `gardener` Secret); the caller closes it. */
export async function openShootClient(
  seed: ResourceClient,
  namespace: string,
  signal: AbortSignal,
): Promise<ResourceClient | undefined> {
  const apiServer = await seed.get<KubernetesObject & { status?: { readyReplicas?: number } }>(
    Refs.deployment,
    API_SERVER_DEPLOYMENT_NAME,
    namespace,
    { signal },
  );
  if ((apiServer?.status?.readyReplicas ?? 0) === 0) return undefined;
  const secret = await seed.get<V1Secret & KubernetesObject>(Refs.secret, SHOOT_ACCESS_SECRET_NAME, namespace, {
    signal,
  });
  const data = secret?.data?.[SHOOT_ACCESS_KUBECONFIG_KEY];
  if (data === undefined) return undefined;
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(data, 'base64').toString());
  return new ResourceClient(kc, { requestTimeoutMs: SHOOT_REQUEST_TIMEOUT_MS });
}
