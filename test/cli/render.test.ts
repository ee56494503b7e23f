import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cli, tempFile } from '../support/cli.js';

const example = (name: string) => join(import.meta.dirname, '..', '..', 'examples', name);
const ipv6 = [
  '-f',
  example('seed-ipv6.yaml'),
  '-f',
  example('shoot-ipv6.yaml'),
  '--feature-gates',
  'IPv6SingleStack=true',
];

describe('gardener-ipv6 render', () => {
  it('prints the reconcile objects of an IPv6 shoot as a YAML stream', async () => {
    const run = await cli(['render', ...ipv6]);
    expect(run.code).toBe(0);
    const objects = parseAllDocuments(run.stdout).map((d) => d.toJS());
    expect(objects.slice(0, 12).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/shoot--local--local',
      'Service/kube-apiserver',
      'Network/local',
      'Secret/dnsrecord-local',
      'DNSRecord/local-external-v6',
      'DNSRecord/local-internal-v6',
      'OperatingSystemConfig/local-worker-local',
      'NetworkPolicy/deny-all',
      'NetworkPolicy/allow-to-public-networks',
      'NetworkPolicy/allow-to-private-networks',
      'NetworkPolicy/allow-to-blocked-cidrs',
      'NetworkPolicy/allow-to-dns',
    ]);
    expect(objects.find((o) => o.kind === 'Network').spec.ipFamilies).toEqual(['IPv6']);
    // Then what the calico extension renders for that Network.
    const pools = objects.filter((o) => o.kind === 'IPPool');
    expect(pools.map((p) => [p.metadata.name, p.spec.cidr, p.spec.blockSize])).toEqual([
      ['default-ipv6-ippool', 'fd00:10:3::/56', 122],
    ]);
    const calicoNode = objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'calico-node');
    const env = calicoNode.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env).toContainEqual({ name: 'FELIX_IPV6SUPPORT', value: 'true' });
    expect(env).toContainEqual({ name: 'IP', value: 'none' });
  });

  it('exits 1 with the Status when the shoot carries calico settings its families forbid', async () => {
    const shoot = tempFile(
      'shoot.yaml',
      `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: s, namespace: garden-dev}
spec:
  cloudProfile: {name: local}
  region: local
  provider: {type: local, workers: [{name: w}]}
  networking: {type: calico, ipFamilies: [IPv6], providerConfig: {ipv4: {pool: vxlan}}}
`,
    );
    const run = await cli(['render', '-f', example('seed-ipv6.yaml'), '-f', shoot, ...ipv6.slice(4), '-o', 'json']);
    expect(run.code).toBe(1);
    const status = JSON.parse(run.stdout);
    expect(status).toMatchObject({ kind: 'Status', code: 422 });
    expect(status.details.causes[0].field).toBe('spec.networking.providerConfig.ipv4');
  });

  it('prints one v1 List with -o json and uses the load balancer addresses given by flags', async () => {
    const run = await cli(['render', ...ipv6, '-o', 'json', '--load-balancer-ipv6', '2001:DB8::10']);
    expect(run.code).toBe(0);
    const list = JSON.parse(run.stdout);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    const record = list.items.find((o: { kind: string }) => o.kind === 'DNSRecord');
    expect(record.spec.values).toEqual(['2001:db8::10']);
  });

  it('renders a dual-stack shoot with A and AAAA records', async () => {
    const run = await cli([
      'render',
      '-f',
      example('seed-dual-stack.yaml'),
      '-f',
      example('shoot-dual-stack.yaml'),
      '--feature-gates',
      'DualStack=true',
      '-o',
      'json',
    ]);
    expect(run.code).toBe(0);
    const records = JSON.parse(run.stdout).items.filter((o: { kind: string }) => o.kind === 'DNSRecord');
    expect(records.map((r: { spec: { recordType: string } }) => r.spec.recordType)).toEqual(['A', 'A', 'AAAA', 'AAAA']);
  });

  it('exits 1 with the Status when the shoot is invalid', async () => {
    const run = await cli(['render', '-f', example('seed-ipv6.yaml'), '-f', example('shoot-ipv6.yaml'), '-o', 'json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.split('\n}\n')[0] + '\n}')).toMatchObject({ kind: 'Status', code: 422 });
  });

  it('exits 2 without a seed, or with a bad load balancer address', async () => {
    expect((await cli(['render', '-f', example('shoot-ipv6.yaml')])).stderr).toContain('render needs exactly one Seed');
    const bad = await cli(['render', ...ipv6, '--load-balancer-ipv6', '10.0.0.1']);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('"10.0.0.1" is not an IPv6 address');
  });

  it('fails naming the seed field when a dual-stack shoot has no second-family range', async () => {
    const seed = tempFile(
      'seed.yaml',
      'apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: bare}\nspec:\n  networks: {ipFamilies: [IPv4, IPv6], nodes: 172.18.0.0/16, pods: 10.1.0.0/16, services: 10.2.0.0/16}\n',
    );
    const run = await cli([
      'render',
      '-f',
      seed,
      '-f',
      example('shoot-dual-stack.yaml'),
      '--feature-gates',
      'DualStack=true',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('spec.networks.shootDefaults.pods');
  });
});
