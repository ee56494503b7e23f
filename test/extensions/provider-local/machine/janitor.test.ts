import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  cleanupOrphanedMachines,
  machineID,
  machineLeftovers,
} from '../../../../src/extensions/provider-local/machine/janitor.js';
import { machineMAC } from '../../../../src/extensions/provider-local/machine/machine-network.js';
import { hostVethName } from '../../../../src/system/network.js';
import { netnsUnsupportedReason } from '../../../../src/system/netns.js';
import { which } from '../../../../src/system/process.js';
import { CgroupSubtree } from '../../../../src/system/cgroups.js';

const running = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
const ip = (...args: string[]) => execFileSync(which('ip') ?? 'ip', args, { stdio: 'ignore' });

describe('machine janitor', () => {
  it('names a machine after its owner pid, with a veth name of at most 15 characters', () => {
    expect(machineID('worker-a', 4242)).toBe('gv6-4242-machine-worker-a');
    expect(hostVethName(machineID('worker-a', 4242))).toMatch(/^gv6v[0-9a-f]{11}$/);
  });

  it('gives a machine a stable, locally administered unicast MAC address', () => {
    const mac = machineMAC('worker-a', ['fd00:10:1::a/64']);
    expect(mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    expect(parseInt(mac.slice(0, 2), 16) & 0x03).toBe(0x02);
    expect(machineMAC('worker-a', ['fd00:10:1::a/64'])).toBe(mac);
    expect(machineMAC('worker-b', ['fd00:10:1::b/64'])).not.toBe(mac);
  });

  it.runIf(netnsUnsupportedReason() === undefined)(
    'removes what a dead owner left (namespace, veth, cgroup with its processes) and keeps live owners',
    async () => {
      // A pid that surely belongs to nobody any more: a child that has exited.
      const dead = spawnSync('true').pid!;
      const orphan = machineID('orphan', dead);
      const live = machineID('live');
      for (const id of [orphan, live]) {
        ip('netns', 'add', id);
        ip('link', 'add', hostVethName(id), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', id);
        new CgroupSubtree(id).create('system');
      }
      // A process of the orphaned machine still running in its cgroup, as a container would.
      const sleeper = spawnSync(
        'sh',
        [
          '-c',
          `for f in ${new CgroupSubtree(orphan).procsFiles('system').join(' ')}; do echo $$ > $f; done; sleep 60 >/dev/null 2>&1 & echo $!`,
        ],
        {
          encoding: 'utf8',
        },
      );
      const sleeperPid = Number(sleeper.stdout.trim());
      try {
        expect(new CgroupSubtree(orphan).pids()).toContain(sleeperPid);
        expect(cleanupOrphanedMachines()).toContain(orphan);
        expect(machineLeftovers(orphan)).toEqual([]);
        // Killed: gone, or a zombie until its new parent reaps it.
        expect(running(sleeperPid)).toBe(false);
        expect(machineLeftovers(live)).not.toEqual([]);
      } finally {
        try {
          process.kill(sleeperPid, 'SIGKILL');
        } catch {
          // Killed by the janitor.
        }
        new CgroupSubtree(live).destroy();
        ip('netns', 'del', live);
      }
    },
  );
});
