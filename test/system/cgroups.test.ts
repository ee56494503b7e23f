import { describe, expect, it } from 'vitest';
import { cgroupV1Hierarchies } from '../../src/system/cgroups.js';

const MOUNTINFO = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
99 23 0:32 / /mnt/again rw,relatime - cgroup cgroup rw,memory`;
const OWN = `9:name=systemd:/
4:memory:/jobs/abc
2:cpu,cpuacct:/
0::/`;

describe('cgroup v1 hierarchies', () => {
  it('finds each hierarchy once with its mount options and our place in it; ignores cgroup2', () => {
    expect(cgroupV1Hierarchies(MOUNTINFO, OWN)).toEqual([
      {
        mountPoint: '/sys/fs/cgroup/cpu,cpuacct',
        options: 'cpu,cpuacct',
        controllers: ['cpu', 'cpuacct'],
        ownPath: '/',
      },
      { mountPoint: '/sys/fs/cgroup/memory', options: 'memory', controllers: ['memory'], ownPath: '/jobs/abc' },
      {
        mountPoint: '/sys/fs/cgroup/systemd',
        options: 'none,name=systemd',
        controllers: ['name=systemd'],
        ownPath: '/',
      },
    ]);
  });

  it('is empty on a cgroup v2 host', () => {
    expect(cgroupV1Hierarchies('41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw', '0::/')).toEqual([]);
  });
});
