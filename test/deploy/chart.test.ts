/**
 * charts/gardener-ipv6 through the real helm: lint, and what `helm template` renders with the default, IPv4, IPv6 and
 * dual-stack values — probes and non-root security contexts everywhere, `::` listen addresses, Services of the
 * configured families, flags the binary knows, RBAC of exactly the calls each component makes, webhook
 * configurations equal to the ones the code builds, and the values schema's messages.
 */
import { createHash, createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse as parseYAML } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { desiredWebhookConfigurations } from '../../src/admission/webhook-configurations.js';
import { SEEDS_CLUSTER_ROLE, seedAccessObjects, seedsClusterRole } from '../../src/app/seed-access.js';
import { COMPONENTS, type Component } from '../../src/app/runtime.js';
import { buildProgram } from '../../src/cli/main.js';
import { Refs } from '../../src/apis/refs.js';
import { parseServer } from '../../src/extensions/dns/transport.js';
import { Feature, parseFeatureGates } from '../../src/featuregate/featuregate.js';
import { parseHostIPs } from '../../src/extensions/provider-local/loadbalancer/ingress.js';
import { IMAGES } from '../../src/imagevector/images.js';
import { projectRoot } from '../../src/system/project.js';
import { SEED_LEASE_NAMESPACE } from '../../src/apis/core/v1beta1/seed-lease.js';
import { generateCertificates } from '../../src/localenv/certs.js';
import {
  allow,
  CHART_COMPONENTS,
  CONTROLLERS,
  EXPECTED_CLUSTER_GRANTS,
  EXPECTED_ENFORCER_GRANTS,
  EXPECTED_WORKLOAD_GRANTS,
  grants,
  type ChartComponent,
  type PolicyRule,
} from './expected-rbac.js';
import { ETCD_HOST_DIR } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { API_SERVICE_NAME, desiredAPIService } from '../../src/admission/apiservice.js';
import {
  CHART_DIR,
  helm,
  helmBinary,
  named,
  ofKind,
  parseObjects,
  PRESETS,
  renderChart,
  tryRenderChart,
  valuesArgs,
  type K8sObject,
  type Preset,
} from './helm.js';

const RELEASE = 'gardener-ipv6';
const NAMESPACE = 'garden-ipv6';

beforeAll(async () => {
  await helmBinary();
}, 20 * 60_000);

// --- object shapes ------------------------------------------------------------------------------------------------

interface Probe {
  httpGet?: { path: string; port: string | number; scheme?: string };
  tcpSocket?: { port: string | number };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name: string; containerPort: number; protocol?: string; hostPort?: number; hostIP?: string }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[]; add?: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  initContainers?: Container[];
  volumes?: {
    name: string;
    secret?: { secretName: string };
    configMap?: { name: string };
    hostPath?: { path: string; type?: string };
  }[];
}
interface Deployment {
  spec: {
    template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}
type DaemonSet = K8sObject & { spec: { template: { spec: PodSpec & { tolerations?: object[] } } } };
interface Service {
  spec: {
    ipFamilyPolicy?: string;
    ipFamilies?: string[];
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number; protocol?: string }[];
  };
}
interface Role {
  rules: PolicyRule[];
}
interface Binding {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}
interface Webhook {
  clientConfig: { caBundle: string; service: { name: string; namespace: string; path: string; port: number } };
  [key: string]: unknown;
}

const nameOf = (component: string) => `${RELEASE}-${component}`;

function deployments(objects: K8sObject[]) {
  return ofKind<Deployment>(objects, 'Deployment');
}

function containerOf(objects: K8sObject[], component: ChartComponent): Container {
  return named<Deployment>(objects, 'Deployment', nameOf(component)).spec.template.spec.containers[0]!;
}

/** `--name=value` → value; `--flag` → ''; absent → undefined. */
function flag(container: Container, name: string): string | undefined {
  for (const arg of container.args ?? []) {
    if (arg === `--${name}`) return '';
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

// --- values presets -------------------------------------------------------------------------------------------------

const PRESET_EXPECTATIONS: Record<
  Preset,
  { policy: string; families: string[] | undefined; gates: Partial<Record<Feature, boolean>>; ipv4Listener: boolean }
> = {
  default: { policy: 'SingleStack', families: undefined, gates: {}, ipv4Listener: true },
  ipv4: { policy: 'SingleStack', families: ['IPv4'], gates: {}, ipv4Listener: true },
  ipv6: { policy: 'SingleStack', families: ['IPv6'], gates: { IPv6SingleStack: true }, ipv4Listener: false },
  dual: {
    policy: 'RequireDualStack',
    families: ['IPv6', 'IPv4'],
    gates: { IPv6SingleStack: true, DualStack: true },
    ipv4Listener: true,
  },
};

function runCommand(): Command {
  const program = buildProgram({ out: () => {}, err: () => {} }, () => {});
  const run = program.commands.find((c) => c.name() === 'run');
  if (!run) throw new Error('gardener-ipv6 has no run command');
  return run;
}

describe('helm lint', () => {
  it.each(Object.keys(PRESETS) as Preset[])('passes with the %s values (--strict)', (preset) => {
    const result = helm(['lint', '--strict', CHART_DIR, ...valuesArgs(preset)]);
    expect(result.stderr + result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});

describe.each(Object.keys(PRESETS) as Preset[])('helm template with the %s values', (preset) => {
  const expected = PRESET_EXPECTATIONS[preset];
  let objects: K8sObject[];
  let text: string;

  beforeAll(() => {
    const result = tryRenderChart(preset, { release: RELEASE, namespace: NAMESPACE });
    expect(result.stderr).toBe('');
    text = result.stdout;
    objects = renderChart(preset, { release: RELEASE, namespace: NAMESPACE });
  });

  it('renders the five components, the DNS server and nothing unexpected', () => {
    expect(
      deployments(objects)
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([...Object.keys(CHART_COMPONENTS), 'dns-server'].map(nameOf).sort());
    const kinds = new Set(objects.map((o) => o.kind));
    // The kind presets enforce the NetworkPolicies (their bridge CNI does not): a DaemonSet more.
    expect([...kinds].sort()).toEqual([
      'APIService',
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      ...(preset === 'default' ? [] : ['DaemonSet']),
      'Deployment',
      'MutatingWebhookConfiguration',
      'Namespace',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Secret',
      'Service',
      'ServiceAccount',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingWebhookConfiguration',
    ]);
    for (const o of objects) {
      const clusterScoped =
        /^(APIService|ClusterRole|ClusterRoleBinding|.*WebhookConfiguration|ValidatingAdmissionPolicy.*)$/.test(o.kind);
      // The admission server reads the aggregator's configuration in kube-system, as every aggregated API server.
      const inKubeSystem =
        o.kind === 'RoleBinding' && o.metadata.name === `${nameOf('admission')}-authentication-reader`;
      // The gardenlets' heartbeats, in Gardener's namespace for them.
      const inSeedLeases = /^Role(Binding)?$/.test(o.kind) && o.metadata.name.endsWith('-seed-lease');
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(
        clusterScoped || o.kind === 'Namespace'
          ? undefined
          : inKubeSystem
            ? 'kube-system'
            : inSeedLeases
              ? SEED_LEASE_NAMESPACE
              : NAMESPACE,
      );
      expect(o.metadata.labels?.['app.kubernetes.io/instance'], `${o.kind}/${o.metadata.name}`).toBe(RELEASE);
    }
  });

  it('enforces the NetworkPolicies on every Node in the kind presets, as root with NET_ADMIN only', () => {
    const name = `${RELEASE}-network-policy-enforcer`;
    const sets = ofKind<DaemonSet>(objects, 'DaemonSet');
    if (preset === 'default') {
      expect(sets).toEqual([]);
      return;
    }
    expect(sets.map((d) => d.metadata.name)).toEqual([name]);
    const pod = sets[0]!.spec.template.spec;
    expect(pod).toMatchObject({ serviceAccountName: name, hostNetwork: true, tolerations: [{ operator: 'Exists' }] });
    const [container] = pod.containers;
    // The machine image carries nft; its tag is the one `gardener-ipv6 images` builds.
    expect(container!.image).toBe(IMAGES.machine);
    // The kind seeds' CNI chain (hack/local/cni.sh) asks it for each pod through a socket on the Node, which is what
    // the plugin there connects to; it holds each pod's port on the chain's bridge.
    const cniChain = readFileSync(join(projectRoot(), 'hack', 'local', 'cni.sh'), 'utf8');
    const socket = /"socket": "([^"]+)"/.exec(cniChain)?.[1];
    expect(socket).toBe('/run/gardener-ipv6/network-policy/hook.sock');
    expect(cniChain).toContain('"bridge": "cni0"');
    expect(container!.args).toEqual([
      'network-policy-enforcer',
      '--ready-file=/tmp/ready',
      `--cni-hook-socket=${socket}`,
      '--anti-spoofing',
      '--pod-bridge=cni0',
    ]);
    expect(pod.volumes).toContainEqual({
      name: 'cni-hook',
      hostPath: { path: '/run/gardener-ipv6/network-policy', type: 'DirectoryOrCreate' },
    });
    expect(container!.volumeMounts).toContainEqual({
      name: 'cni-hook',
      mountPath: '/run/gardener-ipv6/network-policy',
    });
    expect(container!.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] },
    });
    expect(container!.readinessProbe?.exec?.command).toEqual(['cat', '/tmp/ready']);
    // What the enforcer's informers list and watch, and its Node's pod ranges: nothing else.
    const role = named<Role>(objects, 'ClusterRole', name);
    expect(role.rules.flatMap(grants).sort()).toEqual([...EXPECTED_ENFORCER_GRANTS].sort());
    expect(named<Binding>(objects, 'ClusterRoleBinding', name).subjects).toEqual([
      { kind: 'ServiceAccount', name, namespace: NAMESPACE },
    ]);
  });

  it('gives every container liveness and readiness probes on a port it declares', () => {
    for (const d of deployments(objects)) {
      for (const c of [...d.spec.template.spec.containers, ...(d.spec.template.spec.initContainers ?? [])]) {
        const where = `${d.metadata.name}/${c.name}`;
        for (const probe of [c.livenessProbe, c.readinessProbe]) {
          expect(probe, where).toBeDefined();
          const port = probe!.httpGet?.port ?? probe!.tcpSocket?.port;
          expect(port, where).toBeDefined();
          expect(
            c.ports?.some((p) => p.name === port || p.containerPort === port),
            `${where}: probe port ${String(port)}`,
          ).toBe(true);
        }
        expect(c.resources?.requests, `${where}: resource requests`).toBeDefined();
        expect(c.resources?.limits?.memory, `${where}: memory limit`).toBeDefined();
      }
    }
  });

  it('runs every pod and container as non-root, without privileges', () => {
    for (const d of deployments(objects)) {
      const pod = d.spec.template.spec;
      expect(pod.hostNetwork ?? false, d.metadata.name).toBe(false);
      expect(pod.securityContext?.runAsNonRoot, d.metadata.name).toBe(true);
      expect(pod.securityContext?.runAsUser, d.metadata.name).toBeGreaterThan(0);
      expect(pod.securityContext?.seccompProfile, d.metadata.name).toEqual({ type: 'RuntimeDefault' });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const where = `${d.metadata.name}/${c.name}`;
        const sc = c.securityContext ?? {};
        expect(sc.runAsNonRoot, where).toBe(true);
        expect(sc.runAsUser ?? pod.securityContext?.runAsUser, where).not.toBe(0);
        expect(sc.allowPrivilegeEscalation, where).toBe(false);
        expect(sc.privileged ?? false, where).toBe(false);
        expect(sc.readOnlyRootFilesystem, where).toBe(true);
        expect(sc.capabilities?.drop, where).toEqual(['ALL']);
        expect(sc.capabilities?.add, where).toBeUndefined();
      }
    }
  });

  it('listens on :: only: no IPv4-only address, no host ports', () => {
    expect(text).not.toMatch(/0\.0\.0\.0/);
    for (const d of deployments(objects)) {
      for (const c of d.spec.template.spec.containers) {
        for (const arg of c.args ?? []) {
          // A plain `- --health-host=::` is a YAML mapping, not a string.
          expect(typeof arg, `${d.metadata.name}: ${JSON.stringify(arg)}`).toBe('string');
          const listen = /^--([a-z-]+)-host=(.*)$/.exec(arg);
          if (listen) expect(listen[2], `${d.metadata.name}: ${arg}`).toBe('::');
        }
        for (const p of c.ports ?? []) {
          expect(p.hostPort, `${d.metadata.name}/${c.name}`).toBeUndefined();
          expect(p.hostIP, `${d.metadata.name}/${c.name}`).toBeUndefined();
        }
      }
    }
    for (const component of Object.keys(CHART_COMPONENTS) as ChartComponent[]) {
      expect(flag(containerOf(objects, component), 'health-host'), component).toBe('::');
    }
    expect(flag(containerOf(objects, 'admission'), 'webhook-host')).toBe('::');
    const namedConf = named<{ data: Record<string, string> }>(objects, 'ConfigMap', nameOf('dns-server')).data[
      'named.conf'
    ]!;
    expect(namedConf).toContain('listen-on-v6 port 5353 { any; };');
    if (expected.ipv4Listener) expect(namedConf).toContain('listen-on port 5353 { any; };');
    else expect(namedConf).toContain('listen-on { none; };');
  });

  it('gives every Service the IP families of the values and ports its pods declare', () => {
    const services = ofKind<Service>(objects, 'Service');
    expect(services.map((s) => s.metadata.name).sort()).toEqual(
      ['admission', 'dns-local', 'dns-server', 'gardenlet', 'network-calico', 'scheduler'].map(nameOf),
    );
    for (const s of services) {
      expect(s.spec.ipFamilyPolicy, s.metadata.name).toBe(expected.policy);
      expect(s.spec.ipFamilies, s.metadata.name).toEqual(expected.families);
      const selected = deployments(objects).filter((d) =>
        Object.entries(s.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      );
      expect(
        selected.map((d) => d.metadata.name),
        s.metadata.name,
      ).toHaveLength(1);
      const portNames = selected[0]!.spec.template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
      for (const port of s.spec.ports) expect(portNames, `${s.metadata.name}:${port.name}`).toContain(port.targetPort);
    }
  });

  it('runs `gardener-ipv6 run` with flags it knows and values it accepts', () => {
    const run = runCommand();
    const known = new Map(run.options.map((o) => [o.long!, o]));
    const gates = parseFeatureGates(
      Object.entries(expected.gates)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    );
    for (const [component, runs] of Object.entries(CHART_COMPONENTS) as [ChartComponent, Component][]) {
      const c = containerOf(objects, component);
      expect(c.image).toBe('gardener-ipv6:0.1.0');
      expect(c.command).toBeUndefined();
      expect(c.args?.[0]).toBe('run');
      for (const arg of c.args!.slice(1)) {
        const [name, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg] : [arg, undefined];
        const option = known.get(name);
        expect(option, `${component}: unknown flag ${name}`).toBeDefined();
        expect(value !== undefined, `${component}: ${arg} (takes a value: ${option!.required})`).toBe(option!.required);
      }
      expect(flag(c, 'components'), component).toBe(runs);
      expect(parseFeatureGates(flag(c, 'feature-gates')), component).toEqual(gates);
      expect(flag(c, 'health-port'), component).toBe('8080');
      expect(c.ports?.find((p) => p.name === 'health')?.containerPort).toBe(8080);
    }
    expect(COMPONENTS).toEqual(expect.arrayContaining(Object.values(CHART_COMPONENTS)));

    const admission = containerOf(objects, 'admission');
    expect(flag(admission, 'no-webhook-register')).toBe('');
    expect(flag(admission, 'webhook-port')).toBe('9443');
    expect(flag(admission, 'leader-elect')).toBeUndefined();
    // The extension types of the installation, which the webhook holds Shoots to.
    expect(flag(admission, 'provider-types')).toBe('local');
    expect(flag(admission, 'networking-types')).toBe('calico');
    expect(flag(admission, 'dns-provider-types')).toBe('local');
    const certDir = flag(admission, 'webhook-cert-dir')!;
    expect(admission.volumeMounts?.find((m) => m.name === 'webhook-tls')?.mountPath).toBe(certDir);

    const gardenlet = containerOf(objects, 'gardenlet');
    expect(flag(gardenlet, 'domain')).toBe('local.gardener.cloud');
    expect(parseHostIPs(flag(gardenlet, 'load-balancer-ipv4'), flag(gardenlet, 'load-balancer-ipv6'))).toBeDefined();
    const dnsServer = flag(gardenlet, 'dns-server')!;
    expect(parseServer(dnsServer).display).toBe(`${nameOf('dns-server')}.${NAMESPACE}.svc:53`);
    expect(flag(gardenlet, 'dns-tsig-key-name')).toBe('gardener-ipv6');
    expect(flag(gardenlet, 'dns-tsig-secret-file')).toBe('/etc/gardener-ipv6/dns-tsig/secret');
    expect(flag(gardenlet, 'seed-name')).toBeUndefined();
  });

  it('turns leader election on for the controllers, with a Lease each can create and renew', () => {
    for (const component of CONTROLLERS) {
      const c = containerOf(objects, component);
      expect(flag(c, 'leader-elect'), component).toBe('');
      expect(flag(c, 'leader-election-namespace'), component).toBe(NAMESPACE);
      const lease = flag(c, 'leader-election-id');
      expect(lease, component).toBe(nameOf(component));
      const role = named<Role>(objects, 'Role', `${nameOf(component)}-leader-election`);
      expect(role.metadata.namespace).toBe(NAMESPACE);
      expect(role.rules.flatMap(grants).sort()).toEqual(
        [...allow(Refs.lease, ['create']), ...allow(Refs.lease, ['get', 'update'], { names: [lease!] })].sort(),
      );
      const binding = named<Binding>(objects, 'RoleBinding', `${nameOf(component)}-leader-election`);
      expect(binding.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: role.metadata.name,
      });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: nameOf(component), namespace: NAMESPACE }]);
    }
    expect(ofKind(objects, 'Role').filter((r) => r.metadata.name.endsWith('-leader-election'))).toHaveLength(
      CONTROLLERS.length,
    );
  });

  it("lets the gardenlet renew its Seed's Lease and the scheduler read it, in gardener-system-seed-lease only", () => {
    const namespace = named<K8sObject>(objects, 'Namespace', SEED_LEASE_NAMESPACE);
    // Other gardenlets of the garden renew theirs there: an uninstall keeps it.
    expect(namespace.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const roleOf = (component: ChartComponent) => {
      const role = named<Role>(objects, 'Role', `${nameOf(component)}-seed-lease`);
      expect(role.metadata.namespace).toBe(SEED_LEASE_NAMESPACE);
      const binding = named<Binding>(objects, 'RoleBinding', `${nameOf(component)}-seed-lease`);
      expect([binding.metadata.namespace, binding.roleRef.name, binding.subjects]).toEqual([
        SEED_LEASE_NAMESPACE,
        role.metadata.name,
        [{ kind: 'ServiceAccount', name: nameOf(component), namespace: NAMESPACE }],
      ]);
      return role.rules.flatMap(grants).sort();
    };
    // src/gardenlet/seed/lease.ts: get, then update or create; every Seed's without a seedName.
    expect(roleOf('gardenlet')).toEqual(
      [...allow(Refs.lease, ['create']), ...allow(Refs.lease, ['get', 'update'])].sort(),
    );
    // src/controllermanager/seed-lifecycle.ts: a get per Seed and sync period.
    expect(roleOf('scheduler')).toEqual(allow(Refs.lease, ['get']).sort());
    expect(ofKind(objects, 'Role').filter((r) => r.metadata.namespace === SEED_LEASE_NAMESPACE)).toHaveLength(2);
    // With a seedName, only that Seed's Lease.
    const one = renderChart(preset, { release: RELEASE, namespace: NAMESPACE, set: { seedName: 'local-ipv6' } });
    expect(
      named<Role>(one, 'Role', `${nameOf('gardenlet')}-seed-lease`)
        .rules.flatMap(grants)
        .sort(),
    ).toEqual(
      [...allow(Refs.lease, ['create']), ...allow(Refs.lease, ['get', 'update'], { names: ['local-ipv6'] })].sort(),
    );
  });

  it("narrows the gardenlet's and the network extension's writes to their own with an admission policy", () => {
    const policy = named<{
      spec: {
        matchConditions: { expression: string }[];
        validations: { expression: string; message: string }[];
        failurePolicy: string;
      };
    }>(objects, 'ValidatingAdmissionPolicy', nameOf('gardenlet'));
    expect(policy.spec.failurePolicy).toBe('Fail');
    const account = (component: string) => `'system:serviceaccount:${NAMESPACE}:${nameOf(component)}'`;
    expect(policy.spec.matchConditions[0]!.expression).toBe(
      `request.userInfo.username in [${account('gardenlet')}, ${account('network')}]`,
    );
    expect(policy.spec.validations.map((v) => v.message)).toEqual([
      'the gardenlet writes only the namespace garden and seed namespaces (shoot--<project>--<shoot>)',
      'the gardenlet deletes only its seed namespaces (label gardener.cloud/role=shoot)',
      'the gardenlet writes the status of Services in seed namespaces (shoot--<project>--<shoot>) only',
      "the gardenlet writes objects only in seed namespaces (shoot--<project>--<shoot>), NetworkPolicies in garden too and a shoot's <shoot>.ca-cluster ConfigMap in its project namespace",
      "the gardenlet's pods share no namespace with the host (hostNetwork, hostPID, hostIPC)",
      "the gardenlet's pods are privileged or add capabilities but NET_ADMIN only in a user namespace of their own (hostUsers: false)",
      `the gardenlet's pods mount no host folder but etcd's data below ${ETCD_HOST_DIR}`,
    ]);
    // The folder the policy allows is the one the etcd StatefulSets mount.
    expect(policy.spec.validations.at(-1)!.expression).toContain(`v.hostPath.path.startsWith("${ETCD_HOST_DIR}/")`);
    const binding = named<{ spec: { policyName: string; validationActions: string[] } }>(
      objects,
      'ValidatingAdmissionPolicyBinding',
      nameOf('gardenlet'),
    );
    expect(binding.spec).toEqual({ policyName: nameOf('gardenlet'), validationActions: ['Deny'] });
  });

  it('grants each component exactly the API calls its code makes', () => {
    for (const component of Object.keys(CHART_COMPONENTS) as ChartComponent[]) {
      const name = nameOf(component);
      const pod = named<Deployment>(objects, 'Deployment', name).spec.template.spec;
      expect(pod.serviceAccountName).toBe(name);
      expect(named(objects, 'ServiceAccount', name).metadata.namespace).toBe(NAMESPACE);
      const role = named<Role>(objects, 'ClusterRole', name);
      // The default controlPlaneWorkloads (auto) grants the gardenlet what running shoots as workloads takes.
      const expected = [
        ...EXPECTED_CLUSTER_GRANTS[component],
        ...(component === 'gardenlet' ? EXPECTED_WORKLOAD_GRANTS : []),
      ];
      expect(role.rules.flatMap(grants).sort(), component).toEqual(expected.sort());
      const binding = named<Binding>(objects, 'ClusterRoleBinding', name);
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name, namespace: NAMESPACE }]);
    }
    // Beside the components' own: gardenlets' garden credentials (with the webhook), and the kind values' one more.
    const components = Object.keys(CHART_COMPONENTS).length + 1 + (preset === 'default' ? 0 : 1);
    expect(ofKind(objects, 'ClusterRole')).toHaveLength(components);
    expect(ofKind(objects, 'ClusterRoleBinding')).toHaveLength(components);
    for (const role of [...ofKind<Role>(objects, 'ClusterRole'), ...ofKind<Role>(objects, 'Role')]) {
      for (const rule of role.rules) {
        const all = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs];
        expect(all, role.metadata.name).not.toContain('*');
        expect(rule.nonResourceURLs, role.metadata.name).toBeUndefined();
        if (rule.resources?.includes('secrets')) {
          expect(rule.verbs, `${role.metadata.name} must not read all secrets`).not.toContain('list');
          expect(rule.verbs, role.metadata.name).not.toContain('watch');
          // Secrets are read by name only: no component may read any secret of any namespace. The gardenlet with
          // shoots as workloads writes per-pool secrets without a fixed name (and reads none of them).
          if ((rule.resourceNames ?? []).length === 0) {
            // Gardenlets' garden credentials: the seed restriction narrows them to their own shoots' `<shoot>.*`.
            expect([nameOf('gardenlet'), SEEDS_CLUSTER_ROLE], 'secrets by name').toContain(role.metadata.name);
            expect(rule.verbs.sort(), 'secrets written, not read').toEqual(['create', 'delete', 'patch']);
          }
        }
      }
    }
    // The DNS server reads nothing from the API.
    expect(named<Deployment>(objects, 'Deployment', nameOf('dns-server')).spec.template.spec).toMatchObject({
      automountServiceAccountToken: false,
    });
  });

  it("grants gardenlets' garden credentials the ClusterRole the code declares, bound to their group", () => {
    const role = named<{ rules: unknown[] }>(objects, 'ClusterRole', SEEDS_CLUSTER_ROLE);
    expect(role.rules).toEqual((seedsClusterRole() as unknown as { rules: unknown[] }).rules);
    const binding = named<{ subjects: unknown[]; roleRef: unknown }>(objects, 'ClusterRoleBinding', SEEDS_CLUSTER_ROLE);
    const expected = seedAccessObjects().find((o) => o.object.kind === 'ClusterRoleBinding')!.object as unknown as {
      subjects: unknown[];
      roleRef: unknown;
    };
    expect(binding.subjects).toEqual(expected.subjects);
    expect(binding.roleRef).toEqual(expected.roleRef);
  });

  it('registers the webhooks the code would, through the Service, with a certificate for its names', () => {
    const secret = named<{ type: string; data: Record<string, string> }>(
      objects,
      'Secret',
      `${nameOf('admission')}-tls`,
    );
    expect(secret.type).toBe('kubernetes.io/tls');
    const pem = (key: string) => Buffer.from(secret.data[key]!, 'base64').toString();
    const expectedConfigs = desiredWebhookConfigurations({
      caBundle: pem('ca.crt'),
      service: { name: nameOf('admission'), namespace: NAMESPACE, port: 443 },
    });
    const validating = named<{ webhooks: Webhook[] }>(objects, 'ValidatingWebhookConfiguration', RELEASE);
    const mutating = named<{ webhooks: Webhook[] }>(objects, 'MutatingWebhookConfiguration', RELEASE);
    expect(validating.webhooks).toEqual(expectedConfigs.validating.webhooks);
    expect(mutating.webhooks).toEqual(expectedConfigs.mutating.webhooks);
    // shoots/adminkubeconfig: the APIService the code describes, through the same Service and CA; the admission
    // server reads the aggregator's configuration with Kubernetes' own Role.
    const apiService = named<{ spec: unknown }>(objects, 'APIService', API_SERVICE_NAME);
    expect(apiService.spec).toEqual(
      desiredAPIService({
        caBundle: pem('ca.crt'),
        service: { name: nameOf('admission'), namespace: NAMESPACE, port: 443 },
      }).spec,
    );
    const reader = named<Binding>(objects, 'RoleBinding', `${nameOf('admission')}-authentication-reader`);
    expect(reader.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    });
    expect(reader.subjects).toEqual([{ kind: 'ServiceAccount', name: nameOf('admission'), namespace: NAMESPACE }]);

    const ca = new X509Certificate(pem('ca.crt'));
    const cert = new X509Certificate(pem('tls.crt'));
    expect(ca.ca).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    const service = nameOf('admission');
    for (const host of [`${service}.${NAMESPACE}.svc`, `${service}.${NAMESPACE}.svc.cluster.local`]) {
      expect(cert.checkHost(host), host).toBe(host);
    }
    expect(createPublicKey(createPrivateKey(pem('tls.key'))).export({ format: 'pem', type: 'spki' })).toBe(
      cert.publicKey.export({ format: 'pem', type: 'spki' }),
    );
    expect(new Date(cert.validTo).getTime() - Date.now()).toBeGreaterThan(9 * 365 * 24 * 3600_000);

    // The pods roll when the certificate changes: the checksum is of the same certificate.
    const admission = named<Deployment>(objects, 'Deployment', service).spec.template;
    const checksum = createHash('sha256')
      .update(JSON.stringify({ ca: pem('ca.crt'), cert: pem('tls.crt'), key: pem('tls.key') }))
      .digest('hex');
    expect(admission.metadata.annotations?.['checksum/webhook-tls']).toBe(checksum);
    expect(admission.spec.volumes?.find((v) => v.name === 'webhook-tls')?.secret?.secretName).toBe(
      secret.metadata.name,
    );
  });

  it('shares one TSIG key between the gardenlet and the DNS server', () => {
    const secret = named<{ data: Record<string, string> }>(objects, 'Secret', nameOf('dns-tsig'));
    const key = Buffer.from(secret.data.secret!, 'base64').toString();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(Buffer.from(secret.data['named.key']!, 'base64').toString()).toBe(
      `key "gardener-ipv6" {\n  algorithm hmac-sha256;\n  secret "${key}";\n};\n`,
    );
    const volumes = (component: string) =>
      named<Deployment>(objects, 'Deployment', nameOf(component)).spec.template.spec.volumes ?? [];
    expect(volumes('gardenlet').find((v) => v.name === 'dns-tsig')?.secret?.secretName).toBe(nameOf('dns-tsig'));
    expect(volumes('dns-server').find((v) => v.name === 'tsig')?.secret?.secretName).toBe(nameOf('dns-tsig'));
  });
});

describe('helm template --include-crds', () => {
  it('brings the CRD of every custom resource the components use', () => {
    const objects = renderChart('default', { includeCRDs: true });
    const crds = ofKind<{ spec: { group: string; names: { plural: string } } }>(objects, 'CustomResourceDefinition');
    const served = crds.map((c) => `${c.spec.names.plural}.${c.spec.group}`).sort();
    const used = [
      Refs.shoot,
      Refs.seed,
      // The webhook's CloudProfile cache.
      Refs.cloudProfile,
      Refs.network,
      Refs.dnsRecord,
      Refs.operatingSystemConfig,
      Refs.worker,
      Refs.cluster,
      Refs.managedResource,
      // The shoots' client CAs, for shoots/adminkubeconfig.
      Refs.internalSecret,
    ];
    expect(served).toEqual(used.map((r) => `${r.plural}.${r.group}`).sort());
  });
});

describe('chart values', () => {
  it('run shoots as workloads where the cluster has Nodes, or objects-only with the least RBAC', () => {
    const auto = containerOf(renderChart('ipv6'), 'gardenlet');
    expect(flag(auto, 'control-plane-workloads')).toBe('auto');
    expect(flag(auto, 'load-balancer-networks')).toBeUndefined();
    const pinned = renderChart('dual', {
      set: { 'loadBalancerNetworks.ipv6': 'fd00:ff:1::/64', 'loadBalancerNetworks.ipv4': '10.255.1.0/24' },
    });
    expect(flag(containerOf(pinned, 'gardenlet'), 'load-balancer-networks')).toBe('fd00:ff:1::/64,10.255.1.0/24');
    const admission = containerOf(renderChart('ipv6'), 'admission');
    const limits = (container: Container) =>
      ['max-machines-per-pool', 'max-machines-per-shoot', 'max-machines'].map((name) => flag(container, name));
    expect(limits(admission)).toEqual(['10', '20', '40']);
    const raised = containerOf(
      renderChart('ipv6', {
        set: { 'machineLimits.perPool': '40', 'machineLimits.perShoot': '200', 'machineLimits.total': '1000' },
      }),
      'admission',
    );
    expect(limits(raised)).toEqual(['40', '200', '1000']);
    expect(tryRenderChart('ipv6', { set: { 'machineLimits.perPool': '0' } }).stderr).toContain('perPool');
    expect(tryRenderChart('ipv6', { set: { 'machineLimits.total': '0' } }).stderr).toContain('total');
    // The webhook refuses shoot ranges inside them: it must know the same networks.
    expect(flag(containerOf(pinned, 'admission'), 'load-balancer-networks')).toBe('fd00:ff:1::/64,10.255.1.0/24');
    expect(flag(containerOf(renderChart('ipv6'), 'admission'), 'load-balancer-networks')).toBeUndefined();
    const objectsOnly = renderChart('ipv6', { set: { controlPlaneWorkloads: 'false' } });
    expect(flag(containerOf(objectsOnly, 'gardenlet'), 'control-plane-workloads')).toBe('false');
    const role = named<Role>(objectsOnly, 'ClusterRole', nameOf('gardenlet'));
    expect(role.rules.flatMap(grants).sort()).toEqual([...EXPECTED_CLUSTER_GRANTS.gardenlet].sort());
    expect(tryRenderChart('ipv6', { set: { controlPlaneWorkloads: 'yes' } }).stderr).toContain('controlPlaneWorkloads');
    expect(tryRenderChart('ipv6', { set: { 'loadBalancerNetworks.ipv6': 'fd00:ff::' } }).code).not.toBe(0);
  });

  it('pass feature gates, DNS server, domain, host IPs and the seed name to the gardenlet', () => {
    const objects = renderChart('ipv6', {
      set: {
        'dns.server': '[fd00:10:2::53]:53',
        'dns.domain': 'ipv6.example.org',
        'dns.tsig.secret': Buffer.alloc(32, 7).toString('base64'),
        'loadBalancerIPs.ipv6': 'fd00:10::1',
        'loadBalancerIPs.ipv4': '172.18.0.2',
        seedName: 'local-ipv6',
        'featureGates.DualStack': 'true',
      },
    });
    const gardenlet = containerOf(objects, 'gardenlet');
    expect(flag(gardenlet, 'dns-server')).toBe('[fd00:10:2::53]:53');
    expect(flag(gardenlet, 'domain')).toBe('ipv6.example.org');
    expect(flag(gardenlet, 'load-balancer-ipv6')).toBe('fd00:10::1');
    expect(flag(gardenlet, 'load-balancer-ipv4')).toBe('172.18.0.2');
    expect(flag(gardenlet, 'seed-name')).toBe('local-ipv6');
    expect(flag(gardenlet, 'feature-gates')).toBe('DualStack=true,IPv6SingleStack=true');
    const secret = named<{ data: Record<string, string> }>(objects, 'Secret', nameOf('dns-tsig'));
    expect(Buffer.from(secret.data.secret!, 'base64').toString()).toBe(Buffer.alloc(32, 7).toString('base64'));
    const namedConf = named<{ data: Record<string, string> }>(objects, 'ConfigMap', nameOf('dns-server')).data;
    expect(namedConf['named.conf']).toContain('zone "ipv6.example.org" {');
    expect(namedConf.zone).toContain('$ORIGIN ipv6.example.org.');
  });

  it('leave out the DNS server and TSIG when dns.server points elsewhere', () => {
    const objects = renderChart('ipv6', { set: { 'dns.server': '[fd00::53]:53', 'dnsServer.enabled': 'false' } });
    expect(
      objects.filter((o) => o.metadata.name.includes('dns-server') || o.metadata.name.includes('dns-tsig')),
    ).toEqual([]);
    const gardenlet = containerOf(objects, 'gardenlet');
    expect(flag(gardenlet, 'dns-server')).toBe('[fd00::53]:53');
    expect(flag(gardenlet, 'dns-tsig-key-name')).toBeUndefined();
    expect(gardenlet.volumeMounts?.map((m) => m.name)).toEqual(['tmp']);
  });

  it('scope the webhooks with selectors, as the code would', () => {
    const objects = renderChart('ipv6', {
      set: {
        'webhook.timeoutSeconds': '5',
        'webhook.objectSelector.matchLabels.gardener-ipv6/admission': 'enabled',
        'webhook.namespaceSelector.matchLabels.gardener-ipv6/admission': 'enabled',
      },
    });
    const secret = named<{ data: Record<string, string> }>(objects, 'Secret', `${nameOf('admission')}-tls`);
    const selector = { matchLabels: { 'gardener-ipv6/admission': 'enabled' } };
    const expectedConfigs = desiredWebhookConfigurations({
      caBundle: Buffer.from(secret.data['ca.crt']!, 'base64'),
      service: { name: nameOf('admission'), namespace: 'gardener-ipv6', port: 443 },
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      objectSelector: selector,
      namespaceSelector: selector,
    });
    expect(named<{ webhooks: unknown[] }>(objects, 'ValidatingWebhookConfiguration', RELEASE).webhooks).toEqual(
      expectedConfigs.validating.webhooks,
    );
    expect(named<{ webhooks: unknown[] }>(objects, 'MutatingWebhookConfiguration', RELEASE).webhooks).toEqual(
      expectedConfigs.mutating.webhooks,
    );
  });

  it('take a webhook certificate from the values', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-chart-'));
    try {
      const certs = await generateCertificates(dir, { ipAddresses: [], dnsNames: [`${nameOf('admission')}.x.svc`] });
      const result = helm([
        'template',
        RELEASE,
        CHART_DIR,
        '--set-file',
        `webhook.certificate.caCert=${certs.caCert}`,
        '--set-file',
        `webhook.certificate.cert=${certs.serverCert}`,
        '--set-file',
        `webhook.certificate.key=${certs.serverKey}`,
      ]);
      expect(result.stderr).toBe('');
      const objects = parseObjects(result.stdout);
      const secret = named<{ data: Record<string, string> }>(objects, 'Secret', `${nameOf('admission')}-tls`);
      const decoded = (key: string) => Buffer.from(secret.data[key]!, 'base64').toString();
      expect(decoded('ca.crt')).toBe(readFileSync(certs.caCert, 'utf8'));
      expect(decoded('tls.crt')).toBe(readFileSync(certs.serverCert, 'utf8'));
      expect(decoded('tls.key')).toBe(readFileSync(certs.serverKey, 'utf8'));
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
        expect(named<{ webhooks: Webhook[] }>(objects, kind, RELEASE).webhooks[0]!.clientConfig.caBundle).toBe(
          secret.data['ca.crt'],
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leave out what is disabled, RBAC included', () => {
    const objects = renderChart('ipv6', {
      set: { 'admission.enabled': 'false', 'networkExtension.enabled': 'false', 'leaderElection.enabled': 'false' },
    });
    expect(
      deployments(objects)
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['dns-local', 'dns-server', 'gardenlet', 'scheduler'].map(nameOf));
    expect(objects.filter((o) => /admission|network-calico/.test(o.metadata.name))).toEqual([]);
    // The gardenlet's and the scheduler's heartbeat Roles stay: leader election is not what they are for.
    expect(
      objects
        .filter((o) => /WebhookConfiguration|^Role/.test(o.kind))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual(
      ['gardenlet', 'scheduler']
        .flatMap((c) => [`Role/${nameOf(c)}-seed-lease`, `RoleBinding/${nameOf(c)}-seed-lease`])
        .sort(),
    );
    expect(flag(containerOf(objects, 'gardenlet'), 'leader-elect')).toBeUndefined();
  });

  it("install a seed of another cluster's garden: its gardenlet with the garden's kubeconfig, nothing of the garden", () => {
    const objects = renderChart('dual', {
      set: { 'garden.kubeconfigSecret': 'garden-kubeconfig', seedName: 'local-dual' },
    });
    expect(
      deployments(objects)
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['dns-local', 'dns-server', 'gardenlet', 'network-calico'].map(nameOf));
    // The webhooks, the APIService, the seed-access RBAC and the seed Leases' namespace are the garden's.
    expect(
      objects
        .filter(
          (o) =>
            /WebhookConfiguration|APIService/.test(o.kind) || /admission|scheduler|system:seeds/.test(o.metadata.name),
        )
        .map((o) => `${o.kind}/${o.metadata.name}`),
    ).toEqual([]);
    expect(
      objects.filter((o) => o.metadata.namespace === SEED_LEASE_NAMESPACE || o.metadata.name === SEED_LEASE_NAMESPACE),
    ).toEqual([]);
    const gardenlet = named<Deployment>(objects, 'Deployment', nameOf('gardenlet')).spec.template.spec;
    const container = gardenlet.containers[0]!;
    expect(flag(container, 'seed-name')).toBe('local-dual');
    expect(flag(container, 'garden-kubeconfig')).toBe('/etc/gardener-ipv6/garden/kubeconfig');
    expect(runCommand().options.find((o) => o.long === '--garden-kubeconfig')?.required).toBe(true);
    expect(container.volumeMounts).toContainEqual(
      expect.objectContaining({ name: 'garden-kubeconfig', mountPath: '/etc/gardener-ipv6/garden' }),
    );
    expect(gardenlet.volumes?.find((v) => v.name === 'garden-kubeconfig')?.secret?.secretName).toBe(
      'garden-kubeconfig',
    );
    const failed = tryRenderChart('dual', { set: { 'garden.kubeconfigSecret': 'garden-kubeconfig' } });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('garden.kubeconfigSecret is set and seedName is empty');
  });

  it('register the Seed of seedConfig: mounted for the gardenlet, restarted when it changes', () => {
    const seedYAML = readFileSync(join(projectRoot(), 'examples', 'seed-dual-stack.yaml'), 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-chart-'));
    try {
      const values = join(dir, 'seed.yaml');
      writeFileSync(values, `seedConfig:\n${seedYAML.replace(/^/gm, '  ')}`);
      const render = (extra: Record<string, string> = {}) =>
        renderChart('dual', {
          valuesFiles: [values],
          set: { 'garden.kubeconfigSecret': 'garden-kubeconfig', ...extra },
        });
      const objects = render();
      const config = named<{ data: Record<string, string> }>(
        objects,
        'ConfigMap',
        `${nameOf('gardenlet')}-seed-config`,
      );
      const seed = parseYAML(config.data['seed.yaml']!) as { metadata: { name: string }; spec: unknown };
      expect(seed.metadata.name).toBe('local-dual');
      expect(seed).toEqual(parseYAML(seedYAML));
      const gardenlet = named<Deployment>(objects, 'Deployment', nameOf('gardenlet')).spec.template;
      expect(flag(gardenlet.spec.containers[0]!, 'seed-config')).toBe('/etc/gardener-ipv6/seed/seed.yaml');
      // The seed's name comes from the configuration (run derives it), and a changed one restarts the gardenlet.
      expect(flag(gardenlet.spec.containers[0]!, 'seed-name')).toBeUndefined();
      const checksum = gardenlet.metadata.annotations?.['checksum/seed-config'];
      expect(checksum).toMatch(/^[0-9a-f]{64}$/);
      const relabelled = named<Deployment>(
        render({ 'seedConfig.metadata.labels.tier': 'second' }),
        'Deployment',
        nameOf('gardenlet'),
      );
      expect(relabelled.spec.template.metadata.annotations?.['checksum/seed-config']).not.toBe(checksum);
      const mismatch = tryRenderChart('dual', { valuesFiles: [values], set: { seedName: 'other' } });
      expect(mismatch.code).toBe(1);
      expect(mismatch.stderr).toContain(
        'seedConfig names the Seed "local-dual" and seedName is "other": give one name',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the values schema', () => {
  const SCHEMA_ERROR =
    "values don't meet the specifications of the schema(s) in the following chart(s):\ngardener-ipv6:";
  const cases: [string, Record<string, string>, string][] = [
    [
      'an unknown IP family',
      { 'service.ipFamilies': '{IPv5}' },
      "- at '/service/ipFamilies/0': value must be one of 'IPv4', 'IPv6'",
    ],
    [
      'two families for SingleStack',
      { 'service.ipFamilies': '{IPv6,IPv4}' },
      "- at '/service/ipFamilies': maxItems: got 2, want 1",
    ],
    [
      'an unknown ipFamilyPolicy',
      { 'service.ipFamilyPolicy': 'DualStack' },
      "- at '/service/ipFamilyPolicy': value must be one of 'SingleStack', 'PreferDualStack', 'RequireDualStack'",
    ],
    ['a port out of range', { 'webhook.port': '70000' }, "- at '/webhook/port': maximum: got 70,000, want 65,535"],
    [
      'a webhook that admits unchecked while it is down',
      { 'webhook.failurePolicy': 'Ignore' },
      "- at '/webhook/failurePolicy': value must be 'Fail'",
    ],
    ['port 0', { healthPort: '0' }, "- at '/healthPort': minimum: got 0, want 1"],
    [
      'a misspelt feature gate',
      { 'featureGates.IPv6Singlestack': 'true' },
      "additional properties 'IPv6Singlestack' not allowed",
    ],
    [
      'a feature gate that is not a bool',
      { 'featureGates.DualStack': 'yes' },
      "- at '/featureGates/DualStack': got string, want boolean",
    ],
    [
      'an IPv4 address as IPv6 host IP',
      { 'loadBalancerIPs.ipv6': '127.0.0.1' },
      "- at '/loadBalancerIPs/ipv6': '127.0.0.1' does not match pattern",
    ],
    [
      'an IPv6 DNS server without brackets',
      { 'dns.server': 'fd00::53:53' },
      "- at '/dns/server': 'fd00::53:53' does not match pattern",
    ],
    ['root', { 'podSecurityContext.runAsUser': '0' }, "- at '/podSecurityContext/runAsUser': minimum: got 0, want 1"],
    [
      'a container allowed to run as root',
      { 'containerSecurityContext.runAsNonRoot': 'false' },
      "- at '/containerSecurityContext/runAsNonRoot': value must be true",
    ],
    [
      'an added capability',
      { 'containerSecurityContext.capabilities.add': '{NET_ADMIN}' },
      "- at '/containerSecurityContext/capabilities/add': maxItems: got 1, want 0",
    ],
    [
      'capabilities that are not all dropped',
      { 'containerSecurityContext.capabilities.drop': '{NET_RAW}' },
      "- at '/containerSecurityContext/capabilities/drop': no items match contains schema",
    ],
    [
      'a writable root filesystem',
      { 'containerSecurityContext.readOnlyRootFilesystem': 'false' },
      "- at '/containerSecurityContext/readOnlyRootFilesystem': value must be true",
    ],
    [
      'privilege escalation',
      { 'containerSecurityContext.allowPrivilegeEscalation': 'true' },
      "- at '/containerSecurityContext/allowPrivilegeEscalation': value must be false",
    ],
    [
      'a privileged container',
      { 'containerSecurityContext.privileged': 'true' },
      "- at '/containerSecurityContext/privileged': value must be false",
    ],
    [
      'an unconfined seccomp profile',
      { 'podSecurityContext.seccompProfile.type': 'Unconfined' },
      "- at '/podSecurityContext/seccompProfile/type': value must be one of 'RuntimeDefault', 'Localhost'",
    ],
    [
      'an unmasked /proc',
      { 'containerSecurityContext.procMount': 'Unmasked' },
      "- at '/containerSecurityContext/procMount': value must be 'Default'",
    ],
    [
      'a pod-level procMount, which Kubernetes does not have',
      { 'podSecurityContext.procMount': 'Unmasked' },
      "- at '/podSecurityContext': additional properties 'procMount' not allowed",
    ],
    [
      "SELinux's super-privileged container type",
      { 'podSecurityContext.seLinuxOptions.type': 'spc_t' },
      "- at '/podSecurityContext/seLinuxOptions/type': value must be one of 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'",
    ],
    [
      'an SELinux user',
      { 'containerSecurityContext.seLinuxOptions.user': 'system_u' },
      "- at '/containerSecurityContext/seLinuxOptions': additional properties 'user' not allowed",
    ],
    [
      'a Localhost seccomp profile outside the seccomp folder',
      {
        'podSecurityContext.seccompProfile.type': 'Localhost',
        'podSecurityContext.seccompProfile.localhostProfile': '../../x',
      },
      "- at '/podSecurityContext/seccompProfile/localhostProfile': '../../x' does not match pattern",
    ],
    [
      'a Localhost seccomp profile without its file',
      { 'containerSecurityContext.seccompProfile.type': 'Localhost' },
      "- at '/containerSecurityContext/seccompProfile': missing property 'localhostProfile'",
    ],
    [
      'the root group as a supplemental group',
      { 'podSecurityContext.supplementalGroups': '{0}' },
      "- at '/podSecurityContext/supplementalGroups/0': minimum: got 0, want 1",
    ],
    [
      'a host sysctl',
      { 'podSecurityContext.sysctls[0].name': 'kernel.shm_rmid_forced', 'podSecurityContext.sysctls[0].value': '1' },
      "- at '/podSecurityContext': additional properties 'sysctls' not allowed",
    ],
    [
      'an API server CIDR with a bad prefix',
      { 'networkPolicy.apiServer.cidrs': '{fd00::/129}' },
      "- at '/networkPolicy/apiServer/cidrs/0': 'fd00::/129' does not match pattern",
    ],
    [
      'a NetworkPolicy peer with a misspelt key',
      { 'networkPolicy.apiServer.peers[0].namespaceSelectors.matchLabels.a': 'b' },
      "- at '/networkPolicy/apiServer/peers/0': additional properties 'namespaceSelectors' not allowed",
    ],
    [
      'an unknown failurePolicy',
      { 'webhook.failurePolicy': 'Sometimes' },
      "- at '/webhook/failurePolicy': value must be 'Fail'",
    ],
    ['an unknown value', { 'webhooks.port': '1' }, "- at '': additional properties 'webhooks' not allowed"],
  ];

  it.each(cases)('rejects %s with a message naming the field', (_, set, message) => {
    const result = tryRenderChart('default', { set });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(SCHEMA_ERROR);
    expect(result.stderr).toContain(message);
    const lint = helm(['lint', CHART_DIR, ...valuesArgs('default', set)]);
    expect(lint.code).toBe(1);
    expect(lint.stdout).toContain(message);
  });

  it("accepts what Pod Security's restricted standard allows", () => {
    const objects = renderChart('default', {
      set: {
        'podSecurityContext.seccompProfile.type': 'Localhost',
        'podSecurityContext.seccompProfile.localhostProfile': 'profiles/gardener-ipv6.json',
        'podSecurityContext.supplementalGroups': '{1000}',
        'podSecurityContext.seLinuxOptions.type': 'container_t',
        'podSecurityContext.seLinuxOptions.level': 's0:c123',
        'containerSecurityContext.procMount': 'Default',
      },
    });
    const pod = named<Deployment>(objects, 'Deployment', nameOf('gardenlet')).spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/gardener-ipv6.json' },
      supplementalGroups: [1000],
      seLinuxOptions: { type: 'container_t', level: 's0:c123' },
    });
  });

  it('leaves combinations to the templates, which fail with what to change', () => {
    const noServer = tryRenderChart('default', { set: { 'dnsServer.enabled': 'false' } });
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toContain(
      'dns.server is empty and dnsServer.enabled is false: set dns.server to the HOST:PORT of a DNS server',
    );
    const partialCert = tryRenderChart('default', { set: { 'webhook.certificate.cert': 'x' } });
    expect(partialCert.code).toBe(1);
    expect(partialCert.stderr).toContain('webhook.certificate: give caCert, cert and key together');
  });

  it('knows exactly the feature gates of the binary', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
      properties: { featureGates: { properties: Record<string, unknown> } };
    };
    expect(Object.keys(schema.properties.featureGates.properties).sort()).toEqual(Object.values(Feature).sort());
  });
});
