/**
 * A pod-to-pod check in a shoot, over one IP family: a web server pod on the first Node and a client pod on the
 * last one (on another machine when there are two), which fetches the server's page at its pod IP of that family
 * once; the client's log holds the answer. What `up` prints, and what the benchmark times.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { urlHost } from '../../../system/net.js';
import { parseIP, type IPFamily } from '../../../net/cidr.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { ResourceRef } from '../../../apis/refs.js';
import { TEST_IMAGE } from '../machine/images.js';

const POD: ResourceRef = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
const NODE: ResourceRef = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false };
const NAMESPACE = 'default';

interface PodObject extends KubernetesObject {
  spec?: { nodeName?: string };
  status?: { phase?: string; podIPs?: { ip: string }[] };
}

export interface PodCheckResult {
  readonly family: IPFamily;
  readonly server: { readonly node: string; readonly ip: string };
  readonly client: { readonly node: string };
  /** The page the client got: the server pod's hostname. */
  readonly answer: string;
}

/** The line `up` prints for a pod-to-pod check (run by `check`), or for its failure. */
export async function describePodCheck(family: IPFamily, check: () => Promise<PodCheckResult>): Promise<string> {
  try {
    const result = await check();
    return (
      `  pod-to-pod over ${family}: a pod on ${result.client.node} fetched http://${urlHost(result.server.ip)}:8080/ ` +
      `from a pod on ${result.server.node}: "${result.answer}"`
    );
  } catch (e) {
    return `  pod-to-pod over ${family}: failed: ${(e as Error).message}`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pod(name: string, node: string, command: string, restartPolicy: string): PodObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { 'app.kubernetes.io/name': 'gardener-ipv6-pod-check' } },
    spec: {
      nodeName: node,
      restartPolicy,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image: TEST_IMAGE, command: ['sh', '-c', command] }],
    },
  } as PodObject;
}

/** Runs the check and removes its pods; throws with what went wrong after `timeoutMs`. */
export async function podToPodCheck(
  client: ResourceClient,
  /** GET of a raw path of the shoot's API server (the client log is text, not JSON). */
  getText: (path: string) => Promise<string>,
  family: IPFamily,
  timeoutMs = 120_000,
): Promise<PodCheckResult> {
  const deadline = Date.now() + timeoutMs;
  const nodes = (await client.list<KubernetesObject>(NODE, {})).items.map((n) => n.metadata?.name ?? '').sort();
  if (nodes.length === 0) throw new Error('the shoot has no Nodes');
  const serverNode = nodes[0]!;
  const clientNode = nodes[nodes.length - 1]!;
  const suffix = Date.now().toString(36);
  const serverName = `pod-check-server-${suffix}`;
  const clientName = `pod-check-client-${suffix}`;
  try {
    await client.create(
      POD,
      pod(serverName, serverNode, 'hostname > /www/index.html && exec httpd -f -p 8080 -h /www', 'Always'),
    );
    let ip: string | undefined;
    while (ip === undefined) {
      const server = await client.get<PodObject>(POD, serverName, NAMESPACE);
      ip =
        server?.status?.phase === 'Running'
          ? server.status.podIPs?.map((p) => p.ip).find((a) => parseIP(a)?.family === family)
          : undefined;
      if (ip === undefined) {
        if (Date.now() > deadline) throw new Error(`the server pod got no running ${family} address in time`);
        await sleep(250);
      }
    }
    const url = `http://${urlHost(ip)}:8080/`;
    // httpd answers as soon as it runs; retry a few times for the moment the pod's routes take to appear.
    await client.create(
      POD,
      pod(
        clientName,
        clientNode,
        `for i in 1 2 3 4 5; do timeout 3 wget -q -O - ${url} && exit 0; sleep 1; done; exit 1`,
        'Never',
      ),
    );
    for (;;) {
      const c = await client.get<PodObject>(POD, clientName, NAMESPACE);
      if (c?.status?.phase === 'Succeeded') break;
      if (c?.status?.phase === 'Failed') throw new Error(`the client pod on ${clientNode} could not fetch ${url}`);
      if (Date.now() > deadline) throw new Error(`the client pod did not finish in time (phase ${c?.status?.phase})`);
      await sleep(250);
    }
    const log = await getText(`/api/v1/namespaces/${NAMESPACE}/pods/${clientName}/log`);
    return { family, server: { node: serverNode, ip }, client: { node: clientNode }, answer: log.trim() };
  } finally {
    await Promise.allSettled([serverName, clientName].map((n) => client.delete(POD, n, NAMESPACE)));
  }
}
