/**
 * Which kernel parameters a local machine can have of its own: the rule's table, provider-local's admission of a
 * worker pool's `sysctls` with it, and the rule against the running kernel (which parameters a new network namespace
 * has and may write), where the test may create one.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LOCAL_ADMISSION_CONFIG,
  validateLocalShoot,
} from '../../../src/extensions/provider-local/admission.js';
import { machineSysctlRefusal } from '../../../src/extensions/provider-local/sysctls.js';
import { sysctlPlan } from '../../../src/extensions/provider-local/node-agent/node-agent.js';
import { which } from '../../../src/system/process.js';
import { causesOf, ipv4ShootObject } from '../../fixtures/objects.js';

const HOST = 'machines share the host kernel; only network-namespace settings (net.*) apply per machine';

describe('machineSysctlRefusal', () => {
  it.each<[string, string | undefined]>([
    ['net.ipv4.ip_forward', undefined],
    ['net/ipv4/ip_forward', undefined],
    ['net.ipv6.conf.all.forwarding', undefined],
    ['net.ipv4.conf.eth0.rp_filter', undefined],
    ['net.ipv4.tcp_keepalive_time', undefined],
    ['net.ipv4.neigh.eth0.gc_stale_time', undefined],
    ['net.core.somaxconn', undefined],
    ['net.netfilter.nf_conntrack_tcp_timeout_established', undefined],
    ['vm.max_map_count', HOST],
    ['fs.inotify.max_user_watches', HOST],
    ['kernel.pid_max', HOST],
    [
      'kernel.shmmax',
      'machines share the host kernel and IPC namespace; only network-namespace settings (net.*) apply per machine',
    ],
    [
      'fs.mqueue.msg_max',
      'machines share the host kernel and IPC namespace; only network-namespace settings (net.*) apply per machine',
    ],
    [
      'net.core.netdev_max_backlog',
      'machines share the host kernel, which keeps this net.* setting for the whole host, not per network namespace; ' +
        'only network-namespace settings (net.*) apply per machine',
    ],
    [
      'net.ipv4.neigh.default.gc_thresh3',
      'machines share the host kernel, which keeps this net.* setting for the whole host, not per network namespace; ' +
        'only network-namespace settings (net.*) apply per machine',
    ],
    [
      'net.core.rmem_max',
      "machines share the host kernel, which lets only the host's network namespace write this net.* setting; " +
        'only network-namespace settings (net.*) apply per machine',
    ],
  ])('%s', (key, refusal) => {
    expect(machineSysctlRefusal(key)).toBe(refusal);
  });
});

describe("provider-local's admission of a worker pool's sysctls", () => {
  it('refuses each parameter a machine cannot have, naming it, and is the rule the node agent skips by', () => {
    const shoot = ipv4ShootObject();
    shoot.spec.provider!.type = 'local';
    const sysctls = { 'net.ipv4.tcp_keepalive_time': '600', 'vm.max_map_count': '262144', 'net.core.rmem_max': '1' };
    shoot.spec.provider!.workers![0]!.sysctls = sysctls;
    expect(causesOf(validateLocalShoot(shoot, DEFAULT_LOCAL_ADMISSION_CONFIG))).toEqual([
      {
        field: 'spec.provider.workers[0].sysctls[vm.max_map_count]',
        reason: 'FieldValueForbidden',
        message: `Forbidden: ${HOST}`,
      },
      {
        field: 'spec.provider.workers[0].sysctls[net.core.rmem_max]',
        reason: 'FieldValueForbidden',
        message: `Forbidden: ${machineSysctlRefusal('net.core.rmem_max')}`,
      },
    ]);
    const plan = sysctlPlan([], sysctls);
    expect(plan.apply).toEqual([['net.ipv4.tcp_keepalive_time', '600']]);
    expect(plan.skipped.map((s) => [s.key, s.reason])).toEqual(
      ['vm.max_map_count', 'net.core.rmem_max'].map((k) => [k, machineSysctlRefusal(k)]),
    );
  });

  it('leaves the pools of other providers to their extension', () => {
    const shoot = ipv4ShootObject();
    shoot.spec.provider!.type = 'aws';
    shoot.spec.provider!.workers![0]!.sysctls = { 'vm.max_map_count': '262144' };
    expect(validateLocalShoot(shoot, DEFAULT_LOCAL_ADMISSION_CONFIG)).toEqual([]);
  });
});

const unshare = which('unshare');
const canUnshare =
  process.getuid?.() === 0 && unshare !== undefined && spawnSync(unshare, ['--net', 'true']).status === 0;

describe.skipIf(!canUnshare)('the rule against the running kernel', () => {
  it('allows exactly the net.* parameters a new network namespace has and may write', () => {
    // Mode and path of every parameter as a new network namespace sees /proc/sys/net.
    const listing = spawnSync(unshare!, ['--net', 'find', '/proc/sys/net', '-type', 'f', '-printf', '%m %P\n'], {
      encoding: 'utf8',
    });
    expect(listing.status).toBe(0);
    const wrong: string[] = [];
    for (const line of listing.stdout.trim().split('\n')) {
      const [mode, path] = line.split(' ') as [string, string];
      const key = `net.${path.replace(/\//g, '.')}`;
      const writable = (parseInt(mode, 8) & 0o200) !== 0;
      const allowed = machineSysctlRefusal(key) === undefined;
      // Read-only everywhere (tcp_available_congestion_control, ...) is no one's to set: not the rule's question.
      if (writable !== allowed && (writable || READ_ONLY_EVERYWHERE.every((k) => !key.endsWith(k)))) {
        wrong.push(
          `${key}: ${writable ? 'writable' : 'read-only'} in a new network namespace, the rule ${allowed ? 'allows' : 'refuses'} it`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** Parameters no network namespace may write, the host's included: reports of the kernel, not settings. */
const READ_ONLY_EVERYWHERE = [
  'tcp_available_congestion_control',
  'tcp_ehash_entries',
  'udp_hash_entries',
  'mptcp.available_path_managers',
  'mptcp.available_schedulers',
  'nf_conntrack_count',
  // Set by a multicast routing daemon through its socket, never through sysctl.
  'mc_forwarding',
];
