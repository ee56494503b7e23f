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

/**
 * The one decision of the backend and of each family's pool from the NetworkConfig, in networking-calico's order:
 * what calico-node's environment says (`ipv4Pool`, `ipv4Mode`, `ipv6Mode`, `ipv6NATOutgoing`), and whether the IPv4
 * IPPool is rendered as an object (an overlay statement), which then beats the environment. The chart's values
 * (extensions/network/values.ts) and the pool settings the machines follow ({@link poolSettings}) both read it.
 */
export interface PoolDecisions {
  readonly backend: string;
  /** The IPv4 pool's encapsulation in calico-node's environment. */
  readonly ipv4Pool: string;
  /** The IPv4 pool's mode in calico-node's environment. */
  readonly ipv4Mode: string;
  readonly ipv6Mode: string;
  readonly ipv6NATOutgoing: boolean;
  /** An overlay statement: the IPv4 IPPool is rendered as an object. */
  readonly overlayStated: boolean;
  /** The overlay stated off. */
  readonly overlayOff: boolean;
  /** The overlay stated on with VXLAN: the IPv4 IPPool encapsulates in VXLAN. */
  readonly vxlanOverlay: boolean;
}

export function poolDecisions(cfg: NetworkConfig, families: readonly IPFamily[]): PoolDecisions {
  const hasIPv4 = families.includes('IPv4');
  const hasIPv6 = families.includes('IPv6');
  const overlay = applyOverlay(cfg, hasIPv6);
  const overlayStated = cfg.overlay !== undefined;
  const overlayOff = overlayStated && cfg.overlay?.enabled !== true;
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
  return {
    backend,
    ipv4Pool,
    ipv4Mode,
    ipv6Mode: overlay.ipv6Mode ?? PoolMode.Never,
    ipv6NATOutgoing: cfg.ipv6?.sourceNATEnabled ?? cfg.wireguardEncryption === true,
    overlayStated,
    overlayOff,
    vxlanOverlay: cfg.overlay?.enabled === true && cfg.vxlan?.enabled === true,
  };
}

/** Each family's pool as it is in force: the IPv4 IPPool's when it is rendered (it beats the env), else the env's. */
export function poolSettings(cfg: NetworkConfig, families: readonly IPFamily[]): CalicoPoolSettings[] {
  const d = poolDecisions(cfg, families);
  let ipv4Pool = d.ipv4Pool;
  let ipv4Mode = d.ipv4Mode;
  if (d.overlayStated) {
    ipv4Mode = d.overlayOff ? PoolMode.Never : PoolMode.Always;
    ipv4Pool = d.vxlanOverlay ? PoolType.VXLAN : PoolType.IPIP;
  }
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
      : { family, encapsulation: 'VXLAN', mode: mode(d.ipv6Mode), natOutgoing: d.ipv6NATOutgoing },
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
