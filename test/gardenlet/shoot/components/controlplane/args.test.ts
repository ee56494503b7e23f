import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  apiServerURL,
  authenticationConfig,
  controlPlaneFiles,
  kubeAPIServerArgs,
  kubeControllerManagerArgs,
  kubeSchedulerArgs,
  nodeMaskArgs,
  type ControlPlaneSpec,
} from '../../../../../src/gardenlet/shoot/components/controlplane/args.js';

const files = controlPlaneFiles('/state/shoot--p--s');
const net = { listenAddress: '::', etcdClientURL: 'https://etcd-main-client.shoot--p--s.svc:2379' };

const ipv6: ControlPlaneSpec = {
  name: 'shoot--p--s',
  families: ['IPv6'],
  addresses: { IPv6: 'fd00:ff::2' },
  serviceCIDRs: ['fd00:10:4::/112'],
  podCIDRs: ['fd00:10:3::/56'],
  nodeCIDRMaskSizes: { IPv6: 64 },
  externalDomain: 'api.s.p.external.local.gardener.cloud',
  internalDomain: 'api.s.p.internal.local.gardener.cloud',
};
const dual: ControlPlaneSpec = {
  ...ipv6,
  families: ['IPv4', 'IPv6'],
  addresses: { IPv4: '172.18.255.2', IPv6: 'fd00:ff::2' },
  serviceCIDRs: ['10.4.0.0/16', 'fd00:10:4::/112'],
  podCIDRs: ['10.3.0.0/16', 'fd00:10:3::/56'],
  nodeCIDRMaskSizes: { IPv4: 24, IPv6: 64 },
};
const ipv4: ControlPlaneSpec = {
  ...ipv6,
  families: ['IPv4'],
  addresses: { IPv4: '172.18.255.3' },
  serviceCIDRs: ['10.4.0.0/16'],
  podCIDRs: ['10.3.0.0/16'],
  nodeCIDRMaskSizes: { IPv4: 24 },
};

const flag = (args: string[], name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

describe('kube-apiserver of a shoot', () => {
  it("listens where its pod network says and reaches etcd at its URL with etcd's CA and its client certificate", () => {
    const args = kubeAPIServerArgs(ipv6, files, net);
    expect(flag(args, 'bind-address')).toBe('::');
    expect(flag(args, 'etcd-servers')).toBe('https://etcd-main-client.shoot--p--s.svc:2379');
    expect(flag(args, 'etcd-cafile')).toBe('/state/shoot--p--s/pki/etcd-ca.crt');
    expect(flag(args, 'etcd-certfile')).toBe('/state/shoot--p--s/pki/etcd-client.crt');
    expect(flag(args, 'etcd-keyfile')).toBe('/state/shoot--p--s/pki/etcd-client.key');
    expect(flag(kubeAPIServerArgs(ipv4, files, { ...net, listenAddress: '0.0.0.0' }), 'bind-address')).toBe('0.0.0.0');
  });

  it('advertises the primary family and serves the service ranges in family order', () => {
    expect(flag(kubeAPIServerArgs(dual, files, net), 'advertise-address')).toBe('172.18.255.2');
    expect(flag(kubeAPIServerArgs(dual, files, net), 'service-cluster-ip-range')).toBe('10.4.0.0/16,fd00:10:4::/112');
    expect(flag(kubeAPIServerArgs(ipv6, files, net), 'secure-port')).toBe('443');
  });

  it('lets anonymous requests read the health endpoints only, as Gardener configures it', () => {
    const args = kubeAPIServerArgs(ipv6, files, net);
    expect(flag(args, 'authentication-config')).toBe('/state/shoot--p--s/pki/authentication-config.yaml');
    // The flag and the file's anonymous section exclude each other.
    expect(args.some((a) => a.startsWith('--anonymous-auth'))).toBe(false);
    expect(parse(authenticationConfig())).toEqual({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }, { path: '/healthz' }] },
    });
  });

  it('closes its watches within 2 s when it stops, rather than waiting for their request timeout', () => {
    expect(flag(kubeAPIServerArgs(ipv6, files, net), 'shutdown-watch-termination-grace-period')).toBe('2s');
  });

  it('brackets IPv6 addresses in its URL', () => {
    expect(apiServerURL(ipv6)).toBe('https://[fd00:ff::2]:443');
    expect(apiServerURL(dual)).toBe('https://172.18.255.2:443');
    expect(apiServerURL(dual, 'IPv6')).toBe('https://[fd00:ff::2]:443');
    expect(() => apiServerURL(ipv4, 'IPv6')).toThrow(/no IPv6 load-balancer address/);
  });
});

describe('kube-controller-manager of a shoot', () => {
  it('allocates node ranges from the pods with the node mask: one flag single-stack, one per family dual-stack', () => {
    expect(nodeMaskArgs(ipv6)).toEqual(['--node-cidr-mask-size=64']);
    expect(nodeMaskArgs(ipv4)).toEqual(['--node-cidr-mask-size=24']);
    expect(nodeMaskArgs(dual)).toEqual(['--node-cidr-mask-size-ipv4=24', '--node-cidr-mask-size-ipv6=64']);
    const args = kubeControllerManagerArgs(dual, files, net);
    expect(flag(args, 'allocate-node-cidrs')).toBe('true');
    expect(flag(args, 'cluster-cidr')).toBe('10.3.0.0/16,fd00:10:3::/56');
  });

  it("allocates nothing for a workerless shoot and serves its health on the pod's addresses, for the probes", () => {
    const args = kubeControllerManagerArgs({ ...ipv6, podCIDRs: [] }, files, net);
    expect(flag(args, 'allocate-node-cidrs')).toBe('false');
    expect(flag(args, 'cluster-cidr')).toBeUndefined();
    expect(flag(args, 'bind-address')).toBe('::');
  });
});

describe('leader election of the controllers', () => {
  const seconds = (args: string[], name: string) => Number(/^(\d+)s$/.exec(flag(args, name) ?? '')?.[1]);

  it("keeps client-go's order (lease > renew deadline > 1.2 x retry period) in both, and releases on exit", () => {
    const kcm = kubeControllerManagerArgs(ipv6, files, net);
    for (const args of [kcm, kubeSchedulerArgs(files, net)]) {
      expect(flag(args, 'leader-elect')).toBe('true');
      const lease = seconds(args, 'leader-elect-lease-duration');
      const renew = seconds(args, 'leader-elect-renew-deadline');
      const retry = seconds(args, 'leader-elect-retry-period');
      expect(lease).toBeGreaterThan(renew);
      expect(renew).toBeGreaterThan(1.2 * retry);
      // Renewed at most every 5 s, given up only after 30 s without an answer: a busy seed's pace.
      expect(retry).toBeGreaterThanOrEqual(5);
      expect(renew).toBeGreaterThanOrEqual(30);
    }
    expect(kcm).toContain('--feature-gates=ControllerManagerReleaseLeaderElectionLockOnExit=true');
  });
});
