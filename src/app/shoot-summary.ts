/**
 * What `gardener-ipv6 up` prints about the shoot once it is up: its DNS records as BIND9 answers them and, with real
 * control planes, the pods in its seed namespace, its API server's version at its address, its Nodes, a pod-to-pod
 * check, and how to get its kubeconfig.
 */
import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../apis/extensions/v1alpha1/dnsrecord.js';
import { apiServerDomain, DEFAULT_DOMAIN, seedNamespaceName } from '../apis/core/v1beta1/names.js';
import { Refs } from '../apis/refs.js';
import { shootGet } from '../gardenlet/shoot/shoot-get.js';
import type { Bind9 } from '../localenv/bind9.js';
import type { ResourceClient } from '../runtime/client.js';
import type { IPFamily } from '../net/cidr.js';
import { describeNode, type NodeInfo } from '../extensions/provider-local/machine/api-client.js';
import { describePodCheck, podToPodCheck } from '../extensions/provider-local/worker/pod-check.js';
import { shootAdminAccess, shootAdminClient } from '../gardenlet/shoot/shoot-client.js';

/**
 * The commands `up` prints for a shoot's kubeconfig, runnable as printed from where `up` was started (`npx` finds
 * the command in the checkout or the project that installed it).
 */
function kubeconfigCommands(garden: string, shoot: string, out: string, kubectlArgs: string): string[] {
  return [
    `  kubeconfig: npx gardener-ipv6 kubeconfig --kubeconfig ${garden} --shoot ${shoot} --pin-address > ${out}`,
    `  then: kubectl --kubeconfig ${out} ${kubectlArgs}`,
  ];
}

/** The gitVersion a `/version` GET answers, or what went wrong. */
async function versionOf(get: () => Promise<{ status: number; body: string }>): Promise<string> {
  try {
    const res = await get();
    return res.status === 200
      ? `${(JSON.parse(res.body) as { gitVersion?: string }).gitVersion}`
      : `HTTP ${res.status}`;
  } catch (e) {
    return `no answer (${(e as Error).message})`;
  }
}

/** The control plane's pods in the seed namespace and the shoot API server's /version at its address. */
async function workloadsSummary(
  client: ResourceClient,
  shoot: Shoot,
  namespace: string,
  gardenKubeconfig: string,
  shootKubeconfig: string,
): Promise<string[]> {
  const lines = [
    `  control plane and machine pods (kubectl --kubeconfig ${gardenKubeconfig} -n ${namespace} get pods):`,
  ];
  const pods = (
    await client.list<KubernetesObject & { spec?: { nodeName?: string }; status?: { phase?: string } }>(Refs.pod, {
      namespace,
    })
  ).items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  for (const pod of pods) {
    lines.push(`    ${pod.metadata?.name}: ${pod.status?.phase} on ${pod.spec?.nodeName ?? '-'}`);
  }
  const ctx = { signal: AbortSignal.timeout(120_000) };
  let access: Awaited<ReturnType<typeof shootAdminAccess>>;
  try {
    access = await shootAdminAccess(client, shoot, ctx);
  } catch (e) {
    lines.push(`  shoot API server: ${(e as Error).message}`);
    return lines;
  }
  const get = (path: string, timeoutMs = 5_000) =>
    shootGet(access.server, access.caPEM, access.credentials, path, timeoutMs);
  lines.push(`  shoot API server ${access.server}/version -> ${await versionOf(() => get('/version'))}`);
  const ref = `${shoot.metadata.namespace}/${shoot.metadata.name}`;
  lines.push(...kubeconfigCommands(gardenKubeconfig, ref, shootKubeconfig, 'get nodes -o wide'));
  if ((shoot.spec.provider?.workers?.length ?? 0) === 0) return lines;
  const shootClient = await shootAdminClient(client, shoot, ctx);
  try {
    const nodes = (await shootClient.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
    lines.push(...nodes.map(describeNode));
    const family = (shoot.spec.networking?.ipFamilies?.[0] ?? 'IPv4') as IPFamily;
    lines.push(
      await describePodCheck(family, () =>
        podToPodCheck(
          shootClient,
          async (path) => {
            const res = await get(path, 10_000);
            if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
            return res.body;
          },
          family,
          60_000,
        ),
      ),
    );
  } finally {
    shootClient.close();
  }
  return lines;
}

/**
 * The lines `up` prints about the shoot: its families, its AAAA records as the DNS server answers them, and with
 * real control planes the shoot API server's /version reached at its address and how to get a kubeconfig.
 */
export async function shootSummary(
  client: ResourceClient,
  shoot: Shoot,
  bind: Bind9,
  env: {
    controlPlaneWorkloads?: boolean;
    gardenKubeconfig: string;
    /** Where the printed command writes the shoot's kubeconfig: outside the checkout, gone with `up`. */
    shootKubeconfig: string;
  },
): Promise<string[]> {
  const namespace = seedNamespaceName(shoot);
  const records = (await client.list<DNSRecord & KubernetesObject>(Refs.dnsRecord, { namespace })).items;
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([bind.server]);
  const lines = [
    `shoot ${shoot.metadata.namespace}/${shoot.metadata.name}: ${shoot.status?.lastOperation?.state} ` +
      `(ipFamilies ${JSON.stringify(shoot.spec.networking?.ipFamilies ?? [])}, pods ${shoot.status?.networking?.pods?.join(',')}, ` +
      `services ${shoot.status?.networking?.services?.join(',')})`,
  ];
  for (const record of records) {
    let answer: string;
    try {
      const resolved =
        record.spec.recordType === 'AAAA'
          ? await resolver.resolve6(record.spec.name ?? '')
          : await resolver.resolve4(record.spec.name ?? '');
      answer = resolved.join(', ');
    } catch (e) {
      answer = `no answer (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    }
    lines.push(`  ${record.spec.recordType} ${record.spec.name} -> ${answer}`);
  }
  const name = apiServerDomain(shoot, 'external', DEFAULT_DOMAIN);
  // AAAA where the shoot has one; an IPv4 shoot has an A record only.
  const type = records.some((r) => r.spec.recordType === 'AAAA') || records.length === 0 ? 'AAAA' : 'A';
  lines.push(`  try: dig @${bind.address} -p ${bind.port} ${type} ${name}`);
  if (env.controlPlaneWorkloads) {
    lines.push(...(await workloadsSummary(client, shoot, namespace, env.gardenKubeconfig, env.shootKubeconfig)));
    return lines;
  }
  return lines;
}
