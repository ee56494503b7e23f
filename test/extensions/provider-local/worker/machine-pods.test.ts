import { describe, expect, it } from 'vitest';
import type { Worker } from '../../../../src/apis/extensions/v1alpha1/worker.js';
import { IMAGES } from '../../../../src/imagevector/images.js';
import {
  boundedReplicas,
  machinePodNetworkPolicies,
  desiredMachineStatefulSet,
  namedPools,
  userDataOf,
} from '../../../../src/extensions/provider-local/worker/machine-pods.js';
import { MACHINE_POD_PATHS } from '../../../../src/extensions/provider-local/machine/pod-agent.js';
import {
  ALLOWED_SOURCE_PREFIXES_ANNOTATION,
  MACHINE_POD_ENV,
  MACHINE_READINESS,
} from '../../../../src/extensions/provider-local/machine-contract.js';

const worker: Worker = {
  apiVersion: 'extensions.gardener.cloud/v1alpha1',
  kind: 'Worker',
  metadata: { name: 'local', namespace: 'shoot--local--local' },
  spec: {
    type: 'local',
    pools: [
      { name: 'a', minimum: 2, maximum: 3, userDataSecretRef: { name: 'worker-user-data-a', key: 'userData' } },
      { name: 'b', minimum: 1, userDataSecretRef: { name: 'x' } },
      { minimum: 1 },
    ],
  },
};

describe("provider-local's machine pods", () => {
  const pool = namedPools(worker)[0]!;
  const values = {
    namespace: 'shoot--local--local',
    pool,
    userData: { name: 'worker-user-data-a', key: 'userData' },
    nodeCIDRs: ['fd00:10:1:100::/56', '10.10.0.0/16'],
    firstMachine: 3,
    resources: { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '1', memory: '8Gi' } },
  };
  const sts = desiredMachineStatefulSet(values);
  const pod = sts.spec!.template.spec!;
  const container = pod.containers[0]!;

  it('is one StatefulSet per pool, named after it, with `minimum` machines started in parallel', () => {
    expect(sts.metadata?.name).toBe('machine-a');
    expect(sts.spec?.replicas).toBe(2);
    expect(sts.spec?.podManagementPolicy).toBe('Parallel');
    expect(sts.spec?.template.metadata?.labels).toMatchObject(sts.spec!.selector.matchLabels!);
  });

  it('lets machines reach DNS, the public and the private networks under their namespace’s deny-all', () => {
    expect(sts.spec?.template.metadata?.labels).toMatchObject({
      'networking.gardener.cloud/to-dns': 'allowed',
      'networking.gardener.cloud/to-public-networks': 'allowed',
      'networking.gardener.cloud/to-private-networks': 'allowed',
    });
  });

  it('has policies for the paths between machines and kube-apiserver, and no other', () => {
    const [machines, apiServer] = machinePodNetworkPolicies('shoot--p--s');
    const machinePods = { podSelector: { matchLabels: { app: 'machine' } } };
    const apiServerPods = { podSelector: { matchLabels: { app: 'kubernetes', role: 'apiserver' } } };
    expect(machines!.spec).toEqual({
      ...machinePods,
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [machinePods, apiServerPods] }],
      egress: [{ to: [machinePods, apiServerPods] }],
    });
    expect(apiServer!.spec).toEqual({
      ...apiServerPods,
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [machinePods] }],
      egress: [{ to: [machinePods] }],
    });
    // The machine pods' template matches the policy's selector.
    expect(sts.spec?.template.metadata?.labels).toMatchObject(machinePods.podSelector.matchLabels);
  });

  it('runs the machine image privileged in a user namespace, read-only, with its Node name, pod IPs and ranges', () => {
    expect(container.image).toBe(IMAGES.machine);
    expect(container.args?.[0]).toBe('machine');
    expect(pod.hostUsers).toBe(false);
    expect(container.securityContext).toEqual({ privileged: true, readOnlyRootFilesystem: true });
    expect(container.env?.map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath ?? e.value])).toEqual([
      ['NODE_NAME', 'metadata.name'],
      ['POD_IPS', 'status.podIPs'],
      [MACHINE_POD_ENV.nodeCIDRs, 'fd00:10:1:100::/56,10.10.0.0/16'],
      [MACHINE_POD_ENV.firstMachine, '3'],
    ]);
    // Probed over the network: the seed runs no command inside a machine.
    expect(container.readinessProbe?.exec).toBeUndefined();
    expect(container.readinessProbe?.httpGet).toEqual({ path: MACHINE_READINESS.path, port: 'readiness' });
    expect(container.ports).toEqual([{ name: 'readiness', containerPort: MACHINE_READINESS.port, protocol: 'TCP' }]);
    expect(pod.automountServiceAccountToken).toBe(false);
    // Sized by its machine type.
    expect(container.resources).toEqual(values.resources);
  });

  it("tells the machines the pool's zones and the region, for their Nodes' topology labels", () => {
    const zoned = desiredMachineStatefulSet({ ...values, pool: { ...pool, zones: ['0', '1'] }, region: 'local' });
    const env = zoned.spec!.template.spec!.containers[0]!.env!;
    expect(env.slice(-2)).toEqual([
      { name: MACHINE_POD_ENV.zones, value: '0,1' },
      { name: MACHINE_POD_ENV.region, value: 'local' },
    ]);
  });

  it("runs the machine in the host's user namespace only when told (a seed without user namespaces, the bench)", () => {
    const uncontained = desiredMachineStatefulSet({ ...values, userNamespace: false }).spec!.template.spec!;
    expect(uncontained.hostUsers).toBeUndefined();
    expect(desiredMachineStatefulSet({ ...values, userNamespace: true }).spec!.template.spec!.hostUsers).toBe(false);
  });

  it("lets the machine send from its shoot's pod ranges, as calico's annotation says (pools without outgoing NAT)", () => {
    expect(sts.spec?.template.metadata?.annotations?.[ALLOWED_SOURCE_PREFIXES_ANNOTATION]).toBeUndefined();
    const withPods = desiredMachineStatefulSet({ ...values, podCIDRs: ['fd00:10:3::/56', '10.3.0.0/16'] });
    expect(withPods.spec?.template.metadata?.annotations?.[ALLOWED_SOURCE_PREFIXES_ANNOTATION]).toBe(
      '["fd00:10:3::/56","10.3.0.0/16"]',
    );
  });

  it('leaves replacing its machines to the Worker (drained first, each with a new Node)', () => {
    expect(sts.spec?.updateStrategy).toEqual({ type: 'OnDelete' });
  });

  it("mounts the pool's user data where the agent reads it and keeps the node state in an emptyDir", () => {
    const userData = pod.volumes?.find((v) => v.name === 'user-data');
    expect(userData?.secret).toEqual({
      secretName: 'worker-user-data-a',
      items: [{ key: 'userData', path: 'userData' }],
    });
    const mounts = Object.fromEntries(container.volumeMounts!.map((m) => [m.name, m.mountPath]));
    expect(`${mounts['user-data']}/userData`).toBe(MACHINE_POD_PATHS.userData);
    expect(mounts.state).toBe(MACHINE_POD_PATHS.stateDir);
    expect(pod.volumes?.find((v) => v.name === 'state')?.emptyDir).toEqual({});
    expect(mounts.tmp).toBe(MACHINE_POD_PATHS.tmpDir);
    expect(pod.volumes?.find((v) => v.name === 'tmp')?.emptyDir).toEqual({});
  });

  it('names pools without a complete user data reference, and skips unnamed ones', () => {
    expect(namedPools(worker).map((p) => p.name)).toEqual(['a', 'b']);
    expect(userDataOf(namedPools(worker)[1]!)).toMatch(/pool b: .*userDataSecretRef needs name and key/);
  });
});

describe('boundedReplicas', () => {
  it.each([
    // want, replicas now, ready now, at once → replicas
    [7, 0, 0, 3, 3],
    [7, 3, 0, 3, 3],
    [7, 3, 2, 3, 5],
    [7, 5, 5, 3, 7],
    [2, 0, 0, 3, 2],
    [1, 7, 7, 3, 1],
    [0, 3, 0, 3, 0],
  ])('wants %i with %i replicas, %i ready, %i at once: %i', (want, replicas, ready, atOnce, expected) => {
    expect(boundedReplicas(want, { replicas, ready }, atOnce)).toBe(expected);
  });
});
