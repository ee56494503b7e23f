/**
 * Where the tests run: inside the IPv6-only network namespace (`npm test` as root), IPv4 does not exist at all while
 * the API server works; on the host, the API server is at least IPv6-only itself.
 */
import { connect, createServer, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { VersionApi } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { pinnedVersions } from '../../src/localenv/binaries.js';
import { NETNS_ENV } from '../../src/system/netns.js';
import { kubeConfig } from '../support/kube.js';

/** Resolves with the error code of a TCP connection attempt, or 'connected'. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

function tryListen(host: string): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen(0, host, () => server.close(() => resolve('listening')));
  });
}

describe('IPv6-only environment', () => {
  const server = new URL(inject('apiServerURL'));
  const port = Number(server.port);

  it('serves the API on an IPv6 loopback address, not on 127.0.0.1', async () => {
    expect(server.protocol).toBe('https:');
    expect(server.hostname).toBe('[::1]');
    expect(isIPv6(server.hostname.slice(1, -1))).toBe(true);

    const version = await kubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toBe(pinnedVersions().KUBERNETES_VERSION);

    // Nothing answers on the IPv4 loopback at the API server's port: refused on the host, no route in the namespace.
    expect(['ECONNREFUSED', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EHOSTUNREACH']).toContain(
      await tryConnect('127.0.0.1', port),
    );
  });

  it('has no IPv4 at all inside the test namespace (or says that it runs on the host)', async () => {
    const netns = inject('netns');
    expect(process.env[NETNS_ENV] ?? '').toBe(netns);
    if (netns !== '') {
      // Loopback has ::1 only. (Other tests' environments add bridges of their own meanwhile, some with the IPv4
      // gateway of an IPv4 load-balancer or node network: those are theirs, not the namespace's.)
      const loopback = networkInterfaces().lo ?? [];
      expect(loopback.map((a) => a.address)).toEqual(['::1']);
      expect(await tryConnect('127.0.0.1', port)).toMatch(/^(ENETUNREACH|EADDRNOTAVAIL|EHOSTUNREACH)$/);
      expect(await tryListen('127.0.0.1')).toBe('EADDRNOTAVAIL');
      expect(await tryListen('::1')).toBe('listening');
    } else {
      // On the host the environment is whatever it is; the API server itself is still IPv6 loopback only.
      expect(server.host).toMatch(/^\[::1\]:\d+$/);
      expect(await tryListen('::1')).toBe('listening');
    }
  });
});
