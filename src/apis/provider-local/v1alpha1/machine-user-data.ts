/**
 * What a provider-local machine boots with: its user data, as a cloud provider hands a VM its cloud-config. The
 * gardenlet writes it into the Secret each worker pool's `userDataSecretRef` names; provider-local mounts that Secret
 * into the pool's machine pods, whose agent reads it (again whenever it changes: the files and kernel settings are
 * applied in place, as gardener-node-agent applies a changed OperatingSystemConfig).
 *
 * Which user data a machine runs with is said by checksums, as Gardener's node agent says which
 * OperatingSystemConfig it applied: the gardenlet writes each pool's checksum on the Worker, provider-local copies
 * it onto the pool's machine pods (a pod update makes the seed's kubelet refresh the mounted Secret at once, not at
 * its next periodic sync), and a machine writes the checksum of what it applied on its Node. The gardenlet's
 * Worker step is done only when every Node shows its pool's checksum.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FileSchema } from '../../extensions/v1alpha1/operatingsystemconfig.js';

export const MACHINE_USER_DATA_API_VERSION = 'local.provider.extensions.gardener.cloud/v1alpha1';
/** The key of the user data in its Secret. */
export const USER_DATA_KEY = 'userData';

/** The checksum of a user data text (the Secret's value, as the machine reads it from its file). */
export function userDataChecksum(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The Worker's annotation with the checksum of pool `pool`'s user data. */
/**
 * On the Worker, beside the user data checksums: the IP families the gardenlet wrote the machines' user data with
 * (`IPv4,IPv6`), which the machines' node addresses and pod ranges are of.
 */
export const MACHINE_FAMILIES_ANNOTATION = 'local.provider.extensions.gardener.cloud/machine-ip-families';

export function workerUserDataAnnotation(pool: string): string {
  return `checksum/user-data-${pool}`;
}

/** A machine pod's annotation with the checksum of the user data its Worker wants it to run with. */
export const MACHINE_POD_USER_DATA_ANNOTATION = 'checksum/user-data';

/** Gardener's Node annotation with the checksum of the configuration the node agent applied last. */
export const NODE_APPLIED_USER_DATA_ANNOTATION = 'checksum/cloud-config-data';

/** `<6 chars>.<16 chars>` of [a-z0-9], as a bootstrap token is. */
export const BOOTSTRAP_TOKEN_PATTERN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;

const Family = z.enum(['IPv4', 'IPv6']);

/**
 * The pod network's settings of one family, as calico's IP pool of that family puts them in force on every node:
 * `mode` of the pool's encapsulation (`Always`: pod traffic between machines travels in calico's VXLAN device of the
 * family; `Never`: routed directly via the other Nodes' addresses; `CrossSubnet`: tunnelled only to Nodes outside the
 * machine's node subnet) and `natOutgoing` (pod egress leaving the cluster's ranges masqueraded to the node).
 */
export const PodNetworkPoolSchema = z.object({
  family: Family,
  /** The pool's kind of tunnel; this kernel has no IP-in-IP, so the machines tunnel `IPIP` pools in VXLAN too. */
  encapsulation: z.enum(['IPIP', 'VXLAN']).default('VXLAN'),
  mode: z.enum(['Always', 'Never', 'CrossSubnet']).default('Never'),
  natOutgoing: z.boolean().default(true),
});
export type PodNetworkPool = z.infer<typeof PodNetworkPoolSchema>;

export const MachineUserDataSchema = z.object({
  apiVersion: z.literal(MACHINE_USER_DATA_API_VERSION),
  kind: z.literal('MachineUserData'),
  /** The shoot's API server as the machines reach it, and the CA its serving certificate is issued by. */
  apiServer: z.object({ url: z.url({ protocol: /^https$/ }), caPEM: z.string().min(1) }),
  /** The token the kubelet trades for its client certificate (TLS bootstrapping). */
  bootstrapToken: z
    .string()
    .regex(BOOTSTRAP_TOKEN_PATTERN, 'a bootstrap token: <id>.<secret>, [a-z0-9]{6}.[a-z0-9]{16}'),
  /** The shoot's IP families, primary first. */
  families: z.array(Family).min(1).max(2),
  /** The cluster DNS address of each service range, primary first. */
  clusterDNS: z.array(z.string()).min(1),
  clusterDomain: z.string().default('cluster.local'),
  /** One per family, in family order. */
  podCIDRs: z.array(z.string()).min(1),
  serviceCIDRs: z.array(z.string()).min(1),
  /**
   * The pod network's pool settings per family (the shoot's calico NetworkConfig); a family without one is routed
   * directly and masqueraded. Applied in place when they change.
   */
  podNetwork: z
    .object({
      pools: z.array(PodNetworkPoolSchema).max(2),
      /**
       * The pods' DNS traffic to the machine's upstream resolvers leaves with the machine's address (calico's
       * `snatToUpstreamDNS`), whatever the pools' `natOutgoing`.
       */
      snatToUpstreamDNS: z.boolean().default(false),
    })
    .default({ pools: [], snatToUpstreamDNS: false }),
  /** The worker OperatingSystemConfig's files. */
  files: z.array(FileSchema).default([]),
  /** The worker pool's kernel settings, over the files'. */
  sysctls: z.record(z.string(), z.string()).default({}),
});
export type MachineUserData = z.infer<typeof MachineUserDataSchema>;
export type MachineUserDataInput = z.input<typeof MachineUserDataSchema>;

/** The user data from its JSON text; errors name the field. */
export function parseMachineUserData(text: string): MachineUserData {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`user data: not JSON: ${(e as Error).message}`);
  }
  const result = MachineUserDataSchema.safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`user data: ${issues.join('; ')}`);
  }
  return result.data;
}
