/**
 * A machine's resources on the host by name (its network namespace, cgroups and veth), their removal when the machine
 * stops, and the janitor that removes the machines of owners that died.
 */
import { readdirSync } from 'node:fs';
import { CgroupSubtree, listSubtrees } from '../../../system/cgroups.js';
import { deleteNetns, ip, netnsExists } from '../../../system/netns.js';
import { hostVethName, pidAlive } from '../../../system/network.js';

/**
 * Names of a machine's network namespace and cgroup: `gv6-<owner pid>-machine-<name>`, the scheme of the local
 * provider's other namespaces (src/system/network.ts of the control planes), so one janitor finds them all.
 */
export const MACHINE_PREFIX = 'gv6-';
const MACHINE_KIND = 'machine';

/** `gv6-<pid>-machine-<name>`, the name of the machine's network namespace and cgroup. */
export function machineID(name: string, ownerPid = process.pid): string {
  return `${MACHINE_PREFIX}${ownerPid}-${MACHINE_KIND}-${name}`;
}

/** Kills every process of a machine and removes its cgroups, network namespace and veth. Never throws. */
export function removeMachineResources(id: string, vethName: string): void {
  try {
    new CgroupSubtree(id).destroy();
  } catch {
    // Reported by the leak checks of the callers; keep cleaning.
  }
  deleteNetns(id);
  try {
    ip(['link', 'del', vethName]);
  } catch {
    // Went with the namespace.
  }
}

/**
 * Removes the machines of owners that are gone (a crashed gardenlet or test run): their network namespaces and
 * cgroups, and with them every process. Returns the ids removed.
 */
export function cleanupOrphanedMachines(): string[] {
  const pattern = new RegExp(`^${MACHINE_PREFIX}(\\d+)-${MACHINE_KIND}-`);
  const ids = new Set<string>();
  let netnsNames: string[] = [];
  try {
    netnsNames = readdirSync('/run/netns');
  } catch {
    // No namespaces.
  }
  for (const name of [...netnsNames, ...listSubtrees(pattern)]) {
    const m = pattern.exec(name);
    if (m && !pidAlive(Number(m[1]))) ids.add(name);
  }
  for (const id of ids) removeMachineResources(id, hostVethName(id));
  return [...ids];
}

/** Whether anything of a machine is left: for leak checks. */
export function machineLeftovers(id: string): string[] {
  const left: string[] = [];
  if (netnsExists(id)) left.push(`network namespace ${id}`);
  const cgroup = new CgroupSubtree(id);
  if (cgroup.exists()) left.push(`cgroup ${id} (pids: ${cgroup.pids().join(', ') || 'none'})`);
  try {
    ip(['link', 'show', hostVethName(id)]);
    left.push(`veth ${hostVethName(id)}`);
  } catch {
    // Gone, as it should be.
  }
  return left;
}
