/**
 * What `gardener-ipv6 up` runs next to the control plane: BIND9 for the shoots' DNS records, the webhook and the
 * controllers, the CloudProfile `local` and the example IPv6 Seed and Shoot from `examples/`. What `up` prints about
 * the shoot then is shoot-summary.ts's.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { localDNSProvider } from '../gardenlet/dns-provider.js';
import { Refs } from '../apis/refs.js';
import { startBind9, type Bind9 } from '../localenv/bind9.js';
import type { ControlPlane } from '../localenv/control-plane.js';
import { projectRoot } from '../system/project.js';
import { ResourceClient } from '../runtime/client.js';
import { isInvalid } from '../runtime/errors.js';
import type { Logger } from '../runtime/log.js';
import { startRuntime, type Runtime } from './runtime.js';
import { LoadBalancerNetwork } from '../extensions/provider-local/loadbalancer/network.js';
import {
  AddressPool,
  DEFAULT_LOAD_BALANCER_NETWORKS,
  gatewayCIDR,
  type LoadBalancerNetworks,
} from '../extensions/provider-local/loadbalancer/pool.js';
import { ensureBinaries, NODE_BINARY_NAMES } from '../localenv/binaries.js';
import { parseIP, type IPFamily } from '../net/cidr.js';
import { HostRoutesToNodes } from '../extensions/provider-local/loadbalancer/routes.js';
import type { MachinesOptions } from './seed-nodes.js';
import { machineLimitsOrDefaults, type MachineLimits } from '../extensions/provider-local/admission.js';
import { buildMachineImages, CONTROL_PLANE_BINARIES } from '../extensions/provider-local/machine/images.js';
import { type BuiltImage } from '../extensions/provider-local/machine/image-archive.js';
import { buildSeedImages } from '../extensions/provider-local/machine/pod-image.js';
import { netnsUnsupportedReason } from '../system/netns.js';
import { localCloudProfile } from '../extensions/provider-local/cloudprofile.js';

export const EXAMPLE_SEED = 'seed-ipv6.yaml';
export const EXAMPLE_SHOOT = 'shoot-ipv6.yaml';

export interface LocalServices {
  readonly bind: Bind9;
  readonly runtime: Runtime;
  readonly loadBalancerNetwork: LoadBalancerNetwork | undefined;
  /** Whether the shoots' control planes and machines run as workloads of the seed (else: objects only). */
  readonly controlPlaneWorkloads: boolean;
  /** Stops the webhook and the controllers, and starts them again on the same state. */
  restartGardenlet(): Promise<void>;
  /** Stops the webhook and the controllers (a gardenlet that went away); startGardenlet() brings them back. */
  stopGardenlet(): Promise<void>;
  startGardenlet(): Promise<void>;
  /**
   * Stops everything; with a `deadline` (ms since epoch), the processes still running then are killed. With
   * `keepLoadBalancerNetwork` the load-balancer bridge stays, for the caller to delete (`loadBalancerNetwork.destroy()`)
   * once its API server stopped: a bridge deleted under a running kube-apiserver stalls its last requests to itself
   * (its identity Lease's deletion on exit, until a 10-s timeout).
   */
  stop(opts?: { deadline?: number; keepLoadBalancerNetwork?: boolean }): Promise<void>;
}

export interface LocalServicesOptions {
  /**
   * The shoots' control planes and machines as workloads of the seed, whose Nodes the garden's API server has
   * (SeedNodes): their load-balancer addresses are routed to those Nodes. Needs root (the load-balancer bridge and
   * routes). Without it the gardenlet writes the shoots' objects only.
   */
  readonly controlPlaneWorkloads?: boolean;
  /** Load-balancer networks per family. @default fd00:ff::/64 and 172.18.255.0/24 */
  readonly loadBalancerNetworks?: LoadBalancerNetworks;
  /** The other seeds' load-balancer networks, which the webhook keeps the shoots' and seeds' ranges out of too. */
  readonly otherLoadBalancerNetworks?: readonly LoadBalancerNetworks[];
  /** The webhook's machine limits. @default DEFAULT_MAX_MACHINES_PER_POOL, DEFAULT_MAX_MACHINES_PER_SHOOT */
  readonly machineLimits?: MachineLimits;
  /** Tells two environments of one process apart (the bridge's name). */
  readonly tag?: string;
  /** Shorter care periods for tests. */
  readonly careSyncPeriodMs?: number;
  /** How long stopping the webhook and the controllers may take. @default DEFAULT_SHUTDOWN_TIMEOUT_MS */
  readonly shutdownTimeoutMs?: number;
  /** Machine pods in user namespaces of their own (the bench turns it off for comparison). @default true */
  readonly machineUserNamespaces?: boolean;
  /** The gardenlet serves this seed only (with several seeds); every seed when unset. */
  readonly seedName?: string;
  /** How often the gardenlet renews its seeds' Leases; its own default when unset. */
  readonly seedLeaseResyncMs?: number;
  /** The garden's seed lifecycle periods (tests shorten them); the runtime's defaults when unset. */
  readonly seedLifecycle?: { monitorPeriodMs?: number; shootMonitorPeriodMs?: number; syncPeriodMs?: number };
  /**
   * The services of a seed cluster of its own (`cp` is that cluster's): its gardenlet with the network and DNS
   * extensions reaches the garden with `kubeConfig` (a gardenlet's credentials) and writes DNS records to the
   * garden's BIND9; no webhook (the garden's admits), no BIND9 of its own. `seedName` is required then.
   */
  readonly garden?: { readonly kubeConfig: KubeConfig; readonly bind: Bind9 };
}

/**
 * With workloads: the load-balancer bridge, BIND9 on port 53 of its IPv6 gateway (where the seed's pods can ask
 * it), provider-local's load balancers with routes to the seed's Nodes and its Worker controller. Without: BIND9 on
 * [::1] and the controllers writing objects only.
 */
export async function startLocalServices(
  cp: ControlPlane,
  gates: FeatureGates,
  logger: Logger,
  opts: LocalServicesOptions = {},
): Promise<LocalServices> {
  const workloads = opts.controlPlaneWorkloads === true;
  if (opts.garden !== undefined && opts.seedName === undefined) {
    throw new Error("a seed cluster's services need the name of their seed");
  }
  if (workloads) {
    const reason = netnsUnsupportedReason();
    if (reason !== undefined) throw new Error(`shoot control planes as workloads need root: ${reason}`);
  }
  const loadBalancerRoutes = workloads ? new HostRoutesToNodes(seedNodeAddress(cp)) : undefined;
  let lbNetwork: LoadBalancerNetwork | undefined;
  let dnsAddress: string | undefined;
  if (workloads) {
    lbNetwork = new LoadBalancerNetwork(opts.loadBalancerNetworks, opts.tag);
    lbNetwork.deploy();
    dnsAddress = gatewayAddress(lbNetwork.networks.IPv6);
  }
  const tmp = process.env.GARDENER_IPV6_TMPDIR ? { parentDir: process.env.GARDENER_IPV6_TMPDIR } : {};
  let bind: Bind9;
  try {
    bind =
      opts.garden?.bind ??
      (await startBind9({ ...tmp, ...(dnsAddress !== undefined ? { address: dnsAddress, port: 53 } : {}) }));
  } catch (e) {
    lbNetwork?.destroy();
    throw e;
  }
  const ownBind = opts.garden === undefined;
  // With --ipv6-only the API server reaches us over the veth pair; with seed Nodes on the node network's gateway, where
  // it listens (an aggregated API, shoots/adminkubeconfig, can't be at a loopback address: see apiservice.ts); else
  // on our own [::1].
  const apiServerHost = new URL(cp.server).hostname.replace(/^\[(.*)\]$/, '$1');
  const webhookAddress = cp.veth?.hostAddress ?? (workloads ? apiServerHost : '::1');
  const pool = lbNetwork ? new AddressPool(lbNetwork.networks) : undefined;
  // The webhook and the controllers: started again on the same state by restartGardenlet().
  const startGardenlet = (): Promise<Runtime> =>
    startRuntime({
      kubeConfig: cp.kubeConfig(),
      gates,
      logger,
      ...(opts.garden !== undefined
        ? { garden: opts.garden.kubeConfig, components: ['gardenlet', 'network', 'dns'] as const }
        : {
            // The webhook listens there only (on `::` it would answer on every address of the host, IPv4 ones
            // included).
            webhook: {
              host: webhookAddress,
              port: 0,
              advertiseHost: webhookAddress,
              providerLocal: {
                loadBalancerNetworks: [
                  lbNetwork?.networks ?? opts.loadBalancerNetworks ?? DEFAULT_LOAD_BALANCER_NETWORKS,
                  ...(opts.otherLoadBalancerNetworks ?? []),
                ],
                ...machineLimitsOrDefaults(opts.machineLimits),
              },
            },
          }),
      gardenlet: {
        dns: localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret }),
        ...(opts.seedName !== undefined ? { seedName: opts.seedName } : {}),
        ...(opts.seedLeaseResyncMs !== undefined ? { seedLeaseResyncMs: opts.seedLeaseResyncMs } : {}),
        ...(workloads ? { controlPlaneWorkloads: true } : {}),
        ...(opts.careSyncPeriodMs !== undefined ? { careSyncPeriodMs: opts.careSyncPeriodMs } : {}),
      },
      ...(loadBalancerRoutes && pool
        ? {
            providerLocal: {
              pool,
              loadBalancerRoutes,
              machinePods: true,
              ...(opts.machineUserNamespaces === false ? { machineUserNamespaces: false } : {}),
            },
          }
        : {}),
      ...(opts.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: opts.shutdownTimeoutMs } : {}),
      ...(opts.seedLifecycle !== undefined && opts.garden === undefined ? { seedLifecycle: opts.seedLifecycle } : {}),
    });
  let runtime: Runtime;
  let running = true;
  try {
    runtime = await startGardenlet();
  } catch (e) {
    if (ownBind) await bind.stop();
    lbNetwork?.destroy();
    throw e;
  }
  const services: LocalServices = {
    bind,
    get runtime() {
      return runtime;
    },
    loadBalancerNetwork: lbNetwork,
    controlPlaneWorkloads: workloads,
    async restartGardenlet() {
      await services.stopGardenlet();
      await services.startGardenlet();
    },
    async stopGardenlet() {
      if (!running) return;
      running = false;
      await runtime.stop();
    },
    async startGardenlet() {
      if (running) return;
      runtime = await startGardenlet();
      running = true;
    },
    async stop(stopOpts = {}) {
      if (running) await runtime.stop(stopOpts);
      running = false;
      if (ownBind) await bind.stop(stopOpts);
      loadBalancerRoutes?.removeAll();
      if (stopOpts.keepLoadBalancerNetwork !== true) lbNetwork?.destroy();
    },
  };
  return services;
}

/**
 * The address of the first Ready seed Node of a family (by name): where load-balancer addresses are routed to,
 * kube-proxy there forwarding to the Service's pods.
 */
function seedNodeAddress(cp: ControlPlane): (family: IPFamily) => Promise<string | undefined> {
  const client = new ResourceClient(cp.kubeConfig());
  return async (family) => {
    const nodes = (
      await client.list<
        KubernetesObject & {
          status?: { addresses?: { type: string; address: string }[]; conditions?: { type: string; status: string }[] };
        }
      >(Refs.node, {})
    ).items
      .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    for (const node of nodes) {
      const address = node.status?.addresses?.find(
        (a) => a.type === 'InternalIP' && parseIP(a.address)?.family === family,
      )?.address;
      if (address !== undefined) return address;
    }
    return undefined;
  };
}

/** The images of each binaries folder and kind, built once per process (the seed's Nodes and the shoots' share them). */
const builtImages = new Map<string, Promise<BuiltImage[]>>();

/**
 * The node binaries (built like the control plane's) and the machine images, built once and cached. `seed`: the
 * images of the seed's Nodes, which also run the shoots' control planes (etcd, kube-apiserver, ...).
 */
export async function machinesOptions(opts: { seed?: boolean } = {}): Promise<MachinesOptions> {
  const paths = await ensureBinaries({
    names: opts.seed ? [...NODE_BINARY_NAMES, ...CONTROL_PLANE_BINARIES] : NODE_BINARY_NAMES,
  });
  const binDir = dirname(paths.kubelet);
  const build = opts.seed ? buildSeedImages : buildMachineImages;
  return {
    binDir,
    images: () => {
      const key = `${opts.seed ? 'seed' : 'machine'}:${binDir}`;
      let images = builtImages.get(key);
      if (images === undefined) {
        images = build(binDir, join(projectRoot(), '.cache', 'images'));
        images.catch(() => builtImages.delete(key));
        builtImages.set(key, images);
      }
      return images;
    },
  };
}

/** `fd00:ff::/64` → `fd00:ff::1`. */
function gatewayAddress(network: string | undefined): string | undefined {
  return network === undefined ? undefined : gatewayCIDR(network).replace(/\/\d+$/, '');
}

export function example(name: string): KubernetesObject {
  const text = readFileSync(join(projectRoot(), 'examples', name), 'utf8');
  return parseAllDocuments(text)[0]!.toJS() as KubernetesObject;
}

/**
 * Waits until the API server calls our webhooks (a registration takes a moment to be seen), by sending a Shoot
 * the validating webhook must reject.
 */
async function waitForAdmission(client: ResourceClient, deadline: number, signal?: AbortSignal): Promise<void> {
  const probe = {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name: 'admission-probe', namespace: 'default' },
    spec: { networking: { type: 'calico', ipFamilies: ['IPv5'] } },
  } as KubernetesObject;
  for (;;) {
    try {
      await client.create(Refs.shoot, probe, { dryRun: true, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (isInvalid(e)) return;
      throw e;
    }
    if (Date.now() > deadline) throw new Error('the API server does not call the admission webhook');
    await sleep(200, signal);
  }
}

/** Waits `ms`; rejects at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Pod Security for the project namespace: `up`'s garden is also its seed, so a pod a project member creates there
 * runs on the seed's Nodes. Baseline refuses privileged pods and host namespaces, ports and paths.
 */
export const PROJECT_NAMESPACE_POD_SECURITY = {
  'pod-security.kubernetes.io/enforce': 'baseline',
  'pod-security.kubernetes.io/enforce-version': 'latest',
} as const;

/** The pod and service ranges an example Shoot is given where its Seed's shootDefaults can't give them. */
export interface ExampleShootRanges {
  readonly pods: string;
  readonly services: string;
}

/**
 * Applies the CloudProfile `local`, the Seeds (the example IPv6 Seed unless given) and an example Shoot (the IPv6
 * one unless given) and waits until the Shoot's last operation succeeded; `signal` ends the wait (`up` stopped by a signal).
 */
export async function applyExampleShoot(
  client: ResourceClient,
  opts: {
    timeoutMs?: number;
    signal?: AbortSignal;
    seeds?: readonly KubernetesObject[];
    /** The example Shoot's file, put on the first of `seeds`. @default EXAMPLE_SHOOT on its own Seed */
    shoot?: string;
    /** Ranges set in the example Shoot's `spec.networking` beside the file's. */
    shootNetworking?: ExampleShootRanges;
  } = {},
): Promise<Shoot> {
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  const { signal } = opts;
  await waitForAdmission(client, deadline, signal);
  const seeds = opts.seeds ?? [example(EXAMPLE_SEED)];
  const shoot = example(opts.shoot ?? EXAMPLE_SHOOT) as KubernetesObject & {
    spec: { seedName?: string; networking?: Record<string, unknown> };
  };
  if (opts.shoot !== undefined) shoot.spec.seedName = seeds[0]?.metadata?.name ?? shoot.spec.seedName;
  if (opts.shootNetworking) shoot.spec.networking = { ...shoot.spec.networking, ...opts.shootNetworking };
  const namespace = shoot.metadata?.namespace ?? 'garden-local';
  const apply = (ref: (typeof Refs)[keyof typeof Refs], object: KubernetesObject) =>
    client.apply(ref, object, { fieldManager: 'gardener-ipv6-up', force: true, ...(signal ? { signal } : {}) });
  await apply(Refs.namespace, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: PROJECT_NAMESPACE_POD_SECURITY },
  });
  await apply(Refs.cloudProfile, localCloudProfile() as KubernetesObject);
  for (const seed of seeds) await apply(Refs.seed, seed);
  await apply(Refs.shoot, shoot);
  for (;;) {
    const current = await client.get<Shoot & KubernetesObject>(Refs.shoot, shoot.metadata?.name ?? '', namespace, {
      ...(signal ? { signal } : {}),
    });
    const op = current?.status?.lastOperation;
    if (op?.state === 'Succeeded') return current!;
    if (Date.now() > deadline) {
      throw new Error(
        `shoot ${namespace}/${shoot.metadata?.name} did not succeed: ${op ? `${op.state}: ${op.description}` : 'no status'}`,
      );
    }
    await sleep(250, signal);
  }
}
