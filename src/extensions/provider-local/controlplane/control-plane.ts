/**
 * One shoot's control plane as provider-local runs it: a network namespace of its own (like a pod), plugged into
 * the load-balancer bridge with the shoot's load-balancer address per family, and in it etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler as supervised processes of the pinned binaries. Certificates come
 * from the shoot's CA; etcd's data stays in the shoot's state folder, so a restart of the gardenlet loses nothing.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deleteNetns } from '../../../localenv/netns.js';
import { graceBefore } from '../../../localenv/process.js';
import type { IPFamily } from '../../../net/cidr.js';
import { issueCertificate, type CertificatePair } from '../../../pki/certificates.js';
import { renderKubeconfig } from '../../../pki/kubeconfig.js';
import { SupervisedProcess, type SupervisedState, type SupervisorOptions } from '../../../system/supervisor.js';
import { attachNamespace, createNamespace, netnsName, shortHash } from '../../../system/network.js';
import {
  apiServerURL,
  controlPlaneFiles,
  etcdArgs,
  kubeAPIServerArgs,
  kubeControllerManagerArgs,
  kubeSchedulerArgs,
  type ControlPlaneFiles,
  type ControlPlaneSpec,
} from '../../../gardenlet/shoot/components/controlplane/args.js';
import {
  issueComponentCertificates,
  type ControlPlaneSecrets,
} from '../../../gardenlet/shoot/components/controlplane/certificates.js';
import { shootGet } from '../../../gardenlet/shoot/shoot-get.js';

export const CONTROL_PLANE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
export type ControlPlaneBinaries = Readonly<Record<(typeof CONTROL_PLANE_BINARIES)[number], string>>;

/** The shoot's long-lived secrets, kept by the gardenlet in the seed namespace. */
export type { ControlPlaneSecrets };

export interface LoadBalancerAttachment {
  readonly bridge: string;
  /** The prefix length of each family's load-balancer network and its gateway on the bridge. */
  readonly networks: Readonly<Partial<Record<IPFamily, { prefixLength: number; gateway: string }>>>;
}

/** How long kube-controller-manager and kube-scheduler wait for the API server before they start anyway. */
const CONTROLLERS_START_TIMEOUT_MS = 60_000;
/** How long the control plane's own certificates live; they are issued anew on every start. */
const CERT_VALIDITY_MS = 365 * 24 * 3600_000;

export class LocalControlPlane {
  readonly netns: string;
  readonly files: ControlPlaneFiles;
  /** A system:masters client certificate of the gardenlet's, for probes. */
  private admin: CertificatePair | undefined;
  private processes: SupervisedProcess[] = [];
  private stopping = false;

  constructor(
    readonly spec: ControlPlaneSpec,
    readonly secrets: ControlPlaneSecrets,
    dir: string,
    private readonly binaries: ControlPlaneBinaries,
    private readonly supervisor: SupervisorOptions,
  ) {
    this.netns = netnsName('cp', shortHash(spec.name, 8));
    this.files = controlPlaneFiles(dir);
  }

  /** The API server URL at the primary family's load-balancer address. */
  get url(): string {
    return apiServerURL(this.spec);
  }

  /** Creates the namespace, writes certificates and kubeconfigs, starts the processes. */
  async start(lb: LoadBalancerAttachment): Promise<void> {
    const { spec, files } = this;
    await Promise.all([files.pki, files.etcdData, files.certDir, files.logs].map((d) => mkdir(d, { recursive: true })));
    await this.writeCertificates();

    createNamespace(this.netns, { ipv4Loopback: spec.families.includes('IPv4') });
    const addresses: string[] = [];
    const gateways: Partial<Record<IPFamily, string>> = {};
    for (const family of spec.families) {
      const network = lb.networks[family];
      const address = spec.addresses[family];
      if (network === undefined || address === undefined) throw new Error(`no ${family} load-balancer network`);
      addresses.push(`${address}/${network.prefixLength}`);
      gateways[family] = network.gateway;
    }
    attachNamespace(this.netns, { bridge: lb.bridge, addresses, gateways });

    const run = (name: (typeof CONTROL_PLANE_BINARIES)[number], args: string[]) =>
      new SupervisedProcess(
        { name, command: this.binaries[name], args, logFile: join(files.logs, `${name}.log`), netns: this.netns },
        this.supervisor,
      );
    this.processes = [
      run('etcd', etcdArgs(files)),
      run('kube-apiserver', kubeAPIServerArgs(spec, files)),
      run('kube-controller-manager', kubeControllerManagerArgs(spec, files)),
      run('kube-scheduler', kubeSchedulerArgs(files)),
    ];
    // etcd and the API server at once (it retries etcd on its own); the controllers once the API server is ready:
    // started earlier, they exit on the RBAC and the authentication ConfigMap it creates while starting.
    const [etcd, apiServer, ...controllers] = this.processes;
    etcd!.start();
    apiServer!.start();
    void this.startWhenReady(controllers);
  }

  /** Starts `processes` once /readyz answers 200, or after CONTROLLERS_START_TIMEOUT_MS in any case. */
  private async startWhenReady(processes: readonly SupervisedProcess[]): Promise<void> {
    const deadline = Date.now() + CONTROLLERS_START_TIMEOUT_MS;
    while (!this.stopping && Date.now() < deadline) {
      const ready = await this.get('/readyz', 1_000).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // A no-op once stopped.
    for (const p of processes) p.start();
  }

  private async writeCertificates(): Promise<void> {
    const { spec, files, secrets } = this;
    const [{ server, kubeletClient, controllerManager, scheduler }, admin] = await Promise.all([
      issueComponentCertificates(spec, secrets.ca, { validityMs: CERT_VALIDITY_MS }),
      issueCertificate(secrets.ca, {
        commonName: 'gardenlet',
        organizations: ['system:masters'],
        usages: ['client'],
        notAfter: new Date(Date.now() + CERT_VALIDITY_MS),
      }),
    ]);
    this.admin = admin;
    const kubeconfig = (name: string, pair: CertificatePair) =>
      renderKubeconfig({ name, server: this.url, caPEM: secrets.ca.certPEM, ...pair });
    const files600: [string, string][] = [
      [files.caCert, secrets.ca.certPEM],
      [files.caKey, secrets.ca.keyPEM],
      [files.serverCert, server.certPEM],
      [files.serverKey, server.keyPEM],
      [files.kubeletClientCert, kubeletClient.certPEM],
      [files.kubeletClientKey, kubeletClient.keyPEM],
      [files.serviceAccountKey, secrets.serviceAccount.privatePEM],
      [files.serviceAccountPub, secrets.serviceAccount.publicPEM],
      [files.controllerManagerKubeconfig, kubeconfig('kube-controller-manager', controllerManager)],
      [files.schedulerKubeconfig, kubeconfig('kube-scheduler', scheduler)],
    ];
    await Promise.all(files600.map(([path, text]) => writeFile(path, text, { mode: 0o600 })));
  }

  /** The gardenlet's `system:masters` client certificate for this shoot. */
  adminCredentials(): CertificatePair {
    if (this.admin === undefined) throw new Error('the control plane was not started');
    return this.admin;
  }

  states(): SupervisedState[] {
    return this.processes.map((p) => p.state());
  }

  /** The log tail of one of its processes. */
  tail(name: string, lines?: number): string {
    return this.processes.find((p) => p.name === name)?.tail(lines) ?? '';
  }

  /** GET against the API server with the gardenlet's admin certificate. */
  get(path: string, timeoutMs?: number): Promise<{ status: number; body: string }> {
    if (this.admin === undefined) return Promise.reject(new Error('the control plane was not started'));
    return shootGet(this.url, this.secrets.ca.certPEM, this.admin, path, timeoutMs);
  }

  /**
   * Stops the processes (API server first, etcd last) and deletes the namespace; keeps the data. With a `deadline`
   * (ms since epoch), what still runs then is killed.
   */
  async stop(opts: { deadline?: number } = {}): Promise<void> {
    this.stopping = true;
    const byName = (name: string) => this.processes.filter((p) => p.name === name);
    const grace = (ms: number) => graceBefore(opts.deadline, ms);
    await Promise.all(byName('kube-apiserver').map((p) => p.stop(grace(10_000))));
    await Promise.all(
      [...byName('kube-controller-manager'), ...byName('kube-scheduler')].map((p) => p.stop(grace(5_000))),
    );
    await Promise.all(byName('etcd').map((p) => p.stop(grace(5_000))));
    deleteNetns(this.netns);
  }

  /** For exit handlers: kill everything at once and delete the namespace. */
  killNow(): void {
    this.stopping = true;
    for (const p of this.processes) p.killNow();
    deleteNetns(this.netns);
  }

  /** Removes the data (after stop). */
  async removeData(): Promise<void> {
    await rm(this.files.dir, { recursive: true, force: true });
  }
}
