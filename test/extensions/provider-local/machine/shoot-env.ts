/**
 * A shoot-like environment for the machine tests, in the test's network namespace (the gardenlet's, in
 * production): a "load balancer" bridge with the API server's address, a node bridge with the gateways, etcd,
 * kube-apiserver (Node and RBAC authorization, the `kubernetes` endpoints on the LB address), kube-controller-manager
 * with node IPAM, kube-scheduler, and the certificates machines need: what a shoot's control plane on the seed
 * provides.
 */
import { networkPolicyEnforcerRBAC } from '../../../../src/gardenlet/shoot/components/machine-bootstrap.js';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { generateCertificates, issueClientCertificate, type Certificates } from '../../../../src/localenv/certs.js';
import { firstServiceIP } from '../../../../src/net/cidr.js';
import { startEtcd } from '../../../../src/localenv/etcd.js';
import { startKubeAPIServer, waitForReady } from '../../../../src/localenv/kube-apiserver.js';
import { writeAdminKubeconfig } from '../../../../src/localenv/kubeconfig.js';
import { freePorts } from '../../../../src/system/net.js';
import { startProcess, which, type ManagedProcess } from '../../../../src/system/process.js';
import { ResourceClient } from '../../../../src/runtime/client.js';
import type { IPFamily } from '../../../../src/net/cidr.js';
import { Machine } from '../../../../src/extensions/provider-local/machine/machine.js';
import {
  MACHINE_BINARIES,
  type MachineOptions,
} from '../../../../src/extensions/provider-local/machine/machine-options.js';
import { buildMachineImages } from '../../../../src/extensions/provider-local/machine/images.js';
import { type BuiltImage } from '../../../../src/extensions/provider-local/machine/image-archive.js';
import { projectRoot } from '../../../../src/system/project.js';

export const BIN_DIR = process.env.GARDENER_IPV6_BIN_DIR ?? join(projectRoot(), '.cache', 'bin');
export const NEEDED_BINARIES = [
  ...['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'coredns'],
  ...MACHINE_BINARIES,
];

/** Why the machine tests can't run here, or undefined. */
export function machinesUnsupportedReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'machines need root';
  const missing = NEEDED_BINARIES.filter((b) => !existsSync(join(BIN_DIR, b)));
  if (missing.length > 0) return `missing binaries in ${BIN_DIR}: ${missing.join(', ')}`;
  if (!existsSync('/bin/busybox')) return 'no /bin/busybox (apt-get install busybox-static)';
  if (which('nft') === undefined) return 'no nft (apt-get install nftables)';
  return undefined;
}

export interface FamilyNetworks {
  family: IPFamily;
  nodes: string;
  gateway: string;
  /** Host part of machine i's address: `${prefix}${10 + i}`. */
  machineAddress: (i: number) => string;
  pods: string;
  nodeMask: number;
  services: string;
  clusterDNS: string;
  lbAddress: string;
}

export const NETWORKS: Record<IPFamily, FamilyNetworks> = {
  IPv6: {
    family: 'IPv6',
    nodes: 'fd00:10:1::/64',
    gateway: 'fd00:10:1::1',
    machineAddress: (i) => `fd00:10:1::${(10 + i).toString(16)}/64`,
    pods: 'fd00:10:3::/56',
    nodeMask: 64,
    services: 'fd00:10:2::/112',
    clusterDNS: 'fd00:10:2::a',
    // Random within the range: other tests in the same namespace may run a control plane of their own.
    lbAddress: `fd00:ff::a:${(1 + (randomBytes(2).readUInt16BE() % 0xfffe)).toString(16)}`,
  },
  IPv4: {
    family: 'IPv4',
    nodes: '10.10.0.0/16',
    gateway: '10.10.0.1',
    machineAddress: (i) => `10.10.0.${10 + i}/16`,
    pods: '10.3.0.0/16',
    nodeMask: 24,
    services: '10.2.0.0/16',
    clusterDNS: '10.2.0.10',
    lbAddress: `172.18.255.${10 + (randomBytes(1)[0]! % 200)}`,
  },
};

export interface ShootEnv {
  families: IPFamily[];
  dir: string;
  certs: Certificates;
  apiServerURL: string;
  caPEM: string;
  client: ResourceClient;
  kubeconfigPath: string;
  kubectl(args: string[], timeoutMs?: number): string;
  nodeBridge: string;
  machineOptions(i: number, name: string, extra?: Partial<MachineOptions>): Promise<MachineOptions>;
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

const ipCmd = (args: string[]) =>
  execFileSync(which('ip') ?? 'ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export async function startShootEnv(families: IPFamily[], log: (line: string) => void = () => {}): Promise<ShootEnv> {
  const nets = families.map((f) => NETWORKS[f]);
  const primary = nets[0]!;
  const dir = await mkdtemp(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'machines-'));
  const tag = randomBytes(3).toString('hex');
  const lbBridge = `gl${tag}`;
  const nodeBridge = `gn${tag}`;
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    for (const p of [...processes].reverse()) await p.stop(5_000);
    for (const link of [lbBridge, nodeBridge]) {
      try {
        ipCmd(['link', 'del', link]);
      } catch {
        // Not created.
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    ipCmd(['link', 'add', lbBridge, 'type', 'bridge']);
    ipCmd(['link', 'set', lbBridge, 'up']);
    ipCmd(['link', 'add', nodeBridge, 'type', 'bridge']);
    ipCmd(['link', 'set', nodeBridge, 'up']);
    const prefixLen = (cidr: string) => cidr.split('/')[1]!;
    for (const n of nets) {
      ipCmd([
        'addr',
        'add',
        `${n.gateway}/${prefixLen(n.nodes)}`,
        'dev',
        nodeBridge,
        ...(n.family === 'IPv6' ? ['nodad'] : []),
      ]);
    }
    // The API server binds one address: the primary family's LB address.
    ipCmd([
      'addr',
      'add',
      `${primary.lbAddress}/${primary.family === 'IPv6' ? 64 : 24}`,
      'dev',
      lbBridge,
      ...(primary.family === 'IPv6' ? ['nodad'] : []),
    ]);

    const certs = await generateCertificates(dir, {
      ipAddresses: [primary.lbAddress, ...nets.map((n) => firstServiceIP(n.services))],
      dnsNames: ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    });
    const [clientPort, peerPort] = await freePorts(2);
    const etcd = startEtcd({
      bin: join(BIN_DIR, 'etcd'),
      dir,
      clientPort: clientPort!,
      peerPort: peerPort!,
      tls: certs,
    });
    processes.push(etcd.process);
    const services = nets.map((n) => n.services).join(',');
    const apiserver = startKubeAPIServer({
      bin: join(BIN_DIR, 'kube-apiserver'),
      dir,
      certs,
      etcdURL: etcd.clientURL,
      bindAddress: primary.lbAddress,
      advertiseAddress: primary.lbAddress,
      port: 443,
      extraArgs: [
        // Later flags win: the shoot's own ranges and authorization, the `kubernetes` endpoints for in-cluster
        // clients (CoreDNS), the kubelet client certificate for exec and logs.
        `--service-cluster-ip-range=${services}`,
        // --authorization-mode is a list: this adds Node to the RBAC the helper sets.
        '--authorization-mode=Node',
        '--endpoint-reconciler-type=lease',
        `--kubelet-client-certificate=${certs.adminCert}`,
        `--kubelet-client-key=${certs.adminKey}`,
        '--kubelet-preferred-address-types=InternalIP',
      ],
    });
    processes.push(apiserver.process);
    await waitForReady(apiserver, certs, Date.now() + 90_000);
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeAdminKubeconfig(kubeconfigPath, apiserver.url, certs);
    processes.push(
      startProcess({
        name: 'kube-controller-manager',
        command: join(BIN_DIR, 'kube-controller-manager'),
        args: [
          `--kubeconfig=${kubeconfigPath}`,
          '--secure-port=0',
          '--leader-elect=false',
          '--use-service-account-credentials=false',
          '--allocate-node-cidrs=true',
          `--cluster-cidr=${nets.map((n) => n.pods).join(',')}`,
          // One flag single-stack (the per-family flags are refused there), one per family dual-stack.
          ...(nets.length === 1
            ? [`--node-cidr-mask-size=${primary.nodeMask}`]
            : nets.map((n) => `--node-cidr-mask-size-${n.family.toLowerCase()}=${n.nodeMask}`)),
          `--service-cluster-ip-range=${services}`,
          `--root-ca-file=${certs.caCert}`,
          `--service-account-private-key-file=${certs.serviceAccountKey}`,
        ],
        logFile: join(dir, 'kube-controller-manager.log'),
      }),
      startProcess({
        name: 'kube-scheduler',
        command: join(BIN_DIR, 'kube-scheduler'),
        args: [`--kubeconfig=${kubeconfigPath}`, '--secure-port=0', '--leader-elect=false'],
        logFile: join(dir, 'kube-scheduler.log'),
      }),
    );
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const client = new ResourceClient(kc);
    // What the gardenlet's machine bootstrap grants: the machines' NetworkPolicy enforcers read pods, namespaces and
    // policies (without it no ruleset is ever in force, and the CNI hook holds every new pod).
    for (const { ref, object } of networkPolicyEnforcerRBAC()) await client.create(ref, object);
    // Built on first use (content-addressed, so only once per cache).
    let images: Promise<BuiltImage[]> | undefined;
    const machineImages = () => (images ??= buildMachineImages(BIN_DIR, join(projectRoot(), '.cache', 'images')));
    const caPEM = await readFile(certs.caCert, 'utf8');
    const kubeProxyCredentials = await issueClientCertificate(certs, {
      file: 'kube-proxy',
      commonName: 'system:kube-proxy',
    });
    log(`shoot env: API server ${apiserver.url}, node bridge ${nodeBridge}`);
    return {
      families,
      dir,
      certs,
      apiServerURL: apiserver.url,
      caPEM,
      client,
      kubeconfigPath,
      nodeBridge,
      processes,
      kubectl(args, timeoutMs = 30_000) {
        return execFileSync(join(BIN_DIR, 'kubectl'), [`--kubeconfig=${kubeconfigPath}`, ...args], {
          encoding: 'utf8',
          timeout: timeoutMs,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
      },
      async machineOptions(i, name, extra = {}) {
        const stateDir = join(dir, 'machines', name);
        await mkdir(stateDir, { recursive: true });
        const credentials = await issueClientCertificate(certs, {
          file: `node-${name}`,
          commonName: `system:node:${name}`,
          organizations: ['system:nodes'],
        });
        return {
          name,
          stateDir,
          binDir: BIN_DIR,
          attachment: { bridge: nodeBridge, gateways: nets.map((n) => n.gateway) },
          addresses: nets.map((n) => n.machineAddress(i)),
          families,
          apiServer: { url: apiserver.url, caPEM },
          join: { credentials, kubeProxyCredentials },
          clusterDNS: primary.clusterDNS,
          podCIDRs: nets.map((n) => n.pods),
          serviceCIDRs: nets.map((n) => n.services),
          operatingSystemConfig: {
            spec: {
              files: [
                {
                  path: '/etc/sysctl.d/99-k8s-general.conf',
                  permissions: 0o644,
                  content: {
                    inline: {
                      encoding: '',
                      data: families
                        .flatMap((f) =>
                          f === 'IPv6'
                            ? ['net.ipv6.conf.all.forwarding = 1', 'net.ipv6.conf.default.forwarding = 1']
                            : ['net.ipv4.conf.all.forwarding = 1', 'net.ipv4.conf.default.forwarding = 1'],
                        )
                        .join('\n'),
                    },
                  },
                },
              ],
            },
          },
          images: extra.images ?? (await machineImages()),
          log,
          ...extra,
        };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

export { Machine };
