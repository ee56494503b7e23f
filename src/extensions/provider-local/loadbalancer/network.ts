/**
 * The load-balancer network of a local environment: a bridge in the environment's network namespace carrying the
 * gateway address of each load-balancer network, so the shoots' API server addresses are reachable from there
 * (and from the shell that started `up`, when that is the same namespace). The shoot control planes' namespaces
 * plug into it.
 */
import { bridgeName, deleteLink, ensureBridge } from '../../../system/network.js';
import {
  DEFAULT_LOAD_BALANCER_NETWORKS,
  gatewayCIDR,
  parseLoadBalancerNetworks,
  type LoadBalancerNetworks,
} from './pool.js';

export class LoadBalancerNetwork {
  readonly bridge: string;
  readonly networks: LoadBalancerNetworks;

  /** `tag` tells two environments of one process apart (tests). */
  constructor(networks: LoadBalancerNetworks = DEFAULT_LOAD_BALANCER_NETWORKS, tag = 'lb') {
    parseLoadBalancerNetworks(networks);
    this.networks = networks;
    this.bridge = bridgeName(tag);
  }

  deploy(): void {
    const gateways = Object.values(this.networks)
      .filter((n): n is string => n !== undefined)
      .map(gatewayCIDR);
    ensureBridge(this.bridge, gateways);
  }

  /** Removes the bridge (the control planes' veth ends go with their namespaces). */
  destroy(): void {
    deleteLink(this.bridge);
  }
}
