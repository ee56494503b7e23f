/**
 * `helm install` of charts/gardener-ipv6 into the shared control plane (no nodes, so no pods: what counts is that
 * the real API server accepts every object), then the chart's RBAC put to work: SubjectAccessReviews for what each
 * component may and may not do, and the gardenlet and both extensions running in this process with tokens of the
 * chart's ServiceAccounts until an IPv6 Shoot is reconciled, published to DNS and deleted again.
 *
 * The webhook configurations would intercept the Shoots and Seeds of every other test on this server; the install
 * scopes them to a label nobody sets (failurePolicy is always Fail), and afterAll uninstalls the release.
 */
import { Resolver } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import { Writable } from 'node:stream';
import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  type V1Deployment,
  type V1Service,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { addDNSExtension } from '../../src/extensions/dns/controller.js';
import { addNetworkExtension } from '../../src/extensions/network/controller.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { addSchedulerController } from '../../src/scheduler/scheduler.js';
import { addGardenletControllers } from '../../src/gardenlet/gardenlet.js';
import { addProviderLocalControllers } from '../../src/extensions/provider-local/controller.js';
import { SEED_LEASE_NAMESPACE } from '../../src/apis/core/v1beta1/seed-lease.js';
import { Refs, type ResourceRef } from '../../src/apis/refs.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { asApiError } from '../../src/runtime/errors.js';
import { newLogger } from '../../src/runtime/log.js';
import { Manager } from '../../src/runtime/manager.js';
import { CHART_DIR, helm, helmBinary, parseObjects, valuesArgs, type K8sObject } from '../deploy/helm.js';
import {
  CHART_COMPONENTS,
  CONTROLLERS,
  EXPECTED_CLUSTER_GRANTS,
  grantAttributes,
  type ChartComponent,
} from '../deploy/expected-rbac.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { ETCD_HOST_DIR } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { kubeConfig, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const SUFFIX = uniqueSuffix();
const RELEASE = `gardener-ipv6-${SUFFIX}`;
const NAMESPACE = `gardener-ipv6-helm-${SUFFIX}`;
/** A label no object of the other tests has: the webhooks see nothing. */
const WEBHOOK_SCOPE = { 'gardener-ipv6.test/helm-install': SUFFIX };
const SERVICE_RANGE = 'fd00:10:2::';

const nameOf = (component: string) => `${RELEASE}-${component}`;
const admin = new ResourceClient(kubeConfig());
const SERVICE_ACCOUNT: ResourceRef = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};

/** Where each kind the chart renders lives in the API. */
const REFS: Record<string, ResourceRef> = {
  Namespace: Refs.namespace,
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  Secret: Refs.secret,
  ConfigMap: Refs.configMap,
  Service: Refs.service,
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true },
  ClusterRole: rbac('clusterroles', 'ClusterRole', false),
  ClusterRoleBinding: rbac('clusterrolebindings', 'ClusterRoleBinding', false),
  Role: rbac('roles', 'Role', true),
  RoleBinding: rbac('rolebindings', 'RoleBinding', true),
  ValidatingWebhookConfiguration: webhook('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration'),
  MutatingWebhookConfiguration: webhook('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'),
  ValidatingAdmissionPolicy: webhook('validatingadmissionpolicies', 'ValidatingAdmissionPolicy'),
  ValidatingAdmissionPolicyBinding: webhook('validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding'),
  NetworkPolicy: {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
  },
  PodDisruptionBudget: {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
  },
};
function rbac(plural: string, kind: string, namespaced: boolean): ResourceRef {
  return { group: 'rbac.authorization.k8s.io', version: 'v1', plural, kind, namespaced };
}
function webhook(plural: string, kind: string): ResourceRef {
  return { group: 'admissionregistration.k8s.io', version: 'v1', plural, kind, namespaced: false };
}

function helmArgs(...args: string[]): string[] {
  return [...args, '--kubeconfig', inject('kubeconfig')];
}

let manifest: K8sObject[];
let installOutput: string;

beforeAll(async () => {
  await helmBinary();
  // A gardenlet of the garden may have made the seed lease Namespace before the release (seed-lifecycle.test.ts's does
  // on this server): the release installs beside it, without taking it over.
  await admin
    .create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SEED_LEASE_NAMESPACE } })
    .catch((e: unknown) => {
      if (asApiError(e)?.code !== 409) throw e;
    });
  const install = helm(
    helmArgs(
      'install',
      RELEASE,
      CHART_DIR,
      '--namespace',
      NAMESPACE,
      '--create-namespace',
      '--wait=false',
      ...valuesArgs('ipv6', {
        // This API server has no Nodes: the gardenlet reconciles objects only, with the RBAC for just that.
        controlPlaneWorkloads: 'false',
        // No admission pod runs here: an APIService nobody answers would fail discovery of core.gardener.cloud (and
        // with it namespace deletion) for every other test on this server.
        'adminKubeconfig.enabled': 'false',
        // The API server's addresses, of both families: the API server must accept them as ipBlocks.
        'networkPolicy.apiServer.cidrs': '{fd00:10:0:1::/64,172.18.0.0/16}',
      }),
      // Label values are strings: `--set` would make a suffix of digits only (about 1 in 17) a number, which the
      // chart's schema refuses.
      ...Object.entries(WEBHOOK_SCOPE).flatMap(([k, v]) =>
        ['objectSelector', 'namespaceSelector'].flatMap((selector) => [
          '--set-string',
          `webhook.${selector}.matchLabels.${k.replaceAll('.', '\\.')}=${v}`,
        ]),
      ),
    ),
  );
  installOutput = install.stdout + install.stderr;
  expect(install.code, installOutput).toBe(0);
  const got = helm(helmArgs('get', 'manifest', RELEASE, '--namespace', NAMESPACE));
  expect(got.code, got.stderr).toBe(0);
  manifest = parseObjects(got.stdout);
}, 20 * 60_000);

afterAll(async () => {
  const uninstall = helm(helmArgs('uninstall', RELEASE, '--namespace', NAMESPACE, '--wait=false'));
  expect(uninstall.code, uninstall.stderr).toBe(0);
  // Nothing cluster-scoped of this release may stay behind on the shared server.
  for (const kind of [
    'ClusterRole',
    'ClusterRoleBinding',
    'ValidatingWebhookConfiguration',
    'MutatingWebhookConfiguration',
  ]) {
    const left = (await admin.list(REFS[kind]!)).items.filter((o) => o.metadata?.name?.startsWith(RELEASE));
    expect(
      left.map((o) => o.metadata?.name),
      kind,
    ).toEqual([]);
  }
  await admin.delete(Refs.namespace, NAMESPACE);
  admin.close();
});

describe('helm install', () => {
  it('succeeds and the API server has every object of the release', async () => {
    expect(installOutput).toContain(`STATUS: deployed`);
    expect(installOutput).toContain(`gardener-ipv6 0.1.0 is installed in namespace ${NAMESPACE}.`);
    expect(manifest.length).toBeGreaterThan(30);
    for (const object of manifest) {
      const ref = REFS[object.kind];
      expect(ref, `a ref for ${object.kind}`).toBeDefined();
      // The admission server's RoleBinding to the aggregator's configuration is in kube-system.
      const namespace = object.metadata.namespace ?? NAMESPACE;
      const stored = await admin.get(ref!, object.metadata.name, ref!.namespaced ? namespace : undefined);
      expect(stored, `${object.kind} ${object.metadata.name}`).toBeDefined();
      expect(stored!.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
    }
  });

  it('gets IPv6 single-stack Services with IPv6 cluster IPs', async () => {
    const services = manifest.filter((o) => o.kind === 'Service');
    expect(services).toHaveLength(Object.keys(CHART_COMPONENTS).length + 1); // and the DNS server's
    for (const s of services) {
      const stored = (await admin.get<V1Service>(Refs.service, s.metadata.name, NAMESPACE))!;
      expect(stored.spec?.ipFamilyPolicy, s.metadata.name).toBe('SingleStack');
      expect(stored.spec?.ipFamilies, s.metadata.name).toEqual(['IPv6']);
      for (const ip of stored.spec?.clusterIPs ?? []) {
        expect(isIPv6(ip) && ip.startsWith(SERVICE_RANGE), `${s.metadata.name}: ${ip}`).toBe(true);
      }
    }
  });

  it('keeps the Deployments as rendered: args, probes, security contexts', async () => {
    const deployments = manifest.filter((o) => o.kind === 'Deployment') as (K8sObject & V1Deployment)[];
    expect(deployments).toHaveLength(Object.keys(CHART_COMPONENTS).length + 1);
    for (const d of deployments) {
      const stored = (await admin.get<V1Deployment>(REFS.Deployment!, d.metadata.name, NAMESPACE))!;
      const [want, got] = [d.spec!.template.spec!, stored.spec!.template.spec!];
      expect(
        got.containers.map((c) => c.args),
        d.metadata.name,
      ).toEqual(want.containers.map((c) => c.args));
      expect(got.securityContext?.runAsNonRoot, d.metadata.name).toBe(true);
      for (const c of got.containers) {
        expect(c.livenessProbe && c.readinessProbe, `${d.metadata.name}/${c.name}`).toBeTruthy();
        expect(c.securityContext?.allowPrivilegeEscalation, `${d.metadata.name}/${c.name}`).toBe(false);
      }
    }
  });

  it('keeps the NetworkPolicies and the webhook PodDisruptionBudget as rendered', async () => {
    const policies = manifest.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(
      ['admission', 'default-deny', 'dns-server', 'metrics'].map(nameOf),
    );
    for (const p of policies) {
      const stored = await admin.get<KubernetesObject & { spec: unknown }>(
        REFS.NetworkPolicy!,
        p.metadata.name,
        NAMESPACE,
      );
      expect(stored!.spec, p.metadata.name).toEqual(p.spec);
    }
    const pdb = await admin.get<KubernetesObject & { spec: { minAvailable: number } }>(
      REFS.PodDisruptionBudget!,
      nameOf('admission'),
      NAMESPACE,
    );
    expect(pdb!.spec.minAvailable).toBe(1);
  });

  it('registers the webhooks through the admission Service, scoped away from the other tests', async () => {
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const stored = (await admin.get<KubernetesObject & { webhooks: Record<string, unknown>[] }>(
        REFS[kind]!,
        RELEASE,
      ))!;
      // The validating configuration's second webhook is the seed restriction, for gardenlets' credentials only.
      expect(stored.webhooks).toHaveLength(kind === 'ValidatingWebhookConfiguration' ? 2 : 1);
      if (kind === 'ValidatingWebhookConfiguration') {
        expect(stored.webhooks[1]).toMatchObject({
          name: 'seed-restriction.gardener-ipv6.gardener.cloud',
          clientConfig: { service: { name: nameOf('admission'), path: '/seed-restriction' } },
          matchConditions: [{ name: 'gardenlets-only' }],
        });
      }
      expect(stored.webhooks[0]).toMatchObject({
        clientConfig: { service: { name: nameOf('admission'), namespace: NAMESPACE, port: 443 } },
        failurePolicy: 'Fail',
        objectSelector: { matchLabels: WEBHOOK_SCOPE },
        namespaceSelector: { matchLabels: WEBHOOK_SCOPE },
      });
    }
    const secret = (await admin.get<KubernetesObject & { data: Record<string, string> }>(
      Refs.secret,
      `${nameOf('admission')}-tls`,
      NAMESPACE,
    ))!;
    expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  });

  it('keeps the generated certificate and TSIG key on upgrade (lookup of the stored Secrets)', async () => {
    const read = async (name: string) =>
      (await admin.get<KubernetesObject & { data: Record<string, string> }>(Refs.secret, name, NAMESPACE))!.data;
    const [tls, tsig] = [await read(`${nameOf('admission')}-tls`), await read(nameOf('dns-tsig'))];
    const upgrade = helm(
      helmArgs('upgrade', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--reuse-values', '--wait=false'),
    );
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(await read(`${nameOf('admission')}-tls`)).toEqual(tls);
    expect(await read(nameOf('dns-tsig'))).toEqual(tsig);
  });
});

describe("the chart's RBAC", () => {
  const authorization = kubeConfig().makeApiClient(AuthorizationV1Api);

  async function allowed(component: ChartComponent, grant: string, namespace = 'shoot--rbac--check'): Promise<boolean> {
    const { group, resource, subresource, name, verb } = grantAttributes(grant);
    const clusterScoped = ['namespaces', 'seeds', 'clusterroles'].includes(resource);
    const review = await authorization.createSubjectAccessReview({
      body: {
        spec: {
          user: `system:serviceaccount:${NAMESPACE}:${nameOf(component)}`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`, 'system:authenticated'],
          resourceAttributes: {
            group,
            resource,
            verb,
            ...(subresource ? { subresource } : {}),
            ...(name ? { name } : {}),
            ...(clusterScoped ? {} : { namespace }),
          },
        },
      },
    });
    return review.status?.allowed === true;
  }

  it.each(Object.keys(CHART_COMPONENTS) as ChartComponent[])('lets %s make the calls its code makes', async (c) => {
    for (const grant of EXPECTED_CLUSTER_GRANTS[c]) expect(await allowed(c, grant), grant).toBe(true);
  });

  const FORBIDDEN: Record<ChartComponent, string[]> = {
    admission: [
      'core.gardener.cloud/seeds update',
      'core.gardener.cloud/shoots patch',
      'core.gardener.cloud/shoots update',
      '/secrets get',
      '/secrets:dnsrecord-local get',
      '/services get',
    ],
    gardenlet: [
      '/secrets get',
      '/secrets list',
      '/secrets:some-other-secret patch',
      '/secrets:some-other-secret create',
      '/services:some-other-service delete',
      '/services:some-other-service create',
      '/namespaces list',
      'core.gardener.cloud/shoots delete',
      'core.gardener.cloud/shoots update',
      'networking.k8s.io/networkpolicies:default-deny patch',
      'extensions.gardener.cloud/operatingsystemconfigs watch',
      '/events create',
    ],
    'network-calico': [
      '/secrets get',
      '/secrets:dnsrecord-local patch',
      '/secrets:dnsrecord-local create',
      'resources.gardener.cloud/managedresources:other delete',
      'resources.gardener.cloud/managedresources:other patch',
      'core.gardener.cloud/shoots patch',
      'extensions.gardener.cloud/networks delete',
    ],
    scheduler: [
      '/secrets get',
      'core.gardener.cloud/shoots delete',
      'core.gardener.cloud/shoots update',
      'core.gardener.cloud/seeds patch',
      '/events delete',
      '/namespaces create',
    ],
    'dns-local': [
      '/secrets get',
      `/secrets:${nameOf('dns-tsig')} get`,
      '/secrets:some-other-secret get',
      '/secrets list',
      '/secrets watch',
      '/secrets patch',
      'extensions.gardener.cloud/dnsrecords delete',
      'extensions.gardener.cloud/dnsrecords create',
      'extensions.gardener.cloud/networks get',
    ],
  };

  it.each(Object.keys(CHART_COMPONENTS) as ChartComponent[])('refuses %s anything else', async (c) => {
    for (const grant of FORBIDDEN[c]) expect(await allowed(c, grant), grant).toBe(false);
  });

  it('lets the controllers hold only their own Lease, in the release namespace', async () => {
    for (const c of CONTROLLERS) {
      expect(await allowed(c, `coordination.k8s.io/leases:${nameOf(c)} update`, NAMESPACE), c).toBe(true);
      expect(await allowed(c, 'coordination.k8s.io/leases create', NAMESPACE), c).toBe(true);
      expect(await allowed(c, `coordination.k8s.io/leases:${nameOf('gardenlet')}-x update`, NAMESPACE), c).toBe(false);
      expect(await allowed(c, `coordination.k8s.io/leases:${nameOf(c)} update`, 'kube-system'), c).toBe(false);
    }
    expect(await allowed('admission', 'coordination.k8s.io/leases create', NAMESPACE)).toBe(false);
  });
});

describe('the controllers with the chart’s ServiceAccounts', () => {
  const PROJECT = `helm${SUFFIX}`;
  const PROJECT_NAMESPACE = `garden-${PROJECT}`;
  const SHOOT = 'ipv6';
  const SEED_NAMESPACE = `shoot--${PROJECT}--${SHOOT}`;
  const SEED = `helm-install-${SUFFIX}`;
  let bind: Bind9;
  const managers: Manager[] = [];
  /** Warnings and errors of the controllers, for failure messages (a 403 shows up here first). */
  const logLines: string[] = [];
  const recentLogs = () =>
    [...new Set(logLines.map((l) => (JSON.parse(l) as { err?: { message?: string }; msg?: string }).err?.message ?? l))]
      .slice(-5)
      .join('\n');

  async function serviceAccountKubeConfig(component: ChartComponent): Promise<KubeConfig> {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const token = await core.createNamespacedServiceAccountToken({
      name: nameOf(component),
      namespace: NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const cluster = kubeConfig().getCurrentCluster()!;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: component, token: token.status!.token }],
      contexts: [{ name: component, cluster: cluster.name, user: component }],
      currentContext: component,
    });
    return kc;
  }

  /** A component as the chart runs it: its ServiceAccount, leader election on its Lease in the release namespace. */
  async function startComponent(component: ChartComponent, add: (m: Manager) => void): Promise<void> {
    const logger = newLogger({
      level: 'warn',
      name: component,
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          logLines.push(chunk.toString().trim());
          done();
        },
      }),
    });
    const manager = new Manager({
      kubeConfig: await serviceAccountKubeConfig(component),
      logger,
      gracefulShutdownMs: 5_000,
      leaderElection: { namespace: NAMESPACE, name: nameOf(component) },
    });
    add(manager);
    managers.push(manager);
    await manager.start();
  }

  beforeAll(async () => {
    bind = await startBind9();
    await startComponent('gardenlet', (m) => {
      addGardenletControllers(m, {
        dns: localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret }),
        seedName: SEED,
      });
      addProviderLocalControllers(m, {});
    });
    await startComponent('network-calico', (m) => addNetworkExtension(m, { namespace: SEED_NAMESPACE }));
    await startComponent('dns-local', (m) => addDNSExtension(m, { namespace: SEED_NAMESPACE }));
    // Its own namespace only: the other tests' unscheduled Shoots on this server are not its business.
    await startComponent('scheduler', (m) => addSchedulerController(m, { namespace: PROJECT_NAMESPACE }));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    await bind?.stop();
    await admin.delete(Refs.seed, SEED);
    await admin.delete(Refs.namespace, PROJECT_NAMESPACE);
  });

  it('hold their Leases', async () => {
    for (const c of CONTROLLERS) {
      const lease = await waitFor(
        async () => {
          const l = await admin.get<KubernetesObject & { spec?: { holderIdentity?: string } }>(
            Refs.lease,
            nameOf(c),
            NAMESPACE,
          );
          return l?.spec?.holderIdentity ? l : undefined;
        },
        { message: `the Lease of ${c}` },
      );
      expect(lease.spec?.holderIdentity, c).toBeTruthy();
    }
  });

  it("keep the gardenlet to its own namespaces and load balancers (the chart's ValidatingAdmissionPolicy)", async () => {
    const gardenlet = new ResourceClient(await serviceAccountKubeConfig('gardenlet'));
    const namespace = (name: string, labels: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels },
    });
    const refusal = (e: unknown) => (asApiError(e)?.code === 403 ? (e as Error).message : undefined);
    // RBAC lets the gardenlet create any namespace; the policy (loaded by the API server a moment after the install)
    // refuses one that is neither garden nor a seed namespace.
    const foreign = await waitFor(
      () =>
        gardenlet
          .create(Refs.namespace, namespace(`not-a-seed${SUFFIX}`), { dryRun: true })
          .then(() => undefined, refusal),
      { timeoutMs: 30_000, message: 'the policy to refuse a namespace outside the seed' },
    );
    expect(foreign).toContain('the gardenlet writes only the namespace garden and seed namespaces');
    await gardenlet.create(Refs.namespace, namespace(`shoot--vap${SUFFIX}--x`), { dryRun: true });

    // A seed-namespace name is not enough to delete one: it must be labelled as the gardenlet's.
    const unlabelled = `shoot--vap${SUFFIX}--unlabelled`;
    await admin.create(Refs.namespace, namespace(unlabelled));
    try {
      const deletion = await gardenlet.delete(Refs.namespace, unlabelled).then(
        () => 'deleted',
        (e: unknown) => refusal(e) ?? `${asApiError(e)?.code}: ${(e as Error).message}`,
      );
      expect(deletion).toContain('the gardenlet deletes only its seed namespaces');
      await admin.mergePatch(Refs.namespace, unlabelled, undefined, {
        metadata: { labels: { 'gardener.cloud/role': 'shoot' } },
      });
      await gardenlet.delete(Refs.namespace, unlabelled);
    } finally {
      await admin.delete(Refs.namespace, unlabelled);
    }

    // Service status only in seed namespaces: not the chart's own webhook Service.
    const status = await gardenlet
      .mergePatch(
        Refs.service,
        nameOf('admission'),
        NAMESPACE,
        // A valid status (a ClusterIP Service has no ingress): what decides is the policy, not validation.
        { status: { loadBalancer: {} } },
        { subresource: 'status' },
      )
      .then(
        () => 'patched',
        (e: unknown) => refusal(e) ?? `${asApiError(e)?.code}: ${(e as Error).message}`,
      );
    expect(status).toContain('the gardenlet writes the status of Services in seed namespaces');
    gardenlet.close();
  });

  it("keep the gardenlet's Secrets and pods to seed namespaces and to what its workloads need of the host", async () => {
    const gardenlet = new ResourceClient(await serviceAccountKubeConfig('gardenlet'));
    const seedNamespace = `shoot--vap${SUFFIX}--w`;
    await admin.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: seedNamespace } });
    // No controller manager here makes the default ServiceAccount that pods need.
    await admin.create(SERVICE_ACCOUNT, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: seedNamespace },
    });
    // What RBAC grants the gardenlet where shoots run as workloads (controlPlaneWorkloads, off in this install): the
    // writes below pass RBAC, and the policy decides.
    const grant = `${nameOf('gardenlet')}-vap-test`;
    await admin.create(rbac('clusterroles', 'ClusterRole', false), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: grant },
      rules: [
        { apiGroups: [''], resources: ['secrets', 'pods'], verbs: ['create'] },
        { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['create'] },
      ],
    } as KubernetesObject);
    await admin.create(rbac('clusterrolebindings', 'ClusterRoleBinding', false), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: grant },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: grant },
      subjects: [{ kind: 'ServiceAccount', name: nameOf('gardenlet'), namespace: NAMESPACE }],
    } as KubernetesObject);
    /** The policy's refusal of a dry-run create by the gardenlet, or 'admitted'. */
    const verdict = (ref: ResourceRef, object: Record<string, unknown>) =>
      gardenlet.create(ref, object as KubernetesObject, { dryRun: true }).then(
        () => 'admitted',
        (e: unknown) =>
          asApiError(e)?.code === 403 ? (e as Error).message : `${asApiError(e)?.code}: ${(e as Error).message}`,
      );
    const secret = (namespace: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'stolen', namespace },
      stringData: { k: 'v' },
    });
    const podSpec = (extra: Record<string, unknown> = {}, securityContext?: Record<string, unknown>) => ({
      automountServiceAccountToken: false,
      containers: [{ name: 'c', image: 'example.invalid/c', ...(securityContext ? { securityContext } : {}) }],
      ...extra,
    });
    const pod = (spec: Record<string, unknown>) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: seedNamespace },
      spec,
    });
    const statefulSet = (spec: Record<string, unknown>) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 's', namespace: seedNamespace },
      spec: {
        selector: { matchLabels: { app: 's' } },
        serviceName: 's',
        template: { metadata: { labels: { app: 's' } }, spec },
      },
    });
    try {
      // The policy allows only the seed namespace.
      const outside = await waitFor(
        () => verdict(Refs.secret, secret(NAMESPACE)).then((v) => (v === 'admitted' ? undefined : v)),
        { timeoutMs: 30_000, message: 'the policy to refuse a Secret outside the seed namespaces' },
      );
      expect(outside).toContain('the gardenlet writes objects only in seed namespaces');
      expect(await verdict(Refs.secret, secret('kube-system'))).toContain('only in seed namespaces');
      expect(await verdict(Refs.secret, secret(seedNamespace))).toBe('admitted');

      const privileged = { privileged: true };
      expect(await verdict(Refs.pod, pod(podSpec({}, privileged)))).toContain(
        'privileged or add capabilities but NET_ADMIN only in a user namespace of their own',
      );
      expect(await verdict(Refs.pod, pod(podSpec({}, { capabilities: { add: ['SYS_ADMIN'] } })))).toContain(
        'only in a user namespace of their own',
      );
      // NET_ADMIN acts on the pod's own network namespace (kube-apiserver's vpn-seed sidecar has it).
      expect(await verdict(Refs.pod, pod(podSpec({}, { capabilities: { add: ['NET_ADMIN'] } })))).toBe('admitted');
      expect(await verdict(Refs.statefulSet, statefulSet(podSpec({}, privileged)))).toContain(
        'only in a user namespace of their own',
      );
      // provider-local's machine pods: privileged in a user namespace of their own.
      expect(await verdict(Refs.statefulSet, statefulSet(podSpec({ hostUsers: false }, privileged)))).toBe('admitted');

      for (const shared of [{ hostNetwork: true }, { hostPID: true }, { hostIPC: true }]) {
        expect(await verdict(Refs.statefulSet, statefulSet(podSpec(shared))), JSON.stringify(shared)).toContain(
          'share no namespace with the host',
        );
      }
      const hostPath = (path: string) => podSpec({ volumes: [{ name: 'h', hostPath: { path } }] });
      for (const path of ['/', '/var/lib/gardener-ipv6', `${ETCD_HOST_DIR}-other`]) {
        expect(await verdict(Refs.pod, pod(hostPath(path))), path).toContain('mount no host folder but etcd');
      }
      // etcd's data folder of a seed namespace, as the etcd StatefulSet and the data cleanup pods mount it.
      expect(await verdict(Refs.pod, pod(hostPath(`${ETCD_HOST_DIR}/${seedNamespace}`)))).toBe('admitted');
      expect(await verdict(Refs.statefulSet, statefulSet(hostPath(ETCD_HOST_DIR)))).toBe('admitted');
    } finally {
      gardenlet.close();
      await admin.delete(Refs.namespace, seedNamespace);
      await admin.delete(rbac('clusterrolebindings', 'ClusterRoleBinding', false), grant);
      await admin.delete(rbac('clusterroles', 'ClusterRole', false), grant);
    }
  });

  it('reconcile an IPv6 shoot end to end, publish its AAAA record, and delete it again', async () => {
    await admin.create(Refs.seed, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Seed',
      metadata: { name: SEED },
      spec: {
        provider: { type: 'local', region: 'local' },
        networks: seedIPv6Networks,
      },
    } as KubernetesObject);
    await admin.create(Refs.namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: PROJECT_NAMESPACE },
    } as KubernetesObject);
    await admin.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: SHOOT, namespace: PROJECT_NAMESPACE },
      spec: {
        seedName: SEED,
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
        networking: {
          type: 'calico',
          ipFamilies: ['IPv6'],
          pods: 'fd00:10:3::/56',
          services: 'fd00:10:4::/112',
          nodes: 'fd00:10:1:100::/56',
        },
      },
    } as KubernetesObject);

    let last = '';
    await waitFor(
      async () => {
        const shoot = await admin.get<Shoot & KubernetesObject>(Refs.shoot, SHOOT, PROJECT_NAMESPACE);
        const op = shoot?.status?.lastOperation;
        last = `${op?.state}: ${op?.description}`;
        return op?.state === 'Succeeded';
      },
      { timeoutMs: 45_000, message: 'the shoot to succeed' },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last operation ${last}; controller errors:\n${recentLogs()}`);
    });

    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([bind.server]);
    expect(await resolver.resolve6(`api.${SHOOT}.${PROJECT}.external.local.gardener.cloud`)).toEqual(['::1']);
    const managed = await admin.get(
      {
        group: 'resources.gardener.cloud',
        version: 'v1alpha1',
        plural: 'managedresources',
        kind: 'ManagedResource',
        namespaced: true,
      },
      'extension-networking-calico',
      SEED_NAMESPACE,
    );
    expect(managed).toBeDefined();

    await admin.delete(Refs.shoot, SHOOT, PROJECT_NAMESPACE);
    await waitFor(async () => (await admin.get(Refs.shoot, SHOOT, PROJECT_NAMESPACE)) === undefined, {
      timeoutMs: 45_000,
      message: 'the shoot to be deleted',
    }).catch((e: Error) => {
      throw new Error(`${e.message}; controller errors:\n${recentLogs()}`);
    });
    expect((await admin.list(Refs.dnsRecord, { namespace: SEED_NAMESPACE })).items).toEqual([]);
    expect(
      await resolver
        .resolve6(`api.${SHOOT}.${PROJECT}.external.local.gardener.cloud`)
        .catch((e: NodeJS.ErrnoException) => e.code),
    ).toBe('ENOTFOUND');
    expect(logLines.filter((l) => /forbidden/i.test(l))).toEqual([]);
  });
});
