import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { admit } from '../../../src/apis/admission.js';
import type { Seed } from '../../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../../src/apis/extensions/v1alpha1/dnsrecord.js';
import type { OperatingSystemConfig } from '../../../src/apis/extensions/v1alpha1/operatingsystemconfig.js';
import { featureGates } from '../../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../../src/gardenlet/dns-provider.js';
import {
  DEFAULT_HOST_IPS,
  desiredLoadBalancerIngress,
  parseHostIPs,
} from '../../../src/extensions/provider-local/loadbalancer/ingress.js';
import type { desiredAPIServerService } from '../../../src/gardenlet/shoot/components/apiserver-service.js';
import { ingressIPsByFamily } from '../../../src/gardenlet/shoot/components/apiserver-service.js';
import { staleDNSRecordNames } from '../../../src/gardenlet/shoot/components/dns-records.js';
import { desiredNetworkPolicies } from '../../../src/gardenlet/shoot/components/network-policies.js';
import { sysctlLines } from '../../../src/gardenlet/shoot/components/operating-system-config.js';
import { renderShootObjects } from '../../../src/gardenlet/shoot/desired.js';
import { shootNetworkingStatus, ShootNetworksError } from '../../../src/apis/core/v1beta1/networks.js';

const gates = featureGates({ IPv6SingleStack: true, DualStack: true });

function seedOf(networks: Record<string, unknown>, name = 'seed-a'): Seed {
  const result = admit({
    object: { apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Seed', metadata: { name }, spec: { networks } },
    gates,
  });
  expect(result.errors).toEqual([]);
  return result.object as Seed;
}

function shootOn(seed: Seed, networking: Record<string, unknown>, name = 'alpha'): Shoot {
  const result = admit({
    object: {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name, namespace: 'garden-dev' },
      spec: {
        cloudProfile: { name: 'local' },
        region: 'local',
        seedName: seed.metadata.name,
        provider: { type: 'local', workers: [{ name: 'w' }] },
        networking: { type: 'calico', ...networking },
      },
    },
    seed,
    gates,
  });
  expect(result.errors).toEqual([]);
  return result.object as Shoot;
}

const ipv6Seed = () =>
  seedOf({
    ipFamilies: ['IPv6'],
    nodes: 'fd00:10::/64',
    pods: 'fd00:10:1::/56',
    services: 'fd00:10:2::/112',
    shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
    blockCIDRs: ['fd00:ec2::254/128'],
  });
const ipv4Seed = () =>
  seedOf({ nodes: '172.18.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16', blockCIDRs: ['169.254.169.254/32'] });
const dualSeed = (shootDefaults: Record<string, string> = { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' }) =>
  seedOf({
    ipFamilies: ['IPv4', 'IPv6'],
    nodes: '172.18.0.0/16',
    pods: '10.1.0.0/16',
    services: '10.2.0.0/16',
    shootDefaults,
  });

const dns = localDNSProvider();
const byKind = (objects: { kind?: string }[], kind: string) => objects.filter((o) => o.kind === kind);
const policy = (objects: { kind?: string }[], name: string) =>
  byKind(objects, 'NetworkPolicy').find((p) => (p as V1NetworkPolicy).metadata?.name === name) as
    V1NetworkPolicy | undefined;
const cidrsOf = (p: V1NetworkPolicy | undefined) =>
  p?.spec?.egress
    ?.flatMap((r) => r.to ?? [])
    .map((peer) => peer.ipBlock)
    .filter((b) => b !== undefined);

describe('desired objects of an IPv6 shoot', () => {
  const seed = ipv6Seed();
  const shoot = shootOn(seed, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
  const objects = renderShootObjects(seed, shoot, (s) => desiredLoadBalancerIngress(s, DEFAULT_HOST_IPS), dns);

  it('creates the seed namespace with the shoot labels', () => {
    expect(byKind(objects, 'Namespace')).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: 'shoot--dev--alpha',
          labels: {
            'gardener.cloud/role': 'shoot',
            'project.gardener.cloud/name': 'dev',
            'shoot.gardener.cloud/name': 'alpha',
          },
        },
      },
    ]);
  });

  it('creates a single-stack IPv6 LoadBalancer service', () => {
    const [service] = byKind(objects, 'Service') as ReturnType<typeof desiredAPIServerService>[];
    expect(service!.spec).toMatchObject({ type: 'LoadBalancer', ipFamilies: ['IPv6'], ipFamilyPolicy: 'SingleStack' });
    expect(service!.status?.loadBalancer?.ingress).toEqual([{ ip: '::1', ipMode: 'VIP' }]);
  });

  it('creates a Network with the shoot CIDRs and ipFamilies [IPv6]', () => {
    expect(byKind(objects, 'Network')).toEqual([
      expect.objectContaining({
        metadata: expect.objectContaining({ name: 'alpha', namespace: 'shoot--dev--alpha' }),
        spec: { type: 'calico', podCIDR: 'fd00:10:3::/56', serviceCIDR: 'fd00:10:4::/112', ipFamilies: ['IPv6'] },
      }),
    ]);
  });

  it('creates only AAAA records with the -v6 suffix, valued with the IPv6 ingress address', () => {
    const records = byKind(objects, 'DNSRecord') as DNSRecord[];
    expect(records.map((r) => [r.metadata.name, r.spec.recordType, r.spec.name, r.spec.values])).toEqual([
      ['alpha-external-v6', 'AAAA', 'api.alpha.dev.external.local.gardener.cloud', ['::1']],
      ['alpha-internal-v6', 'AAAA', 'api.alpha.dev.internal.local.gardener.cloud', ['::1']],
    ]);
    expect(records.every((r) => r.spec.type === 'local' && r.spec.secretRef?.name === 'dnsrecord-local')).toBe(true);
  });

  it('configures IPv6 forwarding and no IPv4 sysctls', () => {
    const [osc] = byKind(objects, 'OperatingSystemConfig') as OperatingSystemConfig[];
    expect(osc!.metadata.name).toBe('alpha-worker-w');
    expect(osc!.spec.files!.filter((f) => f.path.startsWith('/etc/sysctl.d/'))).toEqual([
      {
        path: '/etc/sysctl.d/99-k8s-general.conf',
        permissions: 0o644,
        content: {
          inline: { encoding: '', data: 'net.ipv6.conf.all.forwarding = 1\nnet.ipv6.conf.default.forwarding = 1\n' },
        },
      },
    ]);
    expect(osc!.spec.units).toEqual([
      {
        name: 'systemd-sysctl.service',
        command: 'restart',
        enable: true,
        filePaths: ['/etc/sysctl.d/99-k8s-general.conf'],
      },
      {
        name: 'kubelet.service',
        command: 'restart',
        enable: true,
        filePaths: ['/var/lib/kubelet/config/kubelet', '/var/lib/kubelet/config/node-labels'],
      },
    ]);
  });

  it('allows egress to ::/0 and IPv6 private ranges only', () => {
    expect(cidrsOf(policy(objects, 'allow-to-public-networks'))).toEqual([
      {
        cidr: '::/0',
        except: ['fe80::/10', 'fc00::/7', 'fd00:ec2::254/128', 'fd00:10:1::/56', 'fd00:10:2::/112', 'fd00:10::/64'],
      },
    ]);
    expect(cidrsOf(policy(objects, 'allow-to-private-networks'))).toEqual([
      { cidr: 'fe80::/10' },
      {
        cidr: 'fc00::/7',
        except: [
          'fd00:10:1::/56',
          'fd00:10:2::/112',
          'fd00:10::/64',
          'fd00:10:3::/56',
          'fd00:10:4::/112',
          'fd00:10:1:100::/56',
        ],
      },
    ]);
    expect(cidrsOf(policy(objects, 'allow-to-blocked-cidrs'))).toEqual([{ cidr: 'fd00:ec2::254/128' }]);
    const allCIDRs = byKind(objects, 'NetworkPolicy').flatMap((p) => cidrsOf(p as V1NetworkPolicy) ?? []);
    expect(allCIDRs.every((b) => b?.cidr.includes(':'))).toBe(true);
  });

  it('allows DNS to the IPv6 cluster DNS service and node-local DNS on 53 and 8053', () => {
    const p = policy(objects, 'allow-to-dns')!;
    expect(cidrsOf(p)).toEqual([{ cidr: 'fd00:10:2::a/128' }, { cidr: 'fd30:1319:f1e:230b::1/128' }]);
    // What a policy sees of a Service's traffic is its pods' addresses: the cluster DNS pods are a peer too.
    expect(p.spec?.egress?.[0]?.to?.filter((peer) => peer.ipBlock === undefined)).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }] },
      },
    ]);
    expect(p.spec?.egress?.[0]?.ports).toEqual([
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
      { protocol: 'UDP', port: 8053 },
      { protocol: 'TCP', port: 8053 },
    ]);
  });
});

describe('desired objects of an IPv4 shoot', () => {
  const seed = ipv4Seed();
  const shoot = shootOn(seed, { nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' });
  const objects = renderShootObjects(seed, shoot, (s) => desiredLoadBalancerIngress(s, DEFAULT_HOST_IPS), dns);

  it('creates A records without suffix and IPv4 sysctls only', () => {
    const records = byKind(objects, 'DNSRecord') as DNSRecord[];
    expect(records.map((r) => [r.metadata.name, r.spec.recordType, r.spec.values])).toEqual([
      ['alpha-external', 'A', ['127.0.0.1']],
      ['alpha-internal', 'A', ['127.0.0.1']],
    ]);
    expect(sysctlLines(['IPv4'])).toEqual(['net.ipv4.conf.all.forwarding = 1', 'net.ipv4.conf.default.forwarding = 1']);
  });

  it('has IPv4 policies only', () => {
    expect(cidrsOf(policy(objects, 'allow-to-public-networks'))).toEqual([
      {
        cidr: '0.0.0.0/0',
        except: [
          '10.0.0.0/8',
          '172.16.0.0/12',
          '192.168.0.0/16',
          '100.64.0.0/10',
          '169.254.169.254/32',
          '10.1.0.0/16',
          '10.2.0.0/16',
          '172.18.0.0/16',
        ],
      },
    ]);
    expect(cidrsOf(policy(objects, 'allow-to-private-networks'))).toEqual([
      { cidr: '10.0.0.0/8', except: ['10.1.0.0/16', '10.2.0.0/16', '10.3.0.0/16', '10.4.0.0/16', '10.10.0.0/16'] },
      { cidr: '172.16.0.0/12', except: ['172.18.0.0/16'] },
      { cidr: '192.168.0.0/16' },
      { cidr: '100.64.0.0/10' },
    ]);
    expect(cidrsOf(policy(objects, 'allow-to-dns'))).toEqual([{ cidr: '10.2.0.10/32' }, { cidr: '169.254.20.10/32' }]);
  });
});

describe('desired objects of a dual-stack shoot', () => {
  const seed = dualSeed();
  const shoot = shootOn(seed, {
    ipFamilies: ['IPv4', 'IPv6'],
    nodes: '10.10.0.0/16',
    pods: '10.3.0.0/16',
    services: '10.4.0.0/16',
  });

  it('creates A and AAAA records side by side, and both sysctl families', () => {
    const objects = renderShootObjects(
      seed,
      shoot,
      (s) => desiredLoadBalancerIngress(s, parseHostIPs('127.0.0.2', '::2')),
      dns,
    );
    const records = byKind(objects, 'DNSRecord') as DNSRecord[];
    expect(records.map((r) => [r.metadata.name, r.spec.recordType, r.spec.values])).toEqual([
      ['alpha-external', 'A', ['127.0.0.2']],
      ['alpha-internal', 'A', ['127.0.0.2']],
      ['alpha-external-v6', 'AAAA', ['::2']],
      ['alpha-internal-v6', 'AAAA', ['::2']],
    ]);
    const [service] = byKind(objects, 'Service') as ReturnType<typeof desiredAPIServerService>[];
    expect(service!.spec).toMatchObject({ ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' });
    const [osc] = byKind(objects, 'OperatingSystemConfig') as OperatingSystemConfig[];
    expect(osc!.spec.files?.[0]?.content.inline?.data.trim().split('\n')).toEqual([
      'net.ipv4.conf.all.forwarding = 1',
      'net.ipv4.conf.default.forwarding = 1',
      'net.ipv6.conf.all.forwarding = 1',
      'net.ipv6.conf.default.forwarding = 1',
    ]);
  });

  it('takes the second family ranges from the seed shootDefaults', () => {
    expect(shootNetworkingStatus(shoot, seed)).toEqual({
      pods: ['10.3.0.0/16', 'fd00:10:3::/56'],
      services: ['10.4.0.0/16', 'fd00:10:4::/112'],
      nodes: ['10.10.0.0/16'],
    });
  });

  it('names the seed field to set when the seed has no range of the second family', () => {
    const bare = dualSeed({});
    expect(() => shootNetworkingStatus(shoot, bare)).toThrow(ShootNetworksError);
    expect(() => shootNetworkingStatus(shoot, bare)).toThrow(/spec\.networks\.shootDefaults\.pods/);
  });

  it('has policies for both seed families', () => {
    const policies = desiredNetworkPolicies({
      namespace: 'n',
      seed,
      shootNetworks: shootNetworkingStatus(shoot, seed),
    });
    expect(cidrsOf(policies.find((p) => p.metadata?.name === 'allow-to-public-networks'))?.map((b) => b?.cidr)).toEqual(
      ['0.0.0.0/0', '::/0'],
    );
    // Dual-stack seed: its own networks are not excepted from the public policy (they are private anyway).
    expect(cidrsOf(policies.find((p) => p.metadata?.name === 'allow-to-public-networks'))?.[0]?.except).toEqual([
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '100.64.0.0/10',
    ]);
    expect(policies.map((p) => p.metadata?.name)).toEqual([
      'deny-all',
      'allow-to-public-networks',
      'allow-to-private-networks',
      'allow-to-dns',
    ]);
  });

  it("denies all ingress and egress of a shoot's namespace, not of the seed's own garden namespace", () => {
    const shootPolicies = desiredNetworkPolicies({ namespace: 'n', seed, shootNetworks: {} });
    expect(shootPolicies.find((p) => p.metadata?.name === 'deny-all')?.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
    });
    const gardenPolicies = desiredNetworkPolicies({ namespace: 'garden', seed });
    expect(gardenPolicies.map((p) => p.metadata?.name)).not.toContain('deny-all');
  });
});

describe('stale DNS records', () => {
  it('are those of the families the shoot left', () => {
    const seed = dualSeed();
    const v4 = shootOn(seed, { nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' });
    expect(staleDNSRecordNames(v4)).toEqual(['alpha-external-v6', 'alpha-internal-v6']);
  });
});

describe('provider-local load balancer ingress', () => {
  it('gives one host IP per family in the order of spec.ipFamilies', () => {
    const service = { spec: { ipFamilies: ['IPv6', 'IPv4'] } };
    expect(desiredLoadBalancerIngress(service)).toEqual([
      { ip: '::1', ipMode: 'VIP' },
      { ip: '127.0.0.1', ipMode: 'VIP' },
    ]);
    expect(
      ingressIPsByFamily({ status: { loadBalancer: { ingress: [{ ip: '0:0::1' }, { ip: '10.0.0.1' }] } } }),
    ).toEqual({
      IPv4: ['10.0.0.1'],
      IPv6: ['::1'],
    });
  });

  it('rejects host IPs of the wrong family', () => {
    expect(() => parseHostIPs('::1', '::1')).toThrow('"::1" is not an IPv4 address');
    expect(() => parseHostIPs('127.0.0.1', '10.0.0.1')).toThrow('"10.0.0.1" is not an IPv6 address');
    expect(parseHostIPs('127.0.0.1', '2001:DB8::1').IPv6).toBe('2001:db8::1');
  });
});
