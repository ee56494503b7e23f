/**
 * calico's CNI configuration list for a Network: the calico plugin with its IPAM (calico-ipam, or host-local with
 * the node's pod ranges), portmap and bandwidth, as install-cni writes it to `/etc/cni/net.d`. Pure.
 */
import { formatCIDR, parseCIDR, type IPFamily } from '../../net/cidr.js';
import { IPAMType, USE_POD_CIDR } from '../../apis/calico/v1alpha1/config.js';

/** Written as an unquoted number by install-cni (`"mtu": __CNI_MTU__`), from the ConfigMap's `veth_mtu`. */
export const CNI_MTU_PLACEHOLDER = '__CNI_MTU__';

/** The calico CNI plugin's `ipam` section. */
export interface CNIIPAMConfig {
  readonly type: 'calico-ipam' | 'host-local';
  readonly subnet?: string;
  readonly ranges?: readonly (readonly { readonly subnet: string }[])[];
  readonly assign_ipv4: 'true' | 'false';
  readonly assign_ipv6: 'true' | 'false';
}

/** The CNI network configuration list calico's install-cni writes to `/etc/cni/net.d` (after substitutions). */
export interface CNINetworkConfig {
  readonly name: string;
  readonly cniVersion: string;
  readonly plugins: readonly Record<string, unknown>[];
}

/** The keyword of the host-local plugin for the node's pod range of a family. */
const USE_POD_CIDR_KEYWORD: Record<IPFamily, string> = { IPv4: 'usePodCidr', IPv6: 'usePodCidrIPv6' };

export function cniNetworkConfig(families: readonly IPFamily[], ipamType: string, ipamCIDR?: string): CNINetworkConfig {
  const assign = {
    assign_ipv4: families.includes('IPv4') ? 'true' : 'false',
    assign_ipv6: families.includes('IPv6') ? 'true' : 'false',
  } as const;
  let ipam: CNIIPAMConfig;
  if (ipamType !== IPAMType.HostLocal) {
    ipam = { type: 'calico-ipam', ...assign };
  } else if (families.length > 1) {
    // The node's pod ranges as kube-controller-manager assigns them, IPv6 first as networking-calico has it.
    const ordered = [...families].sort((a, b) => (a === 'IPv6' ? -1 : b === 'IPv6' ? 1 : 0));
    ipam = { type: 'host-local', ranges: ordered.map((f) => [{ subnet: USE_POD_CIDR_KEYWORD[f] }]), ...assign };
  } else {
    const family = families[0]!;
    const cidr = ipamCIDR === undefined ? undefined : parseCIDR(ipamCIDR);
    const subnet =
      cidr !== undefined && ipamCIDR?.toLowerCase() !== USE_POD_CIDR.toLowerCase()
        ? formatCIDR(cidr)
        : USE_POD_CIDR_KEYWORD[family];
    ipam = { type: 'host-local', subnet, ...assign };
  }
  return {
    name: 'k8s-pod-network',
    cniVersion: '0.3.1',
    plugins: [
      {
        type: 'calico',
        log_level: 'info',
        log_file_path: '/var/log/calico/cni/cni.log',
        datastore_type: 'kubernetes',
        nodename: '__KUBERNETES_NODE_NAME__',
        mtu: CNI_MTU_PLACEHOLDER,
        ipam,
        policy: { type: 'k8s' },
        kubernetes: { kubeconfig: '__KUBECONFIG_FILEPATH__' },
      },
      { type: 'portmap', snat: true, capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

/**
 * The CNI configuration as install-cni expects it: JSON, except that `mtu` is the bare placeholder `__CNI_MTU__`.
 * No string value can produce the bare placeholder: JSON.stringify escapes the quotes around any string.
 */
export function cniNetworkConfigText(cni: CNINetworkConfig): string {
  return JSON.stringify(cni, null, 2).replace(`"mtu": "${CNI_MTU_PLACEHOLDER}"`, `"mtu": ${CNI_MTU_PLACEHOLDER}`);
}
