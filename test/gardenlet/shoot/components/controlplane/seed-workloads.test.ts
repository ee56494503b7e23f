import { X509Certificate } from 'node:crypto';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ControlPlaneSpec } from '../../../../../src/gardenlet/shoot/components/controlplane/args.js';
import {
  ETCD_HOST_DIR,
  INPUTS_ANNOTATION,
  type ControlPlaneWorkloadValues,
} from '../../../../../src/gardenlet/shoot/components/controlplane/names.js';
import {
  certificateInputsHash,
  controlPlaneSecrets,
} from '../../../../../src/gardenlet/shoot/components/controlplane/secrets.js';
import {
  desiredControlPlaneWorkloads,
  etcdCleanupPod,
} from '../../../../../src/gardenlet/shoot/components/controlplane/workloads.js';
import { ETCD_VERSION, IMAGES, KUBERNETES_VERSION } from '../../../../../src/imagevector/images.js';
import { createCA, createSigningKeyPair } from '../../../../../src/pki/certificates.js';
import { pinnedVersions } from '../../../../../src/localenv/binaries.js';

const spec: ControlPlaneSpec = {
  name: 'shoot--p--s',
  families: ['IPv6'],
  addresses: { IPv6: 'fd00:ff::2' },
  serviceCIDRs: ['fd00:10:4::/112'],
  podCIDRs: ['fd00:10:3::/56'],
  nodeCIDRMaskSizes: { IPv6: 64 },
  externalDomain: 'api.s.p.external.local.gardener.cloud',
  internalDomain: 'api.s.p.internal.local.gardener.cloud',
};

const values = (overrides: Partial<ControlPlaneWorkloadValues> = {}): ControlPlaneWorkloadValues => ({
  namespace: spec.name,
  spec,
  seedFamilies: ['IPv6'],
  etcdNode: 'seed-1',
  secretsHash: 'h1',
  labels: { 'shoot.gardener.cloud/name': 's' },
  ...overrides,
});

interface Container {
  name: string;
  image: string;
  args: string[];
  readinessProbe?: { httpGet: { path: string; port: number; scheme: string } };
  livenessProbe?: { httpGet: { path: string; port: number; scheme: string } };
  resources?: { requests?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Workload extends KubernetesObject {
  spec: {
    selector?: { matchLabels?: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: { containers: Container[]; volumes: Record<string, unknown>[]; affinity?: unknown };
    };
  };
}

const byName = (objects: KubernetesObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata?.name === name) as Workload;
interface Policy {
  spec: { podSelector: { matchLabels: Record<string, string> }; ingress?: unknown[]; egress?: unknown[] };
}
const policyNamed = (objects: KubernetesObject[], name: string) =>
  objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata?.name === name) as unknown as Policy;
const flag = (args: string[], name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

describe('desiredControlPlaneWorkloads', () => {
  const objects = desiredControlPlaneWorkloads(values());

  it('has etcd, the three Deployments, the etcd client Service and a PodDisruptionBudget each', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort()).toEqual([
      'Deployment/kube-apiserver',
      'Deployment/kube-controller-manager',
      'Deployment/kube-scheduler',
      'NetworkPolicy/egress-to-etcd-main-client-tcp-2379',
      'NetworkPolicy/egress-to-kube-apiserver-tcp-443',
      'NetworkPolicy/ingress-to-etcd-main-client-tcp-2379',
      'NetworkPolicy/ingress-to-kube-apiserver-tcp-443-from-world',
      'PodDisruptionBudget/etcd-main',
      'PodDisruptionBudget/kube-apiserver',
      'PodDisruptionBudget/kube-controller-manager',
      'PodDisruptionBudget/kube-scheduler',
      'Service/etcd-main-client',
      'StatefulSet/etcd-main',
    ]);
    for (const o of objects) expect(o.metadata?.namespace).toBe('shoot--p--s');
  });

  it("labels each component's pods for what it reaches under deny-all, and lets only kube-apiserver reach etcd", () => {
    const podLabels = (kind: string, name: string) => byName(objects, kind, name).spec.template.metadata.labels;
    const allowed = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, 'allowed']));
    expect(podLabels('Deployment', 'kube-apiserver')).toMatchObject(
      allowed(
        'networking.gardener.cloud/to-dns',
        'networking.gardener.cloud/to-public-networks',
        'networking.gardener.cloud/to-private-networks',
        'networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379',
        'networking.resources.gardener.cloud/to-kube-apiserver-tcp-443',
      ),
    );
    for (const controller of ['kube-controller-manager', 'kube-scheduler']) {
      const labels = podLabels('Deployment', controller);
      expect(labels).toMatchObject(
        allowed('networking.gardener.cloud/to-dns', 'networking.resources.gardener.cloud/to-kube-apiserver-tcp-443'),
      );
      expect(labels).not.toHaveProperty(['networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379']);
    }
    const etcdIngress = policyNamed(objects, 'ingress-to-etcd-main-client-tcp-2379').spec;
    expect(podLabels('StatefulSet', 'etcd-main')).toMatchObject(etcdIngress.podSelector.matchLabels);
    expect(etcdIngress.ingress).toEqual([
      {
        from: [
          {
            podSelector: {
              matchLabels: { 'networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379': 'allowed' },
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: 2379 }],
      },
    ]);
    // kube-apiserver's port is open to everyone (users, machines, the gardenlet), its other ports to no one.
    expect(policyNamed(objects, 'ingress-to-kube-apiserver-tcp-443-from-world').spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: 443 }] },
    ]);
  });

  it('keeps etcd on its Node with its data there, serving TLS to clients of its own CA through its Service', () => {
    const etcd = byName(objects, 'StatefulSet', 'etcd-main');
    expect(JSON.stringify(etcd.spec.template.spec.affinity)).toContain('"values":["seed-1"]');
    expect(etcd.spec.template.spec.volumes).toContainEqual({
      name: 'data',
      hostPath: { path: `${ETCD_HOST_DIR}/shoot--p--s`, type: 'DirectoryOrCreate' },
    });
    const [container] = etcd.spec.template.spec.containers;
    expect(container!.image).toBe(IMAGES.etcd);
    expect(flag(container!.args, 'listen-client-urls')).toBe('https://[::]:2379');
    expect(flag(container!.args, 'advertise-client-urls')).toBe('https://etcd-main-client.shoot--p--s.svc:2379');
    expect(flag(container!.args, 'client-cert-auth')).toBe('true');
    expect(flag(container!.args, 'trusted-ca-file')).toBe('/srv/kubernetes/pki/etcd-ca.crt');
    expect(flag(container!.args, 'cert-file')).toBe('/srv/kubernetes/pki/etcd-server.crt');
    expect(flag(container!.args, 'data-dir')).toBe('/var/etcd/data');
    // The kubelet probes the plain-HTTP health port: the client port wants a client certificate.
    expect(flag(container!.args, 'listen-metrics-urls')).toBe('http://[::]:2381');
    expect(container!.readinessProbe!.httpGet).toEqual({ path: '/health', port: 2381, scheme: 'HTTP' });
    expect(etcd.spec.template.spec.volumes).toContainEqual({
      name: 'pki',
      secret: { secretName: 'etcd-main', defaultMode: 0o400 },
    });
  });

  it('runs kube-apiserver on every pod address, at its load-balancer address for clients, with etcd by Service', () => {
    const apiServer = byName(objects, 'Deployment', 'kube-apiserver');
    const [container] = apiServer.spec.template.spec.containers;
    expect(container!.image).toBe(IMAGES.kubeAPIServer);
    expect(flag(container!.args, 'etcd-servers')).toBe('https://etcd-main-client.shoot--p--s.svc:2379');
    expect(flag(container!.args, 'etcd-certfile')).toBe('/srv/kubernetes/pki/etcd-client.crt');
    expect(flag(container!.args, 'etcd-cafile')).toBe('/srv/kubernetes/pki/etcd-ca.crt');
    expect(flag(container!.args, 'bind-address')).toBe('::');
    expect(flag(container!.args, 'advertise-address')).toBe('fd00:ff::2');
    expect(flag(container!.args, 'tls-cert-file')).toBe('/srv/kubernetes/pki/apiserver.crt');
    expect(container!.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 443, scheme: 'HTTPS' });
    // The LoadBalancer Service selects it.
    expect(apiServer.spec.template.metadata.labels).toMatchObject({ app: 'kubernetes', role: 'apiserver' });
    expect(apiServer.spec.template.metadata.annotations).toEqual({ [INPUTS_ANNOTATION]: 'h1' });
  });

  it("routes kube-apiserver's pod into the shoot's networks with a sidecar that may only add its own routes", () => {
    const apiServer = byName(objects, 'Deployment', 'kube-apiserver');
    const sidecar = apiServer.spec.template.spec.containers[1]!;
    expect(sidecar.name).toBe('vpn-seed');
    expect(sidecar.image).toBe(IMAGES.machine);
    expect(sidecar.args?.[0]).toBe('overlay-peer');
    expect(flag(sidecar.args, 'service-cidrs')).toBe(values().spec.serviceCIDRs.join(','));
    expect(flag(sidecar.args, 'underlay-family')).toBe(values().spec.families[0]);
    expect((sidecar as { securityContext?: unknown }).securityContext).toEqual({
      capabilities: { add: ['NET_ADMIN'] },
    });
  });

  it('gives kube-controller-manager the CA key and service-account key only, kube-scheduler its kubeconfig only', () => {
    const kcm = byName(objects, 'Deployment', 'kube-controller-manager');
    const pki = kcm.spec.template.spec.volumes.find((v) => v.name === 'pki') as {
      secret: { items: { key: string }[] };
    };
    expect(pki.secret.items.map((i) => i.key)).toEqual(['ca.crt', 'ca.key', 'sa.key']);
    expect(flag(kcm.spec.template.spec.containers[0]!.args, 'kubeconfig')).toBe(
      '/srv/kubernetes/kubeconfig/kubeconfig',
    );
    expect(flag(kcm.spec.template.spec.containers[0]!.args, 'cluster-cidr')).toBe('fd00:10:3::/56');
    const scheduler = byName(objects, 'Deployment', 'kube-scheduler');
    expect(scheduler.spec.template.spec.volumes.map((v) => v.name)).toEqual(['kubeconfig']);
    expect(flag(scheduler.spec.template.spec.containers[0]!.args, 'bind-address')).toBe('::');
  });

  it('listens on 0.0.0.0 in an IPv4 seed', () => {
    const v4 = desiredControlPlaneWorkloads(values({ seedFamilies: ['IPv4'] }));
    const etcd = byName(v4, 'StatefulSet', 'etcd-main');
    expect(flag(etcd.spec.template.spec.containers[0]!.args, 'listen-client-urls')).toBe('https://0.0.0.0:2379');
    const apiServer = byName(v4, 'Deployment', 'kube-apiserver');
    expect(flag(apiServer.spec.template.spec.containers[0]!.args, 'bind-address')).toBe('0.0.0.0');
  });

  it('asks for resources for every container', () => {
    for (const o of objects.filter((x) => x.kind === 'Deployment' || x.kind === 'StatefulSet')) {
      for (const c of (o as Workload).spec.template.spec.containers) expect(c.resources?.requests?.cpu).toBeDefined();
    }
  });
});

describe('etcdCleanupPod', () => {
  it("removes the namespace's etcd folder on its Node with the image's busybox", () => {
    const pod = etcdCleanupPod('shoot--p--s', 'seed-1', 'etcd-data-cleanup-seed-1') as KubernetesObject & {
      spec: { nodeName: string; containers: { image: string; command: string[] }[]; volumes: unknown[] };
    };
    expect(pod.spec.nodeName).toBe('seed-1');
    expect(pod.spec.containers[0]!.image).toBe(IMAGES.busybox);
    expect(pod.spec.containers[0]!.command).toEqual(['/bin/busybox', 'rm', '-rf', '/data/shoot--p--s']);
    expect(pod.spec.volumes).toEqual([{ name: 'data', hostPath: { path: ETCD_HOST_DIR, type: 'DirectoryOrCreate' } }]);
  });
});

describe('controlPlaneSecrets', () => {
  it('issues a serving certificate for the addresses and names clients use, in the seed too', async () => {
    const ca = await createCA('shoot-ca', { notAfter: new Date(Date.now() + 3600_000) });
    const etcdCA = await createCA('etcd-ca', { notAfter: new Date(Date.now() + 3600_000) });
    const sa = await createSigningKeyPair();
    const all = await controlPlaneSecrets(spec, { ca, serviceAccount: sa, etcdCA }, {});
    expect(all.map((s) => s.metadata?.name)).toEqual([
      'etcd-main',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'vpn-seed',
    ]);
    const pem = (secret: V1Secret, key: string) => Buffer.from(secret.data![key]!, 'base64').toString();
    // etcd serves with a certificate of its own CA for its Service's names, and trusts clients of that CA only:
    // kube-apiserver holds the one client certificate; no key of either CA is mounted anywhere but the CA Secrets.
    const etcd = all[0]!;
    expect(Object.keys(etcd.data!).sort()).toEqual(['etcd-ca.crt', 'etcd-server.crt', 'etcd-server.key']);
    const etcdServer = new X509Certificate(pem(etcd, 'etcd-server.crt'));
    expect(etcdServer.verify(new X509Certificate(etcdCA.certPEM).publicKey)).toBe(true);
    expect(etcdServer.subjectAltName).toContain('DNS:etcd-main-client.shoot--p--s.svc');
    expect(pem(etcd, 'etcd-ca.crt')).toBe(etcdCA.certPEM);
    const etcdClient = new X509Certificate(pem(all[1]!, 'etcd-client.crt'));
    expect(etcdClient.verify(new X509Certificate(etcdCA.certPEM).publicKey)).toBe(true);
    expect(etcdClient.verify(new X509Certificate(ca.certPEM).publicKey)).toBe(false);
    const secrets = all.slice(1);
    // The sidecar's user may list the shoot's Nodes and nothing of the seed's: no CA key, a user of its own.
    expect(Object.keys(secrets[3]!.data!)).toEqual(['kubeconfig']);
    expect(Buffer.from(secrets[3]!.data!.kubeconfig!, 'base64').toString()).toContain('gardener-ipv6:vpn-seed');
    const server = new X509Certificate(Buffer.from(secrets[0]!.data!['apiserver.crt']!, 'base64'));
    expect(server.subjectAltName).toContain('IP Address:FD00:FF:0:0:0:0:0:2');
    expect(server.subjectAltName).toContain('DNS:kube-apiserver.shoot--p--s.svc');
    expect(server.subjectAltName).toContain('DNS:api.s.p.external.local.gardener.cloud');
    const kubeconfig = Buffer.from(secrets[2]!.data!.kubeconfig!, 'base64').toString();
    expect(kubeconfig).toContain('server: https://kube-apiserver.shoot--p--s.svc:443');
    // The scheduler's Secret holds no key of the CA.
    expect(Object.keys(secrets[2]!.data!)).toEqual(['kubeconfig']);
    const hash = certificateInputsHash(spec, { ca, serviceAccount: sa, etcdCA });
    for (const s of all) expect(s.metadata?.annotations?.[INPUTS_ANNOTATION]).toBe(hash);
    // Another load-balancer address is another input.
    expect(
      certificateInputsHash({ ...spec, addresses: { IPv6: 'fd00:ff::3' } }, { ca, serviceAccount: sa, etcdCA }),
    ).not.toBe(hash);
  });
});

describe('the image vector', () => {
  it("has hack/versions.env's versions", () => {
    const pinned = pinnedVersions();
    expect(KUBERNETES_VERSION).toBe(pinned.KUBERNETES_VERSION);
    expect(ETCD_VERSION).toBe(pinned.ETCD_VERSION);
  });
});
