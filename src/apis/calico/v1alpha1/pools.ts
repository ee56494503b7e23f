/**
 * What calico's NetworkConfig decides for the pod network of each family, on every node: the overlay statement
 * turned into a backend and pool modes (docs/calico.md section 3), then each family's pool. The calico chart's values
 * and the machines that stand in for calico-node both follow it. Pure.
 */
import { isIPFamily } from '../../validation/ip-families.js';
import type { IPFamily } from '../../../net/cidr.js';
import { Backend, familiesOrIPv4, PoolMode, PoolType, type NetworkConfig } from './config.js';

/**
 * What a family's pool decides on every node: how pod traffic between nodes travels (`mode` of the pool's
 * `encapsulation`: `Always` tunnels it, `Never` routes it directly, `CrossSubnet` tunnels only across subnets) and
 * whether pod egress leaving the cluster is masqueraded (`natOutgoing`).
 */
export interface CalicoPoolSettings {
  readonly family: IPFamily;
  readonly encapsulation: 'IPIP' | 'VXLAN';
  readonly mode: 'Always' | 'Never' | 'CrossSubnet';
  readonly natOutgoing: boolean;
}

/**
 * The pool settings of each of the Network's families, as calicoValues renders them (IPPools, or calico-node's env
 * without them). The validation keeps `Off` out of what renders; it counts as `Never` here.
 */
export function calicoPoolSettings(
  config: NetworkConfig | undefined,
  ipFamilies: readonly string[] | undefined,
): CalicoPoolSettings[] {
  const families = familiesOrIPv4(ipFamilies as string[] | undefined).filter(isIPFamily);
  return poolSettings(config ?? {}, families);
}

export function poolSettings(cfg: NetworkConfig, families: readonly IPFamily[]): CalicoPoolSettings[] {
  const hasIPv4 = families.includes('IPv4');
  const hasIPv6 = families.includes('IPv6');
  const overlay = applyOverlay(cfg, hasIPv6);
  const overlayOff = cfg.overlay !== undefined && cfg.overlay.enabled !== true;
  const backend = overlay.backend ?? Backend.Bird;
  let ipv4Pool: string = PoolType.IPIP;
  let ipv4Mode: string = PoolMode.Always;
  if (backend === Backend.None || overlayOff) ipv4Mode = PoolMode.Never;
  if (hasIPv4 && cfg.vxlan?.enabled === true) {
    ipv4Pool = PoolType.VXLAN;
    ipv4Mode = PoolMode.Always;
  }
  if (cfg.ipv4?.pool !== undefined) ipv4Pool = cfg.ipv4.pool;
  if (overlay.ipv4Mode !== undefined) ipv4Mode = overlay.ipv4Mode;
  // With an overlay statement the IPv4 IPPool is rendered, and it beats the env.
  if (cfg.overlay !== undefined) {
    ipv4Mode = overlayOff ? PoolMode.Never : PoolMode.Always;
    ipv4Pool = !overlayOff && cfg.vxlan?.enabled === true ? PoolType.VXLAN : PoolType.IPIP;
  }
  const ipv6Mode = overlay.ipv6Mode ?? PoolMode.Never;
  const mode = (m: string): CalicoPoolSettings['mode'] =>
    m === PoolMode.Always || m === PoolMode.CrossSubnet ? m : PoolMode.Never;
  return families.map((family) =>
    family === 'IPv4'
      ? {
          family,
          encapsulation: ipv4Pool === PoolType.VXLAN ? 'VXLAN' : 'IPIP',
          mode: mode(ipv4Mode),
          natOutgoing: true,
        }
      : {
          family,
          encapsulation: 'VXLAN',
          mode: mode(ipv6Mode),
          natOutgoing: cfg.ipv6?.sourceNATEnabled ?? cfg.wireguardEncryption === true,
        },
  );
}

/**
 * Whether the pods' DNS traffic to their nodes' upstream resolvers is masqueraded to the node (`snatToUpstreamDNS`):
 * only with the overlay stated off, where pod addresses travel unchanged and a resolver outside the cluster has no
 * route back to them; on by default there, a stated switch without `enabled` off (as Go decodes it).
 */
export function calicoSNATToUpstreamDNS(config: NetworkConfig | undefined): boolean {
  const cfg = config ?? {};
  const overlayOff = cfg.overlay !== undefined && cfg.overlay.enabled !== true;
  return overlayOff && (cfg.snatToUpstreamDNS ? cfg.snatToUpstreamDNS.enabled === true : true);
}

/** The pool modes and backend after the overlay statement (§3): what networking-calico's actuator writes. */
export interface OverlayOutcome {
  readonly backend?: string;
  readonly ipv4Mode?: string;
  readonly ipv6Mode?: string;
}

export function applyOverlay(config: NetworkConfig, hasIPv6: boolean): OverlayOutcome {
  let backend = config.backend;
  let ipv4Mode = config.ipv4 !== undefined ? config.ipv4.mode : config.ipip;
  let ipv6Mode = config.ipv6?.mode;
  const setPoolMode = (mode: PoolMode) => {
    if (hasIPv6) ipv6Mode = mode;
    else ipv4Mode = mode;
    backend = mode === PoolMode.Never ? Backend.None : Backend.Bird;
  };
  const overlay = config.overlay;
  if (overlay) {
    if (overlay.enabled === true) {
      setPoolMode(PoolMode.Always);
      if (config.vxlan?.enabled === true) backend = Backend.VXLAN;
    } else {
      setPoolMode(PoolMode.Never);
      if (overlay.createPodRoutes === true) backend = Backend.Bird;
    }
  } else if (hasIPv6) {
    setPoolMode(PoolMode.Never);
  }
  return { backend, ipv4Mode, ipv6Mode };
}
