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

  it('places us relative to the mounted part of a hierarchy, as inside a container', () => {
    const pod = '/kubepods/besteffort/pod1/c1';
    const mountinfo = `1 0 0:1 / / rw - overlay overlay rw
2 1 0:2 / /sys/fs/cgroup rw - tmpfs cgroup rw
3 2 0:3 ${pod} /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
4 2 0:4 ${pod} /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids`;
    const own = `5:memory:${pod}/machine\n4:pids:${pod}\n0::/`;
    expect(cgroupV1Hierarchies(mountinfo, own).map((h) => [h.mountPoint, h.ownPath])).toEqual([
      ['/sys/fs/cgroup/memory', '/machine'],
      ['/sys/fs/cgroup/pids', '/'],
    ]);
  });

  it('is empty on a cgroup v2 host', () => {
    expect(cgroupV1Hierarchies('41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw', '0::/')).toEqual([]);
  });
});
