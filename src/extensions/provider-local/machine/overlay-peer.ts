/**
 * A control plane pod's way into the shoot's networks, as Gardener's VPN between seed and shoot provides it: a sidecar
 * of kube-apiserver joins the machines' VXLAN overlay (overlay.ts) from its pod's network namespace, with routes to
 * every Node's addresses and podCIDRs and to the shoot's service ranges. kube-apiserver then reaches shoot pods and Services
 * (`pods/proxy`, `services/proxy`, webhooks and aggregated APIs served in the shoot); the answers come back through
 * the seed's pod network, which routes the pod's own address. The Nodes are read with a client certificate bound
 * to listing Nodes only.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ResourceClient } from '../../../runtime/client.js';
import type { IPFamily } from '../../../net/cidr.js';
import type { NodeInfo } from './api-client.js';
import { underlayAddress } from './pod-agent.js';
import { linkMTUOf, run, serviceRouteCommands, VXLANOverlay } from './overlay.js';

export const OVERLAY_PEER_SYNC_MS = 2_000;

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
  try {
    while (!signal.aborted) {
      try {
        const nodes = (await client.list<NodeInfo & { metadata: { name: string } }>(NODES, { signal })).items;
        overlay.sync(nodes);
        const routes = serviceRouteCommands(opts.serviceCIDRs, overlay.current());
        for (const command of routes) run(command);
        const summary = JSON.stringify(routes);
        if (summary !== lastRoutes)
          opts.log(`routes: ${routes.map((r) => `${r[3]} via ${r[5]}`).join(', ') || 'none'}`);
        lastRoutes = summary;
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
    client.close();
  }
}
