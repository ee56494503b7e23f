/**
 * The chart's DNS server, run for real: the container's command with the rendered named.conf, zone and TSIG key
 * (paths moved into a temporary folder, a free port instead of 5353), as the pod's non-root user when the test runs
 * as root, then the DNS extension's own RFC 2136 client
 * publishes an AAAA record signed with the chart's key, and a resolver reads it back.
 */
import { execFileSync } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DNSUpdateClient, DNSUpdateError } from '../../src/extensions/dns/rfc2136.js';
import { tsigKey } from '../../src/extensions/dns/tsig.js';
import { answersSOA } from '../../src/localenv/bind9.js';
import { freePort } from '../../src/system/net.js';
import { startProcess, which, type ManagedProcess } from '../../src/system/process.js';
import { waitFor } from '../support/wait.js';
import { helmBinary, named, renderChart, type K8sObject, type Preset } from './helm.js';

const NAMED = which('named');
const ZONE = 'local.gardener.cloud';

interface Pod {
  spec: {
    template: {
      spec: { securityContext: { runAsUser: number; runAsGroup: number }; containers: { command: string[] }[] };
    };
  };
}

interface ChartDNSServer {
  server: string;
  proc: ManagedProcess;
  /** The user named runs as, when the test could switch to the pod's. */
  podUser?: number;
}

/** The DNS server of the rendered chart, started from a temporary folder. */
async function startChartDNSServer(objects: K8sObject[], dir: string): Promise<ChartDNSServer> {
  const config = named<{ data: Record<string, string> }>(objects, 'ConfigMap', 'gardener-ipv6-dns-server').data;
  const tsig = named<{ data: Record<string, string> }>(objects, 'Secret', 'gardener-ipv6-dns-tsig').data;
  const pod = named<Pod>(objects, 'Deployment', 'gardener-ipv6-dns-server').spec.template.spec;
  const command = pod.containers[0]!.command;
  const port = await freePort('::1');
  const moved = (text: string) =>
    text
      .replaceAll('/var/lib/named', join(dir, 'data'))
      .replaceAll('/etc/named/config', join(dir, 'config'))
      .replaceAll('/etc/named/tsig', join(dir, 'tsig'))
      .replaceAll('port 5353', `port ${port}`);
  for (const sub of ['data', 'config', 'tsig']) mkdirSync(join(dir, sub));
  for (const [key, value] of Object.entries(config)) writeFileSync(join(dir, 'config', key), moved(value));
  writeFileSync(join(dir, 'tsig', 'named.key'), Buffer.from(tsig['named.key']!, 'base64'));
  expect(command.slice(0, 2)).toEqual(['sh', '-c']);
  // As the pod's user when we may switch to it: the data folder is the pod's writable emptyDir.
  const { runAsUser, runAsGroup } = pod.securityContext;
  const asPodUser = process.getuid?.() === 0 && which('setpriv') !== undefined;
  if (asPodUser) {
    chmodSync(dir, 0o755);
    chownSync(join(dir, 'data'), runAsUser, runAsGroup);
  }
  const shell = ['sh', '-c', moved(command[2]!)];
  const argv = asPodUser
    ? ['setpriv', `--reuid=${runAsUser}`, `--regid=${runAsGroup}`, '--clear-groups', ...shell]
    : shell;
  const proc = startProcess({
    name: 'named',
    command: argv[0]!,
    args: argv.slice(1),
    logFile: join(dir, 'named.log'),
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` },
  });
  const server = `[::1]:${port}`;
  try {
    await waitFor(
      async () => {
        if (proc.exit()) throw new Error(`named exited: ${proc.tail(20)}`);
        return answersSOA(server, `${ZONE}.`, 300);
      },
      { timeoutMs: 15_000 },
    );
  } catch (e) {
    await proc.stop(1_000);
    throw e;
  }
  return { server, proc, ...(asPodUser ? { podUser: runAsUser } : {}) };
}

async function aaaa(server: string, name: string): Promise<string[] | string> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([server]);
  try {
    return await resolver.resolve6(name);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

describe.skipIf(NAMED === undefined)('the chart DNS server (BIND9)', () => {
  beforeAll(async () => {
    await helmBinary();
  }, 20 * 60_000);

  describe.each(['ipv6', 'default'] as Preset[])('with the %s values', (preset) => {
    let dir: string;
    let objects: K8sObject[];
    let dns: ChartDNSServer;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-chart-named-'));
      objects = renderChart(preset);
      dns = await startChartDNSServer(objects, dir);
    });
    afterAll(async () => {
      await dns?.proc.stop(2_000);
      rmSync(dir, { recursive: true, force: true });
    });

    it('accepts updates signed with the chart TSIG key and answers them', async () => {
      const secret = named<{ data: Record<string, string> }>(objects, 'Secret', 'gardener-ipv6-dns-tsig').data;
      const key = tsigKey('gardener-ipv6', 'hmac-sha256', Buffer.from(secret.secret!, 'base64').toString());
      const client = new DNSUpdateClient({ server: dns.server, tsig: key });
      const name = `api.local.local.external.${ZONE}`;
      await client.replaceRRset({ zone: ZONE, name, type: 'AAAA', ttl: 60, values: ['fd00:10::1'] });
      expect(await aaaa(dns.server, name)).toEqual(['fd00:10::1']);
    });

    it('refuses unsigned updates', async () => {
      const client = new DNSUpdateClient({ server: dns.server });
      await expect(
        client.replaceRRset({ zone: ZONE, name: `evil.${ZONE}`, type: 'AAAA', ttl: 60, values: ['fd00::66'] }),
      ).rejects.toBeInstanceOf(DNSUpdateError);
    });

    it('refuses zone transfers (AXFR), even to the update key', () => {
      const secret = named<{ data: Record<string, string> }>(objects, 'Secret', 'gardener-ipv6-dns-tsig').data;
      const port = /:(\d+)$/.exec(dns.server)![1]!;
      for (const key of [[], ['-y', `hmac-sha256:gardener-ipv6:${Buffer.from(secret.secret!, 'base64').toString()}`]]) {
        const out = execFileSync('dig', ['@::1', '-p', port, ...key, 'AXFR', ZONE, '+time=2', '+tries=1'], {
          encoding: 'utf8',
        });
        expect(out).toContain('; Transfer failed.');
        expect(out).not.toMatch(/\sSOA\s/);
      }
    });

    it(`listens on IPv6${preset === 'ipv6' ? ' only' : ' (and IPv4)'}`, () => {
      const log = dns.proc.tail(500);
      expect(log).toMatch(/listening on IPv6 interface/);
      if (preset === 'ipv6') expect(log).not.toMatch(/listening on IPv4 interface/);
    });

    it.skipIf(process.getuid?.() !== 0)('runs as the pod user, not root', () => {
      const status = readFileSync(`/proc/${dns.proc.pid}/status`, 'utf8');
      expect(dns.podUser).toBe(65532);
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe('65532');
    });
  });
});
