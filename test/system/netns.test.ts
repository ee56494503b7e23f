import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  addIPv6Veth,
  createIPv6OnlyNetns,
  deleteNetns,
  deleteVeth,
  netnsExists,
  netnsUnsupportedReason,
} from '../../src/system/netns.js';
import { which } from '../../src/system/process.js';

const reason = netnsUnsupportedReason();
const ip = (...args: string[]) => execFileSync(which('ip') ?? 'ip', args, { encoding: 'utf8' });

describe('IPv6-only network namespaces', () => {
  it.runIf(reason === undefined)('creates a namespace with ::1 and without 127.0.0.1, and deletes it', () => {
    const name = createIPv6OnlyNetns();
    try {
      expect(netnsExists(name)).toBe(true);
      expect(ip('-n', name, '-4', '-o', 'addr', 'show').trim()).toBe('');
      expect(ip('-n', name, '-6', '-o', 'addr', 'show', 'dev', 'lo')).toContain('inet6 ::1/128');
      expect(ip('-n', name, '-o', 'link', 'show', 'lo')).toMatch(/[<,]UP[,>]/);
    } finally {
      deleteNetns(name);
    }
    expect(netnsExists(name)).toBe(false);
  });

  it.runIf(reason === undefined)('connects it with an IPv6-only veth pair, and removes the pair again', () => {
    const name = createIPv6OnlyNetns();
    try {
      const veth = addIPv6Veth(name);
      expect(veth.hostAddress).toMatch(/^fd00:7a:[0-9a-f]{1,4}::1$/);
      expect(ip('-6', '-o', 'addr', 'show', 'dev', veth.hostInterface)).toContain(`${veth.hostAddress}/64`);
      expect(ip('-4', '-o', 'addr', 'show', 'dev', veth.hostInterface).trim()).toBe('');
      expect(ip('-n', name, '-6', '-o', 'addr', 'show', 'dev', veth.nsInterface)).toContain(`${veth.nsAddress}/64`);
      expect(ip('-n', name, '-4', '-o', 'addr', 'show').trim()).toBe('');
      // Deleting only the namespace would remove the pair too, but asynchronously (the kernel frees the namespace
      // later): cleanup deletes the pair itself.
      deleteVeth(veth);
      expect(ip('-o', 'link', 'show')).not.toContain(veth.hostInterface);
    } finally {
      deleteNetns(name);
    }
  });

  it('knows whether this process may create namespaces (root with iproute2 on Linux)', () => {
    const able = process.platform === 'linux' && process.getuid?.() === 0 && which('ip') !== undefined;
    expect(reason === undefined).toBe(able);
    if (!able) expect(reason).toMatch(/root|iproute2|Linux/);
  });
});
