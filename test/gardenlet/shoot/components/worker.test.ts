import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { parseMachineUserData } from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import { validateWorker } from '../../../../src/apis/extensions/v1alpha1/validation/worker.js';
import {
  desiredUserData,
  desiredWorker,
  nodesBehindUserData,
  staleUserDataSecrets,
  userDataSecretName,
} from '../../../../src/gardenlet/shoot/components/worker.js';
import { WORKER_POOL_LABEL } from '../../../../src/gardenlet/shoot/components/operating-system-config.js';
import { machineBootstrapObjects } from '../../../../src/gardenlet/shoot/components/machine-bootstrap.js';
import { newBootstrapToken } from '../../../../src/gardenlet/shoot/components/secrets.js';
import {
  BOOTSTRAP_TOKEN_PATTERN,
  NODE_APPLIED_USER_DATA_ANNOTATION,
  userDataChecksum,
  workerUserDataAnnotation,
} from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';

const shoot = {
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Shoot',
  metadata: { name: 'local', namespace: 'garden-local', uid: 'u1' },
  spec: {
    region: 'local',
    provider: {
      type: 'local',
      workers: [
        { name: 'w', machine: { type: 'local', image: { name: 'local', version: '1.0.0' } }, minimum: 2, maximum: 3 },
        { name: 'x', minimum: 1, sysctls: { 'net.ipv6.conf.all.forwarding': 0 } },
      ],
    },
    networking: { type: 'calico', ipFamilies: ['IPv6', 'IPv4'] },
  },
} as unknown as Shoot;
const networking = { pods: ['fd00:10:3::/56', '10.3.0.0/16'], services: ['fd00:10:4::/112', '10.4.0.0/16'] };

describe("the shoot's Worker", () => {
  it("has a pool per worker, referencing that pool's user data Secret, and is a valid Worker", () => {
    const worker = desiredWorker(shoot);
    expect(worker.metadata).toMatchObject({ name: 'local', namespace: 'shoot--local--local' });
    expect(worker.spec.type).toBe('local');
    expect(worker.spec.pools?.map((p) => [p.name, p.minimum, p.maximum, p.userDataSecretRef])).toEqual([
      ['w', 2, 3, { name: userDataSecretName('w'), key: 'userData' }],
      ['x', 1, 1, { name: userDataSecretName('x'), key: 'userData' }],
    ]);
    expect(validateWorker(worker)).toEqual([]);
  });

  it("gives each pool its effective kubelet settings: its own, else the shoot's, else none", () => {
    const withKubelet = {
      ...shoot,
      spec: {
        ...shoot.spec,
        kubernetes: { kubelet: { seccompDefault: true } },
        provider: {
          type: 'local',
          workers: [
            shoot.spec.provider!.workers![0]!,
            { name: 'x', minimum: 1, kubernetes: { kubelet: { maxPods: 30 } } },
          ],
        },
      },
    } as Shoot;
    expect(desiredWorker(withKubelet).spec.pools?.map((p) => p.kubeletConfig)).toEqual([
      { seccompDefault: true },
      { maxPods: 30 },
    ]);
    expect(desiredWorker(shoot).spec.pools?.map((p) => p.kubeletConfig)).toEqual([undefined, undefined]);
    expect(validateWorker(desiredWorker(withKubelet))).toEqual([]);
  });

  it("copies each pool's machine-controller-manager settings (its drain timeout), and none where it has none", () => {
    const withDrain = {
      ...shoot,
      spec: {
        ...shoot.spec,
        provider: {
          type: 'local',
          workers: [
            { ...shoot.spec.provider!.workers![0]!, machineControllerManager: { machineDrainTimeout: '5m' } },
            shoot.spec.provider!.workers![1]!,
          ],
        },
      },
    } as Shoot;
    const pools = desiredWorker(withDrain).spec.pools ?? [];
    expect(pools.map((p) => p.machineControllerManager)).toEqual([{ machineDrainTimeout: '5m' }, undefined]);
    expect(validateWorker(desiredWorker(withDrain))).toEqual([]);
  });

  it("copies each pool's zones and the shoot's region, for the provider to spread the machines over", () => {
    const zoned = {
      ...shoot,
      spec: {
        ...shoot.spec,
        region: 'local',
        provider: {
          type: 'local',
          workers: [{ ...shoot.spec.provider!.workers![0]!, zones: ['0', '1'] }, shoot.spec.provider!.workers![1]!],
        },
      },
    } as Shoot;
    const worker = desiredWorker(zoned);
    expect(worker.spec.region).toBe('local');
    expect(worker.spec.pools?.map((p) => p.zones)).toEqual([['0', '1'], undefined]);
    expect(validateWorker(worker)).toEqual([]);
  });

  it('drops the user data of pools the Worker had and the shoot no longer has, and of no other', () => {
    const previous = desiredWorker({
      ...shoot,
      spec: {
        ...shoot.spec,
        provider: { type: 'local', workers: [...shoot.spec.provider!.workers!, { name: 'gone', minimum: 1 }] },
      },
    } as Shoot);
    expect(staleUserDataSecrets(previous, shoot)).toEqual([userDataSecretName('gone')]);
    expect(staleUserDataSecrets(desiredWorker(shoot), shoot)).toEqual([]);
    expect(staleUserDataSecrets(undefined, shoot)).toEqual([]);
  });

  it("names the pools' Nodes, by their pool label, that do not run their pool's latest user data", () => {
    const [w, x] = [userDataChecksum('w-data'), userDataChecksum('x-data')];
    const node = (name: string, pool: string | undefined, applied?: string) => ({
      metadata: {
        name,
        ...(pool ? { labels: { [WORKER_POOL_LABEL]: pool } } : {}),
        ...(applied ? { annotations: { [NODE_APPLIED_USER_DATA_ANNOTATION]: applied } } : {}),
      },
    });
    const annotations = { [workerUserDataAnnotation('w')]: w, [workerUserDataAnnotation('x')]: x };
    // Names say nothing: the label does. n2 runs the other pool's data, n3 none yet; a Node of no pool (a seed's,
    // or one of another provider) is not judged.
    const nodes = [node('n1', 'w', w), node('n2', 'w', x), node('n3', 'x'), node('other', undefined, 'old')];
    expect(nodesBehindUserData(nodes, shoot, annotations)).toEqual(['n2', 'n3']);
    // A pool with fewer Nodes than its minimum (2 for w) says so; a pool without a checksum on the Worker is not judged.
    expect(nodesBehindUserData([node('n1', 'w', w)], shoot, { [workerUserDataAnnotation('w')]: w })).toEqual([
      'pool w: 1 of 2 Nodes',
    ]);
    expect(nodesBehindUserData([node('a', 'w', w), node('b', 'w', w), node('c', 'x', x)], shoot, annotations)).toEqual(
      [],
    );
    expect(userDataChecksum('w-data')).toMatch(/^[0-9a-f]{64}$/);
    expect(userDataChecksum('w-data')).not.toBe(userDataChecksum('w-data '));
  });

  it("gives each pool user data a machine agent accepts: the shoot's networks, token, files and the pool's sysctls", () => {
    const files = [{ path: '/etc/sysctl.d/99-k8s-general.conf', content: { inline: { encoding: '', data: 'x' } } }];
    const wFiles = [{ path: '/var/lib/kubelet/config/kubelet', content: { inline: { encoding: '', data: 'y' } } }];
    const all = desiredUserData({
      shoot,
      networking,
      apiServerURL: 'https://[fd00:ff::2]',
      caPEM: 'CA',
      bootstrapToken: 'abcdef.0123456789abcdef',
      files: new Map([
        ['x', files],
        ['w', wFiles],
      ]),
    });
    const x = parseMachineUserData(JSON.stringify(all.get('x')));
    expect(x.families).toEqual(['IPv6', 'IPv4']);
    expect(x.podCIDRs).toEqual(networking.pods);
    expect(x.clusterDNS).toEqual(['fd00:10:4::a', '10.4.0.10']);
    expect(x.sysctls).toEqual({ 'net.ipv6.conf.all.forwarding': '0' });
    expect(x.files).toEqual(files);
    expect(parseMachineUserData(JSON.stringify(all.get('w'))).sysctls).toEqual({});
    expect(parseMachineUserData(JSON.stringify(all.get('w'))).files).toEqual(wFiles);
    // No providerConfig on a dual-stack shoot: calico routes both families directly; IPv6 without source NAT.
    expect(x.podNetwork.pools).toEqual([
      { family: 'IPv6', encapsulation: 'VXLAN', mode: 'Never', natOutgoing: false },
      { family: 'IPv4', encapsulation: 'IPIP', mode: 'Never', natOutgoing: true },
    ]);
  });

  it("carries calico's pool settings per family from the shoot's NetworkConfig to every pool's machines", () => {
    const userData = (providerConfig: unknown, type = 'calico') => {
      const networkingSpec = { ...shoot.spec.networking, type, providerConfig };
      const all = desiredUserData({
        shoot: { ...shoot, spec: { ...shoot.spec, networking: networkingSpec } },
        networking,
        apiServerURL: 'https://[fd00:ff::2]',
        caPEM: 'CA',
        bootstrapToken: 'abcdef.0123456789abcdef',
        files: new Map(),
      });
      const settings = [...all.values()].map((u) => parseMachineUserData(JSON.stringify(u)).podNetwork);
      expect(settings[1]).toEqual(settings[0]);
      return settings[0]!.pools.map((p) => `${p.family} ${p.mode} ${p.natOutgoing}`);
    };
    const snat = (providerConfig: unknown) =>
      parseMachineUserData(
        JSON.stringify(
          desiredUserData({
            shoot: { ...shoot, spec: { ...shoot.spec, networking: { ...shoot.spec.networking, providerConfig } } },
            networking,
            apiServerURL: 'https://[fd00:ff::2]',
            caPEM: 'CA',
            bootstrapToken: 'abcdef.0123456789abcdef',
            files: new Map(),
          }).get('x'),
        ),
      ).podNetwork.snatToUpstreamDNS;
    const config = (extra: object) => ({
      apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1',
      kind: 'NetworkConfig',
      ...extra,
    });
    expect(userData(config({ overlay: { enabled: true }, ipv6: { sourceNATEnabled: true } }))).toEqual([
      'IPv6 Always true',
      'IPv4 Always true',
    ]);
    expect(userData(config({ overlay: { enabled: false } }))).toEqual(['IPv6 Never false', 'IPv4 Never true']);
    // What the admission refuses, or another networking type: no settings (routed, masqueraded).
    expect(userData(config({ overlay: { enabled: 'yes' } }))).toEqual([]);
    expect(userData(undefined, 'cilium')).toEqual([]);
    // snatToUpstreamDNS: on by default with the overlay off, off when stated so, never with the overlay on.
    expect(snat(config({ overlay: { enabled: false } }))).toBe(true);
    expect(snat(config({ overlay: { enabled: false }, snatToUpstreamDNS: { enabled: false } }))).toBe(false);
    expect(snat(config({ overlay: { enabled: true }, snatToUpstreamDNS: { enabled: true } }))).toBe(false);
    expect(snat(undefined)).toBe(false);
  });
});

describe('the machine bootstrap', () => {
  it('makes bootstrap tokens of the required shape, different each time', () => {
    const a = newBootstrapToken();
    expect(`${a.id}.${a.secret}`).toMatch(BOOTSTRAP_TOKEN_PATTERN);
    expect(newBootstrapToken()).not.toEqual(a);
  });

  it('writes the token Secret and binds bootstrappers and nodes as TLS bootstrapping needs', () => {
    const objects = machineBootstrapObjects({ id: 'abcdef', secret: '0123456789abcdef' });
    const secret = objects[0]!.object as { metadata: { name: string; namespace: string }; type: string };
    expect(secret.metadata).toEqual({ name: 'bootstrap-token-abcdef', namespace: 'kube-system' });
    expect(secret.type).toBe('bootstrap.kubernetes.io/token');
    const bindings = objects
      .filter((o) => o.object.kind === 'ClusterRoleBinding')
      .map((o) => {
        const b = o.object as { roleRef: { name: string }; subjects: { kind: string; name: string }[] };
        return [
          b.roleRef.name,
          b.subjects[0]!.kind,
          b.subjects[0]!.name.replace(/^system:bootstrappers:.*/, 'bootstrappers'),
        ];
      });
    expect(bindings).toEqual([
      ['system:node-bootstrapper', 'Group', 'bootstrappers'],
      ['system:certificates.k8s.io:certificatesigningrequests:nodeclient', 'Group', 'bootstrappers'],
      ['system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'Group', 'system:nodes'],
      ['system:node-proxier', 'Group', 'system:nodes'],
      ['system:node-proxier', 'User', 'gardener-ipv6:vpn-seed'],
      ['gardener-ipv6:network-policy-enforcer', 'Group', 'system:nodes'],
    ]);
  });

  it("lets the machines' NetworkPolicy enforcers read pods, namespaces and policies, and nothing else", () => {
    const objects = machineBootstrapObjects({ id: 'abcdef', secret: '0123456789abcdef' }).map((o) => o.object);
    const role = objects.find((o) => o.kind === 'ClusterRole') as unknown as {
      metadata: { name: string };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(role.metadata.name).toBe('gardener-ipv6:network-policy-enforcer');
    expect(role.rules.flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]}/${res}`)).sort()).toEqual([
      '/namespaces',
      '/pods',
      'networking.k8s.io/networkpolicies',
    ]);
    expect(new Set(role.rules.flatMap((r) => r.verbs))).toEqual(new Set(['get', 'list', 'watch']));
  });

  it("lets kube-apiserver's vpn-seed write its overlay Lease and the Nodes read it, in kube-system only", () => {
    const objects = machineBootstrapObjects({ id: 'abcdef', secret: '0123456789abcdef' }).map((o) => o.object);
    const roles = objects.filter((o) => o.kind === 'Role') as unknown as {
      metadata: { name: string; namespace: string };
      rules: { resources: string[]; verbs: string[] }[];
    }[];
    const bindings = objects.filter((o) => o.kind === 'RoleBinding') as unknown as {
      metadata: { namespace: string };
      roleRef: { name: string };
      subjects: { kind: string; name: string }[];
    }[];
    expect(roles.map((r) => [r.metadata.namespace, r.rules[0]!.resources, r.rules[0]!.verbs.includes('list')])).toEqual(
      [
        ['kube-system', ['leases'], false],
        ['kube-system', ['leases'], true],
      ],
    );
    expect(
      bindings.map((b) => [b.metadata.namespace, b.roleRef.name, b.subjects[0]!.kind, b.subjects[0]!.name]),
    ).toEqual([
      ['kube-system', 'gardener-ipv6:overlay-peer-writer', 'User', 'gardener-ipv6:vpn-seed'],
      ['kube-system', 'gardener-ipv6:overlay-peer-reader', 'Group', 'system:nodes'],
    ]);
  });
});
