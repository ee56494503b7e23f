/**
 * End to end, as `up` runs it, on a control plane of its own (its webhooks must not judge other files' objects):
 * admission webhook, gardenlet, calico and DNS extensions and a real BIND9. Checks what a user checks: the API
 * server's answers, and the shoot's API server names queried with a real resolver.
 */
import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../src/app/runtime.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../src/apis/extensions/v1alpha1/dnsrecord.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { Refs } from '../../src/apis/refs.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { apiErrorMessage, installCRDs } from '../../src/localenv/crds.js';
import { desiredNetworkResources, SECRET_NAME } from '../../src/extensions/network/actuator.js';
import { shootNetworkingOf } from '../../src/extensions/network/cluster.js';
import type { Network } from '../../src/apis/extensions/v1alpha1/network.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { ApiError } from '../../src/runtime/errors.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedDualStackMigrationNetworks, seedIPv6Networks } from '../fixtures/objects.js';
import { waitFor } from '../support/wait.js';
import { applyLocalCloudProfile } from '../support/shoot.js';
import { queryDNS } from '../support/dns.js';

let cp: ControlPlane;
let bind: Bind9;
let runtime: Runtime;
let client: ResourceClient;

const NAMESPACE = 'garden-dev';

beforeAll(async () => {
  cp = await startControlPlane();
  bind = await startBind9();
  runtime = await startRuntime({
    kubeConfig: cp.kubeConfig(),
    gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
    logger: silentLogger(),
    webhook: { host: '::1', port: 0, advertiseHost: '::1' },
    gardenlet: {
      dns: localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret }),
    },
    extensions: {
      dns: { resyncIntervalMs: 1_000, dnsTimeoutMs: 500, backoff: { baseDelayMs: 100, maxDelayMs: 1_000 } },
    },
  });
  client = new ResourceClient(cp.kubeConfig());
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  for (const [name, networks] of Object.entries(SEEDS)) {
    await client.create(Refs.seed, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Seed',
      metadata: { name },
      spec: { provider: { type: 'local', region: 'local' }, networks },
    } as KubernetesObject);
  }
  await applyLocalCloudProfile(client);
  // The webhooks are registered; wait until the API server calls them.
  await waitFor(
    async () => (await admissionStatus(shootObject('probe', 'ipv6', { ipFamilies: ['IPv5'] }), true)) !== undefined,
    {
      message: 'the API server to call the webhooks',
    },
  );
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  await bind?.stop();
  await cp?.stop();
});

const SEEDS = { ipv6: seedIPv6Networks, dual: seedDualStackMigrationNetworks };

function shootObject(
  name: string,
  seedName: keyof typeof SEEDS,
  networking: Record<string, unknown>,
): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      seedName,
      cloudProfile: { name: 'local' },
      region: 'local',
      provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      networking: { type: 'calico', ...networking },
    },
  } as KubernetesObject;
}

/** The Status the API server answers a create with, or undefined when it was admitted. */
async function admissionStatus(object: KubernetesObject, dryRun = false) {
  try {
    await client.create(Refs.shoot, object, { dryRun });
    return undefined;
  } catch (e) {
    if (e instanceof ApiError && e.status) return e.status;
    throw e;
  }
}

async function succeeded(name: string, generation?: number, timeoutMs = 30_000): Promise<Shoot> {
  let last = 'no status';
  try {
    return await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE);
        const op = s?.status?.lastOperation;
        if (op) last = `${op.state} ${op.progress}%: ${op.description}`;
        return op?.state === 'Succeeded' && (generation === undefined || s?.status?.observedGeneration === generation)
          ? s
          : undefined;
      },
      { timeoutMs, message: `shoot ${name} to succeed` },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last operation: ${last}`);
  }
}

/** Sorted answers of BIND9 for the name, or the resolver's error code (ENOTFOUND, ENODATA). */
const query = (type: 'A' | 'AAAA', name: string) => queryDNS(bind.server, type, name);

const external = (shoot: string) => `api.${shoot}.dev.external.local.gardener.cloud`;

async function setFamilies(name: string, families: string[]): Promise<number | undefined> {
  const updated = await retryOnConflict(async () => {
    const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
    shoot.spec.networking!.ipFamilies = families;
    if (families.length === 1) delete shoot.spec.kubernetes?.kubeControllerManager?.nodeCIDRMaskSizeIPv6;
    return client.update(Refs.shoot, shoot as KubernetesObject);
  });
  return updated.metadata?.generation;
}

describe('an IPv6 shoot, end to end', () => {
  it('is rejected by the API server with field causes when invalid', async () => {
    const status = await admissionStatus(shootObject('bad', 'ipv6', { ipFamilies: ['IPv6', 'IPv6'] }));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status?.details?.causes).toContainEqual({
      reason: 'FieldValueDuplicate',
      field: 'spec.networking.ipFamilies[1]',
      message: 'Duplicate value: "IPv6"',
    });
  });

  it('gets pods and services from its seed, and its AAAA name answers the API server IPv6 address', async () => {
    await client.create(
      Refs.shoot,
      shootObject('alpha', 'ipv6', { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' }),
    );
    const shoot = await succeeded('alpha');
    expect(shoot.spec.networking).toMatchObject({ pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' });
    expect(shoot.spec.kubernetes?.kubeControllerManager).toEqual({ nodeCIDRMaskSize: 64 });
    expect(shoot.status?.lastOperation).toMatchObject({ state: 'Succeeded', progress: 100 });

    const network = await client.get<KubernetesObject & { status?: { ipFamilies?: string[] } }>(
      Refs.network,
      'alpha',
      'shoot--dev--alpha',
    );
    expect(network?.status?.ipFamilies).toEqual(['IPv6']);
    const service = await client.get<KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip: string }[] } } }>(
      Refs.service,
      'kube-apiserver',
      'shoot--dev--alpha',
    );
    const ipv6 = service?.status?.loadBalancer?.ingress?.map((i) => i.ip);
    expect(ipv6).toEqual(['::1']);
    expect(await query('AAAA', external('alpha'))).toEqual(ipv6);
    expect(await query('A', external('alpha'))).toBe('ENODATA');
  });

  it(
    'adds AAAA next to A when migrating to dual-stack, removes it on the way back, and heals after a DNS outage',
    { timeout: 150_000 },
    async () => {
      const created = await client.create(
        Refs.shoot,
        shootObject('beta', 'dual', { nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' }),
      );
      await succeeded('beta', created.metadata?.generation);
      expect(await query('A', external('beta'))).toEqual(['127.0.0.1']);
      expect(await query('AAAA', external('beta'))).toBe('ENODATA');

      // The migration happens while the DNS server is down: the new AAAA records report Error, the shoot waits.
      await bind.stop();
      const generation = await setFamilies('beta', ['IPv4', 'IPv6']);
      const failing = await waitFor(
        async () => {
          const r = await client.get<DNSRecord & KubernetesObject>(
            Refs.dnsRecord,
            'beta-external-v6',
            'shoot--dev--beta',
          );
          return r?.status?.lastOperation?.state === 'Error' ? r : undefined;
        },
        { timeoutMs: 30_000, message: 'the AAAA record to report Error' },
      );
      expect(failing.status?.lastOperation?.description).toMatch(/\[::1\]:\d+/);
      const waiting = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'beta', NAMESPACE);
      expect(waiting?.status?.lastOperation?.state).not.toBe('Succeeded');

      // Back on the same port and key (an empty zone: the resync republishes the A records too).
      bind = await startBind9({ port: bind.port, tsigSecret: bind.tsigSecret });
      await succeeded('beta', generation);
      await waitFor(async () => JSON.stringify(await query('A', external('beta'))) === '["127.0.0.1"]', {
        timeoutMs: 30_000,
        message: 'the A record to be republished',
      });
      expect(await query('AAAA', external('beta'))).toEqual(['::1']);

      const back = await setFamilies('beta', ['IPv4']);
      await succeeded('beta', back);
      await waitFor(async () => (await query('AAAA', external('beta'))) === 'ENODATA', {
        message: 'the AAAA record to go',
      });
      expect(await query('A', external('beta'))).toEqual(['127.0.0.1']);
    },
  );

  it('removes its A and AAAA names from the zone and everything from the seed when deleted', async () => {
    await client.create(
      Refs.shoot,
      shootObject('gamma', 'dual', {
        ipFamilies: ['IPv4', 'IPv6'],
        nodes: '10.10.0.0/16',
        pods: '10.3.0.0/16',
        services: '10.4.0.0/16',
      }),
    );
    await succeeded('gamma');
    expect(await query('A', external('gamma'))).toEqual(['127.0.0.1']);
    expect(await query('AAAA', external('gamma'))).toEqual(['::1']);
    await client.delete(Refs.shoot, 'gamma', NAMESPACE);
    await waitFor(async () => (await client.get(Refs.shoot, 'gamma', NAMESPACE)) === undefined, {
      timeoutMs: 60_000,
      message: 'the shoot to be gone',
    });
    expect(await query('A', external('gamma'))).toBe('ENOTFOUND');
    expect(await query('AAAA', external('gamma'))).toBe('ENOTFOUND');
    expect(await client.get(Refs.namespace, 'shoot--dev--gamma')).toBeUndefined();
  });
});

describe("an IPv6 shoot with networking-calico's typical providerConfig", () => {
  const providerConfig = {
    apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1',
    kind: 'NetworkConfig',
    typha: { enabled: false },
    overlay: { enabled: false },
    snatToUpstreamDNS: { enabled: true },
    ipv6: { sourceNATEnabled: true },
  };

  it('is refused by the API server when the providerConfig does not fit its families', async () => {
    const status = await admissionStatus(
      shootObject('bad-calico', 'ipv6', {
        ipFamilies: ['IPv6'],
        providerConfig: { ...providerConfig, ipam: { type: 'calico-ipam' }, typo: 1 },
      }),
    );
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status?.details?.causes?.map((c) => c.field)).toEqual([
      'spec.networking.providerConfig.typo',
      'spec.networking.providerConfig.ipam.type',
    ]);
  });

  it('reconciles to Succeeded with overlay and typha off, and its calico manifests pass a server-side dry-run apply', async () => {
    await client.create(
      Refs.shoot,
      shootObject('delta', 'ipv6', { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56', providerConfig }),
    );
    await succeeded('delta');
    const network = await client.get<
      KubernetesObject & {
        status?: { ipFamilies?: string[]; conditions?: { type: string; status: string; message?: string }[] };
      }
    >(Refs.network, 'delta', 'shoot--dev--delta');
    expect(network?.status?.ipFamilies).toEqual(['IPv6']);
    // calico's workloads are rendered but not handed to the shoot: their images are not on any machine here.
    const health = network?.status?.conditions?.find((c) => c.type === 'SystemComponentsHealthy');
    expect(health?.status).toBe('False');
    expect(health?.message).toContain('DaemonSet kube-system/calico-node');

    const secret = await client.get<KubernetesObject & { data: Record<string, string> }>(
      Refs.secret,
      SECRET_NAME,
      'shoot--dev--delta',
    );
    const handed = Object.values(secret!.data).map(
      (d) => parse(Buffer.from(d, 'base64').toString('utf8')) as KubernetesObject & Record<string, unknown>,
    );
    expect(handed.some((m) => m.kind === 'DaemonSet')).toBe(false);
    // Everything the extension renders for this Network and Shoot, the withheld workloads included.
    const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'delta', NAMESPACE))!;
    const manifests = desiredNetworkResources(network as unknown as Network, {
      shoot: shootNetworkingOf(shoot),
    }).manifests.map((m) => m as unknown as KubernetesObject & Record<string, unknown>);
    expect(handed.length + 1).toBe(manifests.length);
    const names = manifests.map((m) => `${m.kind}/${m.metadata?.name}`);
    expect(names).not.toContain('Deployment/calico-typha');
    expect(names).not.toContain('Service/calico-typha');
    expect(names).not.toContain('Deployment/calico-kube-controllers');
    expect(names.filter((n) => n.startsWith('IPPool/'))).toEqual(['IPPool/default-ipv6-ippool']);
    const config = manifests.find((m) => m.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(config.data).toMatchObject({ calico_backend: 'none', typha_service_name: 'none' });
    const node = manifests.find((m) => m.kind === 'DaemonSet') as unknown as {
      spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
    };
    expect(node.spec.template.spec.containers.map((c) => c.name)).toEqual(['calico-node', 'snat-upstream-dns-ipv6']);
    expect(node.spec.template.spec.containers[0]!.env).toContainEqual({
      name: 'IP6_AUTODETECTION_METHOD',
      value: 'cidr=fd00:10:1:100::/56',
    });

    // The calico CRDs first (the pools need them), then every object as a dry run: nothing else is stored.
    const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
    await installCRDs(cp.kubeConfig(), crds as unknown as V1CustomResourceDefinition[], Date.now() + 60_000);
    const objects = KubernetesObjectApi.makeApiClient(cp.kubeConfig());
    const rejected: string[] = [];
    for (const manifest of manifests) {
      try {
        await objects.patch(manifest, undefined, 'All', 'e2e-dry-run', true, PatchStrategy.ServerSideApply);
      } catch (e) {
        rejected.push(`${manifest.kind} ${manifest.metadata?.name}: ${apiErrorMessage(e)}`);
      }
    }
    expect(rejected).toEqual([]);
  });
});
