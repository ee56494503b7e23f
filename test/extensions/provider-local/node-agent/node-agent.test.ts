import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  OperatingSystemConfigError,
  WORKER_SYSCTL_FILE,
  applyOperatingSystemConfig,
  directoryTarget,
  parseSysctlFile,
  sysctlPlan,
  type NodeAgentTarget,
} from '../../../../src/extensions/provider-local/node-agent/node-agent.js';
import { createIPv6OnlyNetns, deleteNetns, netnsUnsupportedReason } from '../../../../src/system/netns.js';
import { which } from '../../../../src/system/process.js';

const osc = (files: unknown[]) => ({ spec: { files } }) as Parameters<typeof applyOperatingSystemConfig>[0];
const sysctlFile = (data: string, path = '/etc/sysctl.d/99-k8s-general.conf') => ({
  path,
  permissions: 0o644,
  content: { inline: { encoding: '', data } },
});

function fakeTarget() {
  const files = new Map<string, { content: string; mode: number }>();
  const sysctls: (readonly [string, string])[][] = [];
  const target: NodeAgentTarget = {
    async writeFile(path, content, mode) {
      files.set(path, { content: content.toString(), mode });
    },
    async setSysctls(values) {
      sysctls.push([...values]);
    },
  };
  return { target, files, sysctls };
}

const dir = mkdtempSync(join(tmpdir(), 'node-agent-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('node agent', () => {
  it('parses sysctl.d files: comments, blanks, slashes, ignore-failure prefix', () => {
    expect([
      ...parseSysctlFile('# c\n; c\n\nnet.ipv6.conf.all.forwarding = 1\n-net/ipv4/ip_forward=0\nnonsense\n'),
    ]).toEqual([
      ['net.ipv6.conf.all.forwarding', '1'],
      ['net.ipv4.ip_forward', '0'],
    ]);
  });

  it('writes the OSC files and the worker sysctls, and applies the merged settings with the worker ones winning', async () => {
    const { target, files, sysctls } = fakeTarget();
    const result = await applyOperatingSystemConfig(
      osc([
        sysctlFile('net.ipv6.conf.all.forwarding = 1\nnet.ipv6.conf.default.forwarding = 1\nkernel.pid_max = 65536\n'),
        {
          path: '/etc/motd',
          permissions: 0o600,
          content: { inline: { encoding: 'b64', data: Buffer.from('hi').toString('base64') } },
        },
      ]),
      target,
      { 'net.ipv6.conf.all.forwarding': '0' },
    );
    expect(files.get('/etc/motd')).toEqual({ content: 'hi', mode: 0o600 });
    expect(files.get(WORKER_SYSCTL_FILE)?.content).toBe('net.ipv6.conf.all.forwarding = 0\n');
    expect(sysctls).toEqual([
      [
        ['net.ipv6.conf.all.forwarding', '0'],
        ['net.ipv6.conf.default.forwarding', '1'],
      ],
    ]);
    // Host-wide settings are never written from a machine.
    expect(result.sysctls.skipped.map((s) => s.key)).toEqual(['kernel.pid_max']);
  });

  it('later sysctl files win, files elsewhere are not sysctls', () => {
    const file = (path: string, data: string) => ({ path, content: Buffer.from(data), mode: 0o644 });
    const plan = sysctlPlan([
      file('/etc/sysctl.d/99-z.conf', 'net.a = 2\n'),
      file('/etc/sysctl.d/10-a.conf', 'net.a = 1\nnet.b = 1\n'),
      file('/etc/other.conf', 'net.c = 1\n'),
    ]);
    expect(plan.apply).toEqual([
      ['net.a', '2'],
      ['net.b', '1'],
    ]);
  });

  it('rejects invalid files with field paths, before writing anything', async () => {
    const { target, files } = fakeTarget();
    const error = await applyOperatingSystemConfig(
      osc([
        sysctlFile('net.a = 1\n'),
        { path: 'relative', content: { inline: { encoding: '', data: '' } } },
        { path: '/a', content: { secretRef: { name: 's', dataKey: 'k' } } },
        { path: '/b', content: { inline: { encoding: 'gzip', data: '' } } },
      ]),
      target,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperatingSystemConfigError);
    expect((error as OperatingSystemConfigError).errors.map((e) => e.field)).toEqual([
      'spec.files[1].path',
      'spec.files[2].content',
      'spec.files[3].content.inline.encoding',
    ]);
    expect(files.size).toBe(0);
  });

  it('a directory target writes below its root with the given mode', async () => {
    const target = directoryTarget({ rootDir: dir });
    await target.writeFile('/etc/sysctl.d/x.conf', Buffer.from('net.a = 1\n'), 0o640);
    expect(readFileSync(join(dir, 'etc/sysctl.d/x.conf'), 'utf8')).toBe('net.a = 1\n');
    expect(statSync(join(dir, 'etc/sysctl.d/x.conf')).mode & 0o777).toBe(0o640);
  });

  it.runIf(netnsUnsupportedReason() === undefined)('applies sysctls in a network namespace, not in ours', async () => {
    const ns = createIPv6OnlyNetns();
    const read = (args: string[]) => execFileSync(which('ip')!, args, { encoding: 'utf8' }).trim();
    const ours = readFileSync('/proc/sys/net/ipv6/conf/all/forwarding', 'utf8').trim();
    try {
      const target = directoryTarget({ rootDir: join(dir, 'root'), netns: ns });
      for (const value of ['1', '0']) {
        await applyOperatingSystemConfig(osc([sysctlFile('net.ipv6.conf.all.forwarding = 1\n')]), target, {
          'net.ipv6.conf.all.forwarding': value,
        });
        expect(read(['netns', 'exec', ns, 'cat', '/proc/sys/net/ipv6/conf/all/forwarding'])).toBe(value);
      }
      expect(readFileSync('/proc/sys/net/ipv6/conf/all/forwarding', 'utf8').trim()).toBe(ours);
    } finally {
      deleteNetns(ns);
    }
  });
});
