/**
 * The care controller's look at a control plane running as workloads in the seed: APIServerAvailable and
 * ControlPlaneHealthy.
 */
import type { V1Secret, V1Service } from '@kubernetes/client-node';
import { API_SERVER_SERVICE_NAME, CA_SECRET_NAME } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { ingressIPsByFamily } from '../../../net/load-balancer.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { urlHost } from '../../../system/net.js';
import { API_SERVER_PORT } from '../components/controlplane/args.js';
import { workloadsNotReady } from '../components/controlplane/seed-workloads.js';
import { shootGet } from '../shoot-get.js';
import type { ControlPlaneHealth } from './health.js';

/**
 * The care controller's view of a control plane running as workloads: APIServerAvailable from /readyz at the
 * load-balancer address of the shoot's primary family (its CA from the `ca` Secret), ControlPlaneHealthy from the
 * workloads' ready replicas. Undefined while the seed namespace has no control plane.
 */
export async function controlPlaneWorkloadsHealth(
  client: ResourceClient,
  namespace: string,
): Promise<ControlPlaneHealth | undefined> {
  const [service, ca] = await Promise.all([
    client.get<V1Service>(Refs.service, API_SERVER_SERVICE_NAME, namespace),
    client.get<V1Secret>(Refs.secret, CA_SECRET_NAME, namespace),
  ]);
  if (service === undefined || ca === undefined) return undefined;
  const family = service.spec?.ipFamilies?.[0];
  const address = family === 'IPv4' || family === 'IPv6' ? ingressIPsByFamily(service)[family][0] : undefined;
  let apiServer: ControlPlaneHealth['apiServer'];
  if (address === undefined) {
    apiServer = {
      ok: false,
      reason: 'HealthzRequestFailed',
      message: 'the API server has no load-balancer address yet',
    };
  } else {
    const url = `https://${urlHost(address)}:${API_SERVER_PORT}`;
    try {
      const caPEM = Buffer.from(ca.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
      const probe = await shootGet(url, caPEM, undefined, '/readyz', 2_000);
      apiServer =
        probe.status === 200
          ? { ok: true, reason: 'HealthzRequestSucceeded', message: `API server at ${url} is ready.` }
          : {
              ok: false,
              reason: 'HealthzRequestFailed',
              message: `API server at ${url} answered /readyz with HTTP ${probe.status}`,
            };
    } catch (e) {
      apiServer = {
        ok: false,
        reason: 'HealthzRequestFailed',
        message: `API server at ${url} did not answer /readyz: ${(e as Error).message}`,
      };
    }
  }
  const notReady = await workloadsNotReady(client, namespace);
  return {
    apiServer,
    controlPlane:
      notReady.length > 0
        ? { ok: false, reason: 'DeploymentUnhealthy', message: `not ready: ${notReady.join(', ')}` }
        : {
            ok: true,
            reason: 'ControlPlaneRunning',
            message: 'etcd, kube-apiserver, kube-controller-manager and kube-scheduler are ready in the seed.',
          },
  };
}
