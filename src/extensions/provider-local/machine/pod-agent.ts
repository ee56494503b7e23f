/**
 * The agent of a machine pod (the machine image's `gardener-ipv6 machine`): turns the pod it runs in into a shoot
 * Node. It reads the pool's user data, builds the machine in the pod's own network namespace (containerd, kubelet
 * joining with the bootstrap token, kube-proxy, the VXLAN overlay to the other machines over the pod's address,
 * which also carries the Node's addresses from the shoot's node ranges), reports readiness on an
 * HTTP endpoint the pod's readiness probe asks, applies changed files and kernel settings in place, and stops the
 * machine when the pod is stopped. The seed's kubelet restarts it when it exits.
 *
 * A machine that can't start fails the agent, as machine-controller-manager fails a machine that does not join: a
 * part that keeps exiting before the Node was first Ready (START_FAILURE_LIMIT), or no Ready Node within the creation
 * timeout. The agent's last words, one line, are the container's termination message: the seed's kubelet keeps them
 * in the pod's status, where the Worker controller reads why the machine is not ready (worker/machine-problems.ts).
 * A kubelet that can't reach its API server never exits: the agent says so in its log early (join-problem.ts), where
 * the Worker controller reads it as progress.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import {
  parseMachineUserData,
  userDataChecksum,
  type MachineUserData,
  type PodNetworkPool,
} from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { formatIP, parseIP, type IPFamily } from '../../../net/cidr.js';
import { machineAddresses, nodeNetwork } from '../worker/node-addresses.js';
import { type BuiltImage } from './image-archive.js';
import { readContentDirs } from './content-store.js';
import { MACHINE_POD_BIN_DIR, MACHINE_POD_CNI_DIR, MACHINE_POD_IMAGES_DIR } from './pod-image.js';
import { MACHINE_POD_MOUNTS, MACHINE_READINESS } from '../machine-contract.js';
import { Machine } from './machine.js';
import type { MachineOptions } from './machine-options.js';
import { resolvConfNameservers } from './config.js';
import { apiServerUnreachable, JOIN_PROBLEM_MARK, joinProblemToReport } from './join-problem.js';

/** Where things are in the machine pod (machine-contract.ts) and in its image. */
export const MACHINE_POD_PATHS = {
  ...MACHINE_POD_MOUNTS,
  binDir: MACHINE_POD_BIN_DIR,
  imagesDir: MACHINE_POD_IMAGES_DIR,
} as const;
export type MachinePodPaths = Record<keyof typeof MACHINE_POD_PATHS, string>;

/** How often the user data is read again. */
export const USER_DATA_POLL_MS = 3_000;
/** How long the agent waits for its Node to be Ready before it says why not in its log (it keeps waiting). */
const READY_REPORT_MS = 180_000;
/** A Node not Ready this long after the machine started fails the machine: machine-controller-manager's default. */
export const MACHINE_CREATION_TIMEOUT_MS = 20 * 60_000;

/** The most Kubernetes keeps of a termination message. */
const TERMINATION_MESSAGE_BYTES = 4096;

/**
 * Writes the agent's last words, the first line of `message`, as the container's termination message, where the
 * seed's kubelet mounts one (in a pod); elsewhere nothing.
 */
export function writeTerminationMessage(message: string, path: string = MACHINE_POD_PATHS.terminationLog): void {
  if (!existsSync(path)) return;
  const line = message.split('\n').find((l) => l.trim() !== '') ?? message;
  try {
    writeFileSync(path, Buffer.from(line.trim()).subarray(0, TERMINATION_MESSAGE_BYTES));
  } catch {
    // Best effort: the log has it too.
  }
}

export interface MachinePodOptions {
  /** The pod's name: also the Node's. */
  readonly nodeName: string;
  /** The pod's addresses (`status.podIPs`): the overlay's underlay. */
  readonly podIPs: readonly string[];
  /** The shoot's node range of each family, in family order: where the Node's addresses come from. */
  readonly nodeCIDRs: readonly string[];
  /** The index of the pool's first machine in the node ranges; the pod's ordinal is added to it. */
  readonly firstMachine: number;
  /** The pool's zones: the machine is in the one of its ordinal, round robin ({@link machineTopologyLabels}). */
  readonly zones?: readonly string[];
  /** The shoot's region. */
  readonly region?: string;
  readonly paths?: Partial<MachinePodPaths>;
  /** @default MACHINE_READINESS.port */
  readonly readinessPort?: number;
  readonly log: (line: string) => void;
}

/**
 * The pod's address of the shoot's primary family: what the overlay runs over. kube-apiserver reaches the Nodes at
 * their primary InternalIP through the overlay from a pod of the same seed, so the seed's pod network needs that
 * family.
 */
export function underlayAddress(families: readonly IPFamily[], podIPs: readonly string[]): string {
  const parsed = podIPs.map((text) => ({ text: text.trim(), ip: parseIP(text.trim()) }));
  const bad = parsed.find((p) => p.ip === undefined);
  if (bad) throw new Error(`POD_IPS: ${JSON.stringify(bad.text)} is not an IP address`);
  const primary = parsed.find((p) => p.ip!.family === families[0]);
  if (primary === undefined) {
    throw new Error(
      `the pod has no ${families[0]} address (pod IPs: ${podIPs.join(', ') || 'none'}): the seed's pod ` +
        `network must have the shoot's primary IP family`,
    );
  }
  return formatIP(primary.ip!);
}

/** The machine's index in its shoot's node ranges: the pool's first machine's plus the pod's ordinal. */
export function machineIndex(nodeName: string, firstMachine: number): number {
  const ordinal = /-(\d+)$/.exec(nodeName)?.[1];
  if (ordinal === undefined) throw new Error(`the machine pod's name ${nodeName} has no ordinal (<pool>-<n>)`);
  return firstMachine + Number(ordinal);
}

/** The Node's labels for its place: `topology.kubernetes.io/region`, and `zone` where the pool has zones. */
export const TOPOLOGY_LABELS = {
  region: 'topology.kubernetes.io/region',
  zone: 'topology.kubernetes.io/zone',
} as const;

/**
 * The topology labels of a pool's machine, as a cloud's Nodes have them: the region, and the zone of the pod's
 * ordinal, round robin over the pool's zones (so that `n` machines over `z` zones put `ceil(n/z)` in the first
 * `n mod z` zones and `floor(n/z)` in the others, as Gardener distributes a pool's machines over its zones).
 */
export function machineTopologyLabels(
  nodeName: string,
  zones: readonly string[] = [],
  region?: string,
): Record<string, string> {
  const labels: Record<string, string> = {};
  if (region !== undefined && region !== '') labels[TOPOLOGY_LABELS.region] = region;
  if (zones.length > 0) labels[TOPOLOGY_LABELS.zone] = zones[machineIndex(nodeName, 0) % zones.length]!;
  return labels;
}

/** The Node's addresses, one per family of the shoot, each as a host address (`/128`, `/32`). */
export function nodeAddresses(families: readonly IPFamily[], nodeCIDRs: readonly string[], index: number): string[] {
  return machineAddresses(nodeNetwork(families, nodeCIDRs), families, index).map((a) => {
    const address = a.split('/')[0]!;
    return `${address}/${parseIP(address)!.family === 'IPv6' ? 128 : 32}`;
  });
}

/**
 * The images in the machine image, as content folders whose blobs the machine links into its containerd. They have
 * no archive: links to an image's files always succeed (symbolic ones across filesystems).
 */
export function imageArchives(dir: string): BuiltImage[] {
  return readContentDirs(dir).map(({ name, content }) => ({
    name,
    archive: join(dir, name),
    manifestDigest: '',
    content,
  }));
}

export function machineOptions(
  opts: MachinePodOptions,
  userData: MachineUserData,
  paths: MachinePodPaths,
  upstreamDNS: readonly string[] = [],
): MachineOptions {
  const families = userData.families;
  return {
    name: opts.nodeName,
    stateDir: paths.stateDir,
    binDir: paths.binDir,
    cniBinDir: MACHINE_POD_CNI_DIR,
    addresses: nodeAddresses(families, opts.nodeCIDRs, machineIndex(opts.nodeName, opts.firstMachine)),
    underlay: underlayAddress(families, opts.podIPs),
    families: [...families],
    apiServer: { url: userData.apiServer.url, caPEM: userData.apiServer.caPEM },
    join: { bootstrapToken: userData.bootstrapToken },
    clusterDNS: userData.clusterDNS[0]!,
    clusterDomain: userData.clusterDomain,
    podCIDRs: userData.podCIDRs,
    serviceCIDRs: userData.serviceCIDRs,
    nodeCIDRs: [...opts.nodeCIDRs],
    pools: userData.podNetwork.pools,
    upstreamDNS: [...upstreamDNS],
    snatToUpstreamDNS: userData.podNetwork.snatToUpstreamDNS,
    operatingSystemConfig: { spec: { files: userData.files } },
    sysctls: userData.sysctls,
    nodeLabels: machineTopologyLabels(opts.nodeName, opts.zones, opts.region),
    images: imageArchives(paths.imagesDir),
    log: opts.log,
  };
}

/** Runs the machine until `signal` aborts, then stops it. */
export async function runMachinePod(opts: MachinePodOptions, signal: AbortSignal): Promise<void> {
  const paths: MachinePodPaths = { ...MACHINE_POD_PATHS, ...opts.paths };
  let text = await readFile(paths.userData, 'utf8');
  const userData = parseMachineUserData(text);
  // The machine pod's resolvers (the seed's cluster DNS, which knows the environment's names) are the machine's
  // upstream, as a VM's come from its network; without a readable resolv.conf it has none.
  const upstreamDNS = resolvConfNameservers(await readFile(paths.resolvConf, 'utf8').catch(() => ''));
  const machine = new Machine(machineOptions(opts, userData, paths, upstreamDNS));
  await machine.deploy();
  machine.userDataApplied(userDataChecksum(text));
  opts.log(`machine ${opts.nodeName}: started; joining ${userData.apiServer.url}`);
  const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  const started = Date.now();
  let ready = false;
  let notReady = 'no answer yet';
  let joinProblem: { text: string; at: number } | undefined;
  const done = new AbortController();
  const waiting = AbortSignal.any([signal, done.signal]);
  const readiness = await serveReadiness(opts.readinessPort ?? MACHINE_READINESS.port, () =>
    ready ? undefined : notReady,
  );
  try {
    void (async () => {
      // Rounds of waiting, each one's reason logged, until the Node is Ready or the agent stops.
      while (!ready && !waiting.aborted) {
        try {
          await machine.wait(READY_REPORT_MS, waiting);
          ready = true;
        } catch (e) {
          notReady = (e as Error).message.split('\n')[0]!.replace(`machine ${opts.nodeName}: `, '');
          if (!waiting.aborted) opts.log(`machine ${opts.nodeName}: ${notReady}`);
        }
      }
      if (!ready) return;
      opts.log(`machine ${opts.nodeName}: Node Ready`);
    })();
    while (!signal.aborted) {
      await Promise.race([stopped, new Promise((r) => setTimeout(r, USER_DATA_POLL_MS))]);
      if (signal.aborted) break;
      if (!ready) {
        const failure = machine.startFailure();
        if (failure !== undefined) throw new Error(`machine ${opts.nodeName}: ${failure}`);
        if (Date.now() - started > MACHINE_CREATION_TIMEOUT_MS) {
          throw new Error(
            `machine ${opts.nodeName}: its Node is not Ready ${MACHINE_CREATION_TIMEOUT_MS / 60_000} minutes after ` +
              `the machine started (${joinProblem?.text ?? notReady})`,
          );
        }
        // A kubelet that can't reach its API server never exits: said early, for the Worker to show.
        const now = Date.now();
        const unreachable = apiServerUnreachable(machine.processLog('kubelet'));
        if (unreachable === undefined) joinProblem = undefined;
        const problem = joinProblemToReport(unreachable, started, now, joinProblem);
        if (problem !== undefined) {
          opts.log(`machine ${opts.nodeName}: ${JOIN_PROBLEM_MARK}${problem}`);
          joinProblem = { text: problem, at: now };
        }
      }
      text = await applyChangedUserData(machine, paths.userData, text, opts.log);
    }
  } finally {
    done.abort();
    // Not ready from here on: the machine stops.
    ready = false;
    notReady = 'the machine is stopping';
    await machine.stop({ deadline: Date.now() + 20_000 });
    await new Promise<void>((resolve) => readiness.close(() => resolve()));
    opts.log(`machine ${opts.nodeName}: stopped`);
  }
}

/**
 * The readiness endpoint: `notReady()` says why the machine is not ready, undefined once it is. Listens on `::`,
 * which takes IPv4 too where the pod has it.
 */
export async function serveReadiness(port: number, notReady: () => string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    const answer = (status: number, text: string) =>
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`${text}\n`);
    if (req.method !== 'GET' || req.url !== MACHINE_READINESS.path) return answer(404, 'not found');
    const reason = notReady();
    return reason === undefined ? answer(200, 'ready') : answer(503, reason);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '::', port }, () => resolve());
  });
  return server;
}

function describePool(p: PodNetworkPool): string {
  return `${p.family} ${p.mode === 'Never' ? 'routed' : `tunnelled (${p.mode})`}, natOutgoing ${p.natOutgoing}`;
}

/**
 * As gardener-node-agent: a changed user data's files and kernel settings are applied in place, the kubelet
 * restarted when its configuration changed, and the pod network's pool settings applied (as calico-node follows its
 * IP pools). What the machine
 * was built with (addresses, ranges, the API server) changes only with a new machine: the Worker rolls the pods.
 */
async function applyChangedUserData(
  machine: Machine,
  file: string,
  previous: string,
  log: (line: string) => void,
): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    log(`user data: ${(e as Error).message}`);
    return previous;
  }
  if (text === previous) return previous;
  let userData: MachineUserData;
  try {
    userData = parseMachineUserData(text);
  } catch (e) {
    log((e as Error).message);
    return previous;
  }
  try {
    const result = await machine.applyOperatingSystemConfig({ spec: { files: userData.files } }, userData.sysctls);
    const pools = await machine.applyPodNetwork(userData.podNetwork);
    machine.userDataApplied(userDataChecksum(text));
    log(
      `user data changed: ${result.filesWritten.length} files written, sysctls applied` +
        (result.kubeletRestarted ? ', kubelet restarted with its new configuration' : '') +
        (pools
          ? `, pod network ${userData.podNetwork.pools.map(describePool).join(', ')}` +
            `, snatToUpstreamDNS ${userData.podNetwork.snatToUpstreamDNS}`
          : ''),
    );
  } catch (e) {
    // The machine keeps running as it was, and its Node keeps the checksum of what it runs: the shoot's reconcile
    // waits. The same user data is not tried again, a new one is.
    log(`user data changed, not applied: ${(e as Error).message}`);
  }
  return text;
}
