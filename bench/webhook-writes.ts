/**
 * Shoot writes through kube-apiserver with the admission webhook registered, against the same writes with the bare
 * server (bench/baseline-server.mjs, answering `allowed` with the request's uid) registered in its place: what the
 * webhook costs the installation's writes. The `webhook` part compares the webhook with the bare server alone; this
 * one measures what a client of the API server sees.
 *
 * h2load sends dry-run creates of the `webhook` part's valid Shoot with seed context (`?dryRun=All`: the API server
 * runs every admission step, both webhook calls included, and stores nothing, so the same body can be sent again and
 * the store doesn't grow) with a ServiceAccount's token. Each slice registers the chart's webhook configurations
 * (mutating and validating) for one of the two servers, waits until the API server calls that one (the webhook
 * defaults the Shoot's pod network and refuses an invalid Shoot, the bare server neither), and runs at full speed;
 * the two take turns slice by slice.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import {
  deployWebhookConfigurations,
  desiredWebhookConfigurations,
  webhookBaseURL,
} from '../src/admission/webhook-configurations.js';
import { Refs } from '../src/apis/refs.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { ResourceClient } from '../src/runtime/client.js';
import {
  benchShootOf,
  cpuMicros,
  createSeedAndCloudProfile,
  fmt,
  h2load,
  percentile,
  post,
  requireH2load,
  serverCertificates,
  startBaseline,
  startWebhook,
  stopServer,
  type H2LoadRun,
  type ServerProcess,
} from './webhook.js';

export interface WebhookWritesOptions {
  /** Seconds of each slice. @default 5 */
  readonly sliceSeconds?: number;
  /** Slices per server, taking turns. @default 3 */
  readonly slices?: number;
}

/**
 * Which server the API server calls: the bare one for both webhooks, the webhook for both, or the webhook for
 * validating only (the bare one mutating): the webhook's reviews without a patch for the API server to apply.
 */
export type WritesTarget = 'baseline' | 'webhook' | 'webhook-validating';

export interface WritesResult {
  readonly target: WritesTarget;
  readonly writes: number;
  readonly writesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** CPU of the registered servers per write (two reviews: /mutate and /validate). */
  readonly serverCpuMicrosPerWrite: number;
  readonly apiServerCpuMicrosPerWrite: number;
}

export interface WebhookWritesBenchResult {
  readonly results: readonly WritesResult[];
  readonly sliceSeconds: number;
  readonly slices: number;
}

const NAMESPACE = 'garden-bench';
const SERVICE_ACCOUNT = 'bench-writer';
/** The bare server's answers with the request's uid are under this path (bench/baseline-server.mjs). */
const BASELINE_ECHO_PATH = '/echo';

export async function runWebhookWritesBench(opts: WebhookWritesOptions = {}): Promise<WebhookWritesBenchResult> {
  requireH2load();
  const sliceSeconds = Math.max(1, Math.round(opts.sliceSeconds ?? 5));
  const slices = Math.max(1, opts.slices ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-bench-writes-'));
  const cp = await startControlPlane({ log: () => {} });
  const servers: ServerProcess[] = [];
  try {
    const kc = cp.kubeConfig();
    const client = new ResourceClient(kc);
    await createSeedAndCloudProfile(client);
    await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const token = await writerToken(kc.makeApiClient(CoreV1Api), client);

    const { certDir, ca } = await serverCertificates(dir);

    const baseline = await startBaseline(certDir, dir);
    servers.push(baseline);
    const webhook = await startWebhook(cp.kubeconfigPath, certDir, dir);
    servers.push(webhook);
    const serversOf = (target: WritesTarget) =>
      target === 'baseline' ? [baseline] : target === 'webhook' ? [webhook] : [baseline, webhook];
    const configurationsFor = (url: string) => desiredWebhookConfigurations({ caBundle: ca, url });
    const bare = configurationsFor(`${webhookBaseURL('::1', baseline.port)}${BASELINE_ECHO_PATH}`);
    const ours = configurationsFor(webhookBaseURL('::1', webhook.port));
    const configurationsOf = (target: WritesTarget) =>
      target === 'baseline'
        ? bare
        : target === 'webhook'
          ? ours
          : { mutating: bare.mutating, validating: ours.validating };

    const shootsURL = `${cp.server}/apis/${Refs.shoot.group}/${Refs.shoot.version}/namespaces/${NAMESPACE}/shoots`;
    const valid = JSON.stringify(benchShootOf('valid+seed'));
    const invalid = JSON.stringify(benchShootOf('invalid+seed'));
    const bodyFile = join(dir, 'shoot.json');
    writeFileSync(bodyFile, valid);
    const apiCA = readFileSync(cp.certs.caCert);
    const dryRunCreate = async (body: string) => {
      const answer = await post(`${shootsURL}?dryRun=All`, body, apiCA, { Authorization: `Bearer ${token}` });
      return { status: answer.status, body: parseOrText(answer.body) };
    };
    const request = {
      uris: [`${shootsURL}?dryRun=All&fieldManager=bench`],
      bodyFile,
      headers: [`authorization: Bearer ${token}`],
    };
    const apiPids = cp.processes.filter((p) => p.name !== 'kube-controller-manager').map((p) => p.pid);
    const apiCpu = () => apiPids.reduce((sum, pid) => sum + cpuMicros(pid), 0);

    /** Registers the configurations for `target` and waits until the API server calls it. */
    const register = async (target: WritesTarget) => {
      await deployWebhookConfigurations(client, configurationsOf(target));
      const deadline = Date.now() + 60_000;
      for (;;) {
        const [created, refused] = await Promise.all([dryRunCreate(valid), dryRunCreate(invalid)]);
        const defaulted = (created.body as { spec?: { networking?: { pods?: string } } }).spec?.networking?.pods;
        const calls =
          created.status === 201 &&
          (defaulted !== undefined) === (target === 'webhook') &&
          refused.status >= 400 === (target !== 'baseline');
        if (calls) return;
        if (Date.now() > deadline) {
          throw new Error(
            `the API server does not call the ${target} within 60 s: ${created.status} ${JSON.stringify(created.body)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    const targets: readonly WritesTarget[] = ['baseline', 'webhook', 'webhook-validating'];
    // Warm-up (JIT, the API server's connections to the server), not measured.
    for (const target of targets) {
      await register(target);
      await h2load(request, 2, undefined, join(dir, 'warmup.log'));
    }
    const runs = new Map<WritesTarget, { run: H2LoadRun; cpu: number; apiCpu: number }[]>();
    for (let slice = 0; slice < slices; slice++) {
      // Rotated from slice to slice, so that no target always runs first or right after another.
      for (const target of targets.map((_, i) => targets[(i + slice) % targets.length]!)) {
        await register(target);
        const pids = serversOf(target).map((server) => server.child.pid!);
        const serverCpu = () => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
        const before = { cpu: serverCpu(), apiCpu: apiCpu() };
        const run = await h2load(request, sliceSeconds, undefined, join(dir, 'writes.log'));
        const measured = { run, cpu: serverCpu() - before.cpu, apiCpu: apiCpu() - before.apiCpu };
        runs.set(target, [...(runs.get(target) ?? []), measured]);
        process.stderr.write(
          `slice ${slice + 1}/${slices} ${target}: ${run.reviews} writes, ${(run.reviews / run.seconds).toFixed(0)}/s, ` +
            `${run.errors} errors, ${(measured.cpu / Math.max(1, run.reviews)).toFixed(0)} µs server CPU per write\n`,
        );
      }
    }

    const results = targets.map((target): WritesResult => {
      const list = runs.get(target) ?? [];
      const sum = (f: (r: (typeof list)[number]) => number) => list.reduce((s, r) => s + f(r), 0);
      const writes = sum((r) => r.run.reviews);
      const latencies = list.flatMap((r) => r.run.latencies).sort((a, b) => a - b);
      return {
        target,
        writes,
        writesPerSecond: writes / sum((r) => r.run.seconds),
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        errors: sum((r) => r.run.errors),
        serverCpuMicrosPerWrite: sum((r) => r.cpu) / writes,
        apiServerCpuMicrosPerWrite: sum((r) => r.apiCpu) / writes,
      };
    });
    return { results, sliceSeconds, slices };
  } finally {
    for (const server of servers) await stopServer(server).catch(() => {});
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A token of a ServiceAccount that may create Shoots (cluster-admin: authorization is not what is measured). */
async function writerToken(core: CoreV1Api, client: ResourceClient): Promise<string> {
  await client.create(Refs.serviceAccount, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: SERVICE_ACCOUNT, namespace: 'default' },
  });
  await client.create(Refs.clusterRoleBinding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: SERVICE_ACCOUNT },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: 'default' }],
  } as KubernetesObject);
  const request = await core.createNamespacedServiceAccountToken({
    name: SERVICE_ACCOUNT,
    namespace: 'default',
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return request.status!.token;
}

/** A body as JSON, or as its text when it is none (for an error message). */
function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function formatWebhookWritesBench(r: WebhookWritesBenchResult): string {
  const lines = [
    `${r.slices} slices of ${r.sliceSeconds} s per target, taking turns; dry-run Shoot creates over ` +
      'HTTPS at full speed, 10 connections',
    '',
    '| called for the webhooks | writes/s | p50 ms | p99 ms | errors | their CPU µs/write | apiserver+etcd CPU µs/write |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const x of r.results) {
    lines.push(
      `| ${x.target} | ${fmt(x.writesPerSecond)} | ${fmt(x.p50Ms, 2)} | ${fmt(x.p99Ms, 2)} | ${x.errors} | ` +
        `${fmt(x.serverCpuMicrosPerWrite)} | ${fmt(x.apiServerCpuMicrosPerWrite)} |`,
    );
  }
  const baseline = r.results.find((x) => x.target === 'baseline');
  lines.push('');
  for (const x of r.results) {
    if (!baseline || x === baseline) continue;
    lines.push(
      `${x.target} / baseline: writes/s ${fmt(x.writesPerSecond / baseline.writesPerSecond, 2)}x, ` +
        `p99 ${fmt(x.p99Ms / baseline.p99Ms, 2)}x, ` +
        `CPU per write of the servers +${fmt(x.serverCpuMicrosPerWrite - baseline.serverCpuMicrosPerWrite)} µs, ` +
        `of kube-apiserver and etcd +${fmt(x.apiServerCpuMicrosPerWrite - baseline.apiServerCpuMicrosPerWrite)} µs`,
    );
  }
  return lines.join('\n');
}
