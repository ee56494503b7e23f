/**
 * What provider-local's Worker controller (worker/) and its machine agent (machine/, `gardener-ipv6 machine`) agree
 * on: the machine pod's labels and annotation, the environment the agent reads, the paths the pod mounts, the agent's
 * readiness endpoint and its exit codes. The Worker writes them into the machine pods it makes; the agent reads them
 * inside: a rename here changes both sides at once.
 */

/** Labels of the machine pods: every machine of a Worker, and of one pool. */
export const MACHINE_LABELS = {
  app: 'app',
  role: 'machine',
  pool: 'worker.gardener.cloud/pool',
} as const;

/**
 * calico's pod annotation for sources a workload may send from besides its own addresses: a JSON list of CIDRs. A
 * machine pod carries its shoot's pod ranges there, which its pods' traffic leaves with when the shoot's pool has
 * no outgoing NAT; the machines' NetworkPolicy enforcer lets them out (machine/network-policy/anti-spoofing.ts).
 */
export const ALLOWED_SOURCE_PREFIXES_ANNOTATION = 'cni.projectcalico.org/allowedSourcePrefixes';

/** The environment of a machine pod's agent. */
export const MACHINE_POD_ENV = {
  /** The pod's name: also the Node's (from `metadata.name`). */
  nodeName: 'NODE_NAME',
  /** The pod's addresses, comma-separated (from `status.podIPs`): the overlay's underlay. */
  podIPs: 'POD_IPS',
  /** The node range of each family, comma-separated, in family order. */
  nodeCIDRs: 'NODE_CIDRS',
  /** The index of the pool's first machine in the node ranges: the pod's ordinal is added to it. */
  firstMachine: 'FIRST_MACHINE_INDEX',
  /** The pool's zones, comma-separated: the machine of ordinal `i` is in the `i mod n`th (pod-agent.ts). */
  zones: 'ZONES',
  /** The shoot's region, the Node's `topology.kubernetes.io/region`. */
  region: 'REGION',
} as const;

/** Where the machine pod puts what the agent reads and writes. */
export const MACHINE_POD_MOUNTS = {
  /** The pool's user data, from its Secret. */
  userData: '/etc/gardener-ipv6/user-data/userData',
  /** An emptyDir: containerd's snapshots need a filesystem other than the container's overlay. */
  stateDir: '/var/lib/gardener-ipv6-machine',
  /** An emptyDir: the image itself is read-only. */
  tmpDir: '/tmp',
  /** The pod's own resolvers, from the seed's kubelet: the machine's upstream resolvers. */
  resolvConf: '/etc/resolv.conf',
  /** The container's `terminationMessagePath` (Kubernetes' default): the agent's last words. */
  terminationLog: '/dev/termination-log',
} as const;

/**
 * The agent's readiness endpoint (`GET /readyz` on every address of the pod): 200 once the Node is Ready, else 503
 * with why not. The seed's kubelet probes it over the network, so nothing on the seed runs a command in the machine.
 */
export const MACHINE_READINESS = { port: 10270, path: '/readyz' } as const;

/** The agent's exit codes, which the Worker controller reads from the pod's status. */
export const MACHINE_AGENT_EXIT = {
  /** Stopped by a signal. */
  stopped: 0,
  /** The machine could not be started or failed to start. */
  failed: 1,
  /** Missing or malformed inputs (flags, environment). */
  usage: 2,
  /** What the machine's configuration asks can't be had (a kernel parameter's value, a kubelet setting). */
  configuration: 3,
} as const;
