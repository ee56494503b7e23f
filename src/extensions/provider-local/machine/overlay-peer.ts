/**
 * A control plane pod's way into the shoot's networks, as Gardener's VPN between seed and shoot provides it: a sidecar
 * of kube-apiserver joins the machines' VXLAN overlay (overlay.ts) from its pod's network namespace, with routes to
 * every Node's addresses and podCIDRs and to the shoot's service ranges. kube-apiserver then reaches shoot pods and Services
 * (`pods/proxy`, `services/proxy`, webhooks and aggregated APIs served in the shoot); the answers come back through
 * the overlay: the peer publishes itself in a Lease of the shoot's kube-system (renewed every PEER_LEASE_RENEW_MS,
 * deleted when it stops), from which the machines route its addresses back through the overlay (overlay.ts). The
 * Nodes are read, and the Lease written, with a client certificate bound to just that; read again when a watch says
 * something the overlay uses changed (resource-changes.ts), or RESYNC_MS after the last read.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ResourceClient } from '../../../runtime/client.js';
import type { IPFamily } from '../../../net/cidr.js';
import type { NodeInfo } from './api-client.js';
import { underlayAddress } from './pod-agent.js';
import {
  CONTROL_PLANE_PEER_LABEL,
  linkMTUOf,
  OVERLAY_ADDRESSES_ANNOTATION,
  OVERLAY_UNDERLAY_ANNOTATION,
  run,
  serviceRouteCommands,
  VXLANOverlay,
} from './overlay.js';
import { metav1MicroTime } from '../../../apis/meta/time.js';
import { RESYNC_MS, ResourceChanges, WATCH_TIMEOUT_SECONDS, relevantNode } from './resource-changes.js';

/** How often the peer checks whether its Lease is due or the Nodes changed. */
export const OVERLAY_PEER_SYNC_MS = 2_000;
/** How often the peer's Lease is renewed, and how long it counts without a renewal. */
export const PEER_LEASE_RENEW_MS = 10_000;
export const PEER_LEASE_DURATION_SECONDS = 40;

const LEASES = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
} as const;

/** The Lease a control plane peer publishes itself with: what desiredControlPlanePeers reads. */
export function peerLease(pod: string, underlayIP: string, podIPs: readonly string[], now: Date): KubernetesObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: peerLeaseName(pod),
      namespace: 'kube-system',
      labels: { [CONTROL_PLANE_PEER_LABEL]: 'control-plane' },
      annotations: { [OVERLAY_UNDERLAY_ANNOTATION]: underlayIP, [OVERLAY_ADDRESSES_ANNOTATION]: podIPs.join(',') },
    },
    spec: {
      holderIdentity: pod,
      leaseDurationSeconds: PEER_LEASE_DURATION_SECONDS,
      renewTime: metav1MicroTime(now.getTime()),
    },
  } as KubernetesObject;
}

export function peerLeaseName(pod: string): string {
  return `overlay-peer-${pod}`;
}

export interface OverlayPeerOptions {
  /** The pod's name: the overlay device's MAC is derived from it. */
  readonly name: string;
  /** The pod's addresses; the one of `underlayFamily` carries the overlay. */
  readonly podIPs: readonly string[];
  /** The shoot's primary family: the machines' overlay runs over their pod addresses of it. */
  readonly underlayFamily: IPFamily;
  readonly kubeConfig: KubeConfig;
  readonly serviceCIDRs: readonly string[];
  readonly log: (line: string) => void;
}

const NODES = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false } as const;

/** Keeps the overlay and the routes in sync with the shoot's Nodes until `signal` aborts. */
export async function runOverlayPeer(opts: OverlayPeerOptions, signal: AbortSignal): Promise<void> {
  const underlay = underlayAddress([opts.underlayFamily], opts.podIPs);
  const overlay = new VXLANOverlay(`control-plane/${opts.name}`, underlay, opts.log);
  overlay.ensureDevice(linkMTUOf(underlay));
  const client = new ResourceClient(opts.kubeConfig);
  let lastError: string | undefined;
  let lastRoutes = '';
  let renewedAt = 0;
  let readAt = 0;
  const nodes = new ResourceChanges<NodeInfo>(
    'Nodes',
    relevantNode,
    (resourceVersion, onEvent, watchSignal) =>
      new Promise<void>((resolve, reject) => {
        const opts = { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
        client
          .watch<NodeInfo & KubernetesObject>(
            NODES,
            opts,
            (type, object) => onEvent({ type, object }),
            (err) => (err === undefined ? resolve() : reject(err as Error)),
          )
          .then((handle) => {
            if (watchSignal.aborted) return (handle.abort(), resolve());
            watchSignal.addEventListener('abort', () => (handle.abort(), resolve()), { once: true });
          }, reject);
      }),
    opts.log,
  );
  try {
    while (!signal.aborted) {
      try {
        if (Date.now() - renewedAt >= PEER_LEASE_RENEW_MS) {
          await client.apply(LEASES, peerLease(opts.name, underlay, opts.podIPs, new Date()), {
            fieldManager: 'gardener-ipv6-overlay-peer',
            force: true,
            signal,
          });
          renewedAt = Date.now();
        }
        if (nodes.hasChanged || Date.now() - readAt >= RESYNC_MS) {
          readAt = 0;
          overlay.sync(await nodes.list(() => client.list<NodeInfo & KubernetesObject>(NODES, { signal })));
          const routes = serviceRouteCommands(opts.serviceCIDRs, overlay.current());
          const summary = JSON.stringify(routes);
          // Replaced when they change, and at each resync: a route someone removed comes back.
          for (const command of routes) run(command);
          if (summary !== lastRoutes)
            opts.log(`routes: ${routes.map((r) => `${r[3]} via ${r[5]}`).join(', ') || 'none'}`);
          lastRoutes = summary;
          readAt = Date.now();
        }
        lastError = undefined;
      } catch (e) {
        const message = (e as Error).message;
        if (message !== lastError && !signal.aborted) opts.log(`sync: ${message}`);
        lastError = message;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, OVERLAY_PEER_SYNC_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  } finally {
    nodes.stop();
    // Gone with the pod: the machines drop the peer at once instead of when its Lease runs out.
    await client
      .delete(LEASES, peerLeaseName(opts.name), 'kube-system', { signal: AbortSignal.timeout(3_000) })
      .catch(() => {});
    client.close();
  }
}
