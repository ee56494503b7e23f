/**
 * One verdict on a calico providerConfig, whoever asks: `validate` (text and `-o json`) and `render` agree for every
 * family, with the errors under `spec.networking.providerConfig`. Includes Gardener's IPv6 example Shoot with a
 * typical networking-calico providerConfig, which must be valid for `validate` and `render` alike.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cli, tempFile } from '../support/cli.js';
import { stringifyForKubectl } from '../../src/cli/kubectl-yaml.js';

const example = (name: string) => join(import.meta.dirname, '..', '..', 'examples', name);

const FAMILIES = {
  ipv4: { seed: 'seed-ipv4.yaml', gates: '', networking: { nodes: '10.10.0.0/16' } },
  ipv6: {
    seed: 'seed-ipv6.yaml',
    gates: 'IPv6SingleStack=true',
    networking: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' },
  },
  dual: {
    seed: 'seed-dual-stack.yaml',
    gates: 'DualStack=true',
    networking: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
  },
} as const;
type Family = keyof typeof FAMILIES;

/** Gardener's IPv6 example Shoot (provider-local) with `providerConfig`, adapted to the family. */
function shootFile(family: Family, providerConfig: unknown, kubernetes: Record<string, unknown> = {}): string {
  const { networking } = FAMILIES[family];
  const seedName = { ipv4: 'local', ipv6: 'local-ipv6', dual: 'local-dual' }[family];
  return tempFile(
    'shoot.yaml',
    stringifyForKubectl({
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: 'local', namespace: 'garden-local' },
      spec: {
        cloudProfile: { name: 'local' },
        credentialsBindingName: 'local',
        region: 'local',
        seedName,
        networking: { type: 'calico', ...networking, providerConfig },
        provider: {
          type: 'local',
          workers: [{ name: 'local', machine: { type: 'local' }, cri: { name: 'containerd' }, minimum: 1, maximum: 2 }],
        },
        kubernetes: { version: '1.33.0', ...kubernetes },
      },
    }),
  );
}

async function verdicts(family: Family, shoot: string) {
  const { seed, gates } = FAMILIES[family];
  const validate = await cli([
    'validate',
    '-f',
    shoot,
    '--seed',
    example(seed),
    '--feature-gates',
    gates,
    '-o',
    'json',
  ]);
  const text = await cli(['validate', '-f', shoot, '--seed', example(seed), '--feature-gates', gates]);
  const render = await cli(['render', '-f', example(seed), '-f', shoot, '--feature-gates', gates, '-o', 'json']);
  const causes = (stdout: string) => {
    const status = JSON.parse(stdout);
    return status.kind === 'Status' ? (status.details?.causes ?? []) : [];
  };
  return {
    codes: [validate.code, text.code, render.code],
    validate: causes(validate.stdout),
    render: render.code === 0 ? [] : causes(render.stdout),
    text: text.stdout,
    rendered:
      render.code === 0 ? (JSON.parse(render.stdout).items as { kind: string; metadata: { name: string } }[]) : [],
  };
}

const PC = 'spec.networking.providerConfig';
const API = { apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1', kind: 'NetworkConfig' };

describe('validate and render agree on the providerConfig', () => {
  it("Gardener's IPv6 example (typha and overlay off) is valid for both and renders without typha", async () => {
    const shoot = shootFile('ipv6', {
      ...API,
      typha: { enabled: false },
      overlay: { enabled: false },
      snatToUpstreamDNS: { enabled: true },
      ipv6: { sourceNATEnabled: true },
    });
    const result = await verdicts('ipv6', shoot);
    expect(result.codes).toEqual([0, 0, 0]);
    const names = result.rendered.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).not.toContain('Deployment/calico-typha');
    expect(names).not.toContain('Deployment/calico-kube-controllers');
    expect(names).toContain('IPPool/default-ipv6-ippool');
  });

  const ACCEPTED: [string, Family[], unknown][] = [
    ['the docs: typha off', ['ipv4', 'ipv6', 'dual'], { typha: { enabled: false } }],
    [
      'the docs: ebpf without overlay',
      ['ipv4', 'ipv6', 'dual'],
      { ...API, ebpfDataplane: { enabled: true }, overlay: { enabled: false } },
    ],
    [
      'the docs: host-local with usePodCIDR',
      ['ipv4', 'ipv6', 'dual'],
      {
        ...API,
        ipam: { type: 'host-local', cidr: 'usePodCIDR' },
        vethMTU: 1440,
        typha: { enabled: true },
        overlay: { enabled: true },
        autoScaling: { mode: 'vpa' },
      },
    ],
    ['the docs: vpa autoscaling', ['ipv4', 'ipv6', 'dual'], { ...API, autoScaling: { mode: 'vpa' } }],
    [
      'the docs: static autoscaling',
      ['ipv4', 'ipv6', 'dual'],
      { ...API, autoScaling: { mode: 'static', resources: { node: { cpu: '500m', memory: '1Gi' } } } },
    ],
    ['calico-ipam on IPv4', ['ipv4'], { ipam: { type: 'calico-ipam' } }],
    [
      'ipv4 settings',
      ['ipv4', 'dual'],
      { ipv4: { pool: 'vxlan', mode: 'Never', autoDetectionMethod: 'interface=eth0' } },
    ],
    ['ipv6 settings', ['ipv6', 'dual'], { ipv6: { mode: 'Always', autoDetectionMethod: 'cidr=fd00:10:1:100::/56' } }],
  ];
  it.each(ACCEPTED)('%s: valid for %j', async (_name, families, providerConfig) => {
    for (const family of families) {
      const result = await verdicts(family, shootFile(family, providerConfig));
      expect(result.codes, `${family}: ${result.text}`).toEqual([0, 0, 0]);
      expect(result.rendered.some((o) => o.kind === 'DaemonSet' && o.metadata.name === 'calico-node')).toBe(true);
    }
  });

  const REJECTED: [string, Family[], unknown, string[]][] = [
    ['an unknown field', ['ipv4', 'ipv6', 'dual'], { typo: true }, [`${PC}.typo`]],
    ['calico-ipam with IPv6', ['ipv6', 'dual'], { ipam: { type: 'calico-ipam' } }, [`${PC}.ipam.type`]],
    ['ipv4 without IPv4', ['ipv6'], { ipv4: { pool: 'vxlan' } }, [`${PC}.ipv4`]],
    ['ipv6 without IPv6', ['ipv4'], { ipv6: { mode: 'Never' } }, [`${PC}.ipv6`]],
    [
      'ipv6 pool ipip and mode Off',
      ['ipv6', 'dual'],
      { ipv6: { pool: 'ipip', mode: 'Off' } },
      [`${PC}.ipv6.pool`, `${PC}.ipv6.mode`],
    ],
    [
      'a bad MTU and backend',
      ['ipv4', 'ipv6', 'dual'],
      { vethMTU: 'auto', backend: 'flannel' },
      [`${PC}.backend`, `${PC}.vethMTU`],
    ],
    [
      'a bad autodetection method',
      ['ipv4', 'dual'],
      { ipv4: { autoDetectionMethod: 'interface=(' } },
      [`${PC}.ipv4.autoDetectionMethod`],
    ],
  ];
  it.each(REJECTED)('%s: invalid for %j, with the same causes', async (_name, families, providerConfig, fields) => {
    for (const family of families) {
      const result = await verdicts(family, shootFile(family, providerConfig));
      expect(result.codes, family).toEqual([1, 1, 1]);
      expect(result.validate.map((c: { field: string }) => c.field)).toEqual(fields);
      expect(result.render).toEqual(result.validate);
      for (const field of fields) expect(result.text).toContain(`  - ${field}: `);
    }
  });

  it('kube-proxy off needs the eBPF dataplane', async () => {
    const off = await verdicts('ipv6', shootFile('ipv6', {}, { kubeProxy: { enabled: false } }));
    expect(off.codes).toEqual([1, 1, 1]);
    expect(off.validate).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'spec.kubernetes.kubeProxy.enabled',
        message:
          'Forbidden: Disabling kube-proxy is forbidden in conjunction with calico without running in ebpf dataplane',
      },
    ]);
    expect(off.render).toEqual(off.validate);
    const ebpf = await verdicts(
      'ipv6',
      shootFile('ipv6', { ebpfDataplane: { enabled: true } }, { kubeProxy: { enabled: false } }),
    );
    expect(ebpf.codes).toEqual([0, 0, 0]);
  });

  it('checks the providerConfig of calico shoots only', async () => {
    const text = (await cli(['validate', '-f', shootFile('ipv4', { anything: 'goes' })])).stdout;
    expect(text).toContain(`  - ${PC}.anything: Forbidden: unknown field "anything"`);
    const cilium = tempFile(
      'cilium.yaml',
      stringifyForKubectl({
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: 'c', namespace: 'garden-local' },
        spec: {
          networking: {
            type: 'cilium',
            nodes: '10.10.0.0/16',
            pods: '10.3.0.0/16',
            services: '10.4.0.0/16',
            providerConfig: { anything: 'goes' },
          },
          cloudProfile: { name: 'local' },
          region: 'local',
          provider: { type: 'local', workers: [{ name: 'w' }] },
        },
      }),
    );
    const verdict = await cli(['validate', '-f', cilium]);
    expect(verdict, verdict.stdout).toMatchObject({ code: 0 });
  });

  it('validates a Network of type calico under spec.providerConfig', async () => {
    const network = tempFile(
      'network.yaml',
      stringifyForKubectl({
        apiVersion: 'extensions.gardener.cloud/v1alpha1',
        kind: 'Network',
        metadata: { name: 'n', namespace: 'shoot--local--n' },
        spec: {
          type: 'calico',
          podCIDR: 'fd00:10:3::/56',
          serviceCIDR: 'fd00:10:4::/112',
          ipFamilies: ['IPv6'],
          providerConfig: { ipam: { type: 'calico-ipam' } },
        },
      }),
    );
    const run = await cli(['validate', '-f', network]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      '  - spec.providerConfig.ipam.type: Invalid value: "calico-ipam": IPAM type "calico-ipam" is only supported for IPv4 single-stack shoots, use "host-local" instead',
    );
  });
});

it('renders parse as YAML too', async () => {
  const shoot = shootFile('dual', { overlay: { enabled: false } });
  const { seed, gates } = FAMILIES.dual;
  const run = await cli(['render', '-f', example(seed), '-f', shoot, '--feature-gates', gates]);
  expect(run.code).toBe(0);
  const sidecars = parseAllDocuments(run.stdout)
    .map((d) => d.toJS())
    .filter((o) => o.kind === 'DaemonSet')
    .flatMap((o) => o.spec.template.spec.containers.map((c: { name: string }) => c.name));
  expect(sidecars).toEqual(['calico-node', 'snat-upstream-dns-ipv4', 'snat-upstream-dns-ipv6']);
});
