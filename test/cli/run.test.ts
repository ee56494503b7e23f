/**
 * `gardener-ipv6 run` with a wrong flag: exit 2 and one line on stderr naming the flag, before anything starts (the
 * API server of its kubeconfig never sees a connection, no port is taken).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../src/system/net.js';
import { projectRoot } from '../../src/system/project.js';
import { RUN_FOLDER_PREFIX } from '../../src/system/run-folder.js';
import { cli, tempFile } from '../support/cli.js';

/** A TCP server standing in for the API server: it only counts who connects. */
let apiServer: Server;
let connections = 0;
let kubeconfig: string;
/** A port something listens on. */
let busy: Server;
let busyPort: number;
let emptyDir: string;
let dir: string;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen({ host: '::1', port: 0 }, () => resolve((server.address() as { port: number }).port)),
  );
}

/** A kubeconfig for a server on [::1] at `port` (TLS unchecked, a token). */
function kubeconfigFor(port: number): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://[::1]:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`;
}

beforeAll(async () => {
  apiServer = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  const port = await listen(apiServer);
  // Not tempFile(): this runs in a hook, where its cleanup would not be registered.
  dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-run-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(port));
  busy = createServer();
  busyPort = await listen(busy);
  emptyDir = join(dir, 'certs');
  mkdirSync(emptyDir);
});

afterAll(() => {
  apiServer.close();
  busy.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Free ports everywhere, so that only the flag under test is wrong. */
const base = () => ['run', '--kubeconfig', kubeconfig, '--webhook-port', '0', '--health-port', '0'];

/** The real command line in its own process: what a user sees, stack traces included. */
function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot(), 'bin', 'gardener-ipv6.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // A run that passed its checks would run until a signal: that is a failure here.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`run did not exit within 40s:\n${stderr}`));
    }, 40_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A Seed whose services range is of the wrong family (the webhook refuses it). */
const SEED_YAML =
  'apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n  name: dual\nspec:\n  provider:\n    type: local\n    region: local\n  networks:\n    nodes: fd00:10::/64\n    pods: fd00:10:1::/56\n    services: 10.2.0.0/16\n    ipFamilies: [IPv6]\n';

describe('gardener-ipv6 run: usage errors', () => {
  it.each([
    [
      'a missing TSIG secret file',
      (): string[] => ['--dns-tsig-key-name', 'gardener', '--dns-tsig-secret-file', '/nonexistent/tsig'],
      /^error: --dns-tsig-secret-file \/nonexistent\/tsig: cannot read it \(ENOENT\)$/,
    ],
    [
      'a TSIG secret that is not base64',
      () => ['--dns-tsig-key-name', 'gardener', '--dns-tsig-secret-file', tempFile('tsig', 'not base64!\n')],
      /^error: --dns-tsig-secret-file \S+: not a base64 secret/,
    ],
    [
      'a TSIG key name without its secret',
      () => ['--dns-tsig-key-name', 'gardener'],
      /^error: --dns-tsig-key-name and --dns-tsig-secret-file go together/,
    ],
    [
      'a garden kubeconfig with the garden components',
      () => ['--garden-kubeconfig', kubeconfig, '--seed-name', 'dual'],
      /^error: --garden-kubeconfig: admission and scheduler run in the garden \(leave them out of --components\)$/,
    ],
    [
      'a garden kubeconfig without the seed it serves',
      () => ['--garden-kubeconfig', kubeconfig, '--components', 'gardenlet,network,dns'],
      /^error: --garden-kubeconfig needs --seed-name \(or --seed-config\)$/,
    ],
    [
      'a garden kubeconfig that is missing',
      () => ['--garden-kubeconfig', '/nonexistent/garden', '--components', 'gardenlet', '--seed-name', 'dual'],
      /^error: --garden-kubeconfig: cannot load the kubeconfig \/nonexistent\/garden: /,
    ],
    [
      'an unknown log level',
      () => ['--log-level', 'verbose'],
      /^error: --log-level "verbose": want one of trace, debug, info, warn, error, fatal, silent$/,
    ],
    [
      'a webhook host that is no address of this host',
      () => ['--webhook-host', 'fd00:dead::1'],
      /^error: --webhook-host fd00:dead::1: no such address on this host$/,
    ],
    [
      'a webhook host that is a name',
      () => ['--webhook-host', 'localhost'],
      /^error: --webhook-host "localhost": not an IP address/,
    ],
    [
      'a webhook host in brackets',
      () => ['--webhook-host', '[::1]'],
      /^error: --webhook-host "\[::1\]": not an IP address/,
    ],
    [
      'a webhook port in use',
      () => ['--webhook-host', '::1', '--webhook-port', String(busyPort)],
      /^error: --webhook-port \d+: \[::1\]:\d+ is already in use$/,
    ],
    [
      'a health host that is no address of this host',
      () => ['--health-host', '192.0.2.1'],
      /^error: --health-host 192\.0\.2\.1: no such address on this host$/,
    ],
    [
      'a webhook advertise host that is a name',
      () => ['--webhook-advertise-host', 'example.org'],
      /^error: --webhook-advertise-host "example\.org": not an IP address/,
    ],
    [
      'a webhook cert dir without certificates',
      () => ['--webhook-cert-dir', emptyDir],
      /^error: --webhook-cert-dir \S+\/tls\.crt: cannot read it \(ENOENT\); .*tls\.key.*ca\.crt/,
    ],
    ['a bad DNS server', () => ['--dns-server', '[::1:53'], /^error: --dns-server: invalid DNS server "\[::1:53"/],
    [
      'a seed name that is no DNS name',
      () => ['--seed-name', 'Seed_1'],
      /^error: --seed-name "Seed_1": a lowercase RFC 1123 subdomain/,
    ],
    [
      'a seed configuration without the gardenlet',
      () => ['--components', 'network', '--seed-config', tempFile('seed.yaml', SEED_YAML)],
      /^error: --seed-config: the gardenlet registers the Seed \(add gardenlet to --components\)$/,
    ],
    [
      'a seed configuration that is not YAML',
      () => ['--components', 'gardenlet', '--seed-config', tempFile('seed.yaml', 'kind: [Seed\n')],
      /^error: --seed-config \S+: not YAML/,
    ],
    [
      'a seed configuration that is no Seed',
      () => [
        '--components',
        'gardenlet',
        '--seed-config',
        tempFile('seed.yaml', SEED_YAML.replace('kind: Seed', 'kind: CloudProfile')),
      ],
      /^error: --seed-config \S+: a CloudProfile, not a Seed of core\.gardener\.cloud\/v1beta1$/,
    ],
    [
      'a seed configuration that the webhook would refuse, with its fields',
      () => [
        '--components',
        'gardenlet',
        '--feature-gates',
        'IPv6SingleStack=true',
        '--seed-config',
        tempFile('seed.yaml', SEED_YAML),
      ],
      /^error: --seed-config \S+: the Seed is invalid: spec\.networks\.services: .*IPv6/,
    ],
    [
      'a seed configuration of another seed than --seed-name',
      () => [
        '--components',
        'gardenlet',
        '--feature-gates',
        'IPv6SingleStack=true',
        '--seed-name',
        'other',
        '--seed-config',
        tempFile('seed.yaml', SEED_YAML.replace('10.2.0.0/16', 'fd00:10:2::/112')),
      ],
      /^error: --seed-config \S+: the Seed is named "dual", --seed-name other$/,
    ],
    [
      'a lease namespace that is no DNS label',
      () => ['--leader-election-namespace', 'gar.den'],
      /^error: --leader-election-namespace "gar\.den": a lowercase RFC 1123 label/,
    ],
    [
      'a domain that is no DNS name',
      () => ['--domain', 'local..gardener.cloud'],
      /^error: --domain "local\.\.gardener\.cloud": a lowercase RFC 1123 subdomain/,
    ],
    [
      'a missing kubeconfig',
      () => ['--kubeconfig', '/nonexistent/kubeconfig'],
      /^error: cannot load the kubeconfig \/nonexistent\/kubeconfig/,
    ],
    [
      'an unknown control plane workloads mode',
      () => ['--control-plane-workloads', 'yes'],
      /^error: --control-plane-workloads "yes": one of auto, true, false$/,
    ],
    [
      'a load-balancer network that is no CIDR',
      () => ['--load-balancer-networks', 'fd00:ff::'],
      /^error: --load-balancer-networks: "fd00:ff::" is not a CIDR$/,
    ],
    [
      'two load-balancer networks of one family',
      () => ['--load-balancer-networks', 'fd00:ff::/64,fd00:fe::/64'],
      /^error: --load-balancer-networks: two IPv6 networks \(fd00:ff::\/64, fd00:fe::\/64\)$/,
    ],
    [
      'a load-balancer network too small for a pool',
      () => ['--load-balancer-networks', '10.0.0.0/31'],
      /^error: --load-balancer-networks: 10\.0\.0\.0\/31 is too small for a pool$/,
    ],
    [
      'two bad flags, in one line',
      () => ['--log-level', 'loud', '--health-host', 'nowhere'],
      /^error: --log-level "loud": .*; --health-host "nowhere": not an IP address/,
    ],
  ])('%s: exit 2, one line, nothing started', async (_, args, message) => {
    const before = connections;
    const run = await cli([...base(), ...args()]);
    expect(run.stderr).toMatch(/^[^\n]*\n$/);
    expect(run.stderr.trimEnd()).toMatch(message);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(connections).toBe(before);
  });

  it('two listeners on one address and port: the second flag is named', async () => {
    const port = await freePort('::1');
    const run = await cli([
      ...base(),
      ...[
        '--webhook-host',
        '::1',
        '--webhook-port',
        String(port),
        '--health-host',
        '::1',
        '--health-port',
        String(port),
      ],
    ]);
    expect(run.stderr).toBe(`error: --health-port ${port}: [::1]:${port} is already in use\n`);
    expect(run.code).toBe(2);
  });

  // The defects as reported: run as a process, these printed a stack trace and exited 1.
  it.each([
    ['a missing TSIG secret file', ['--dns-tsig-key-name', 'gardener', '--dns-tsig-secret-file', '/nonexistent/tsig']],
    ['an unknown log level', ['--log-level', 'verbose']],
    ['an unavailable webhook host', ['--webhook-host', 'fd00:dead::1']],
  ])(
    'as a process, %s: exit 2, one line without a stack trace',
    async (_, args) => {
      const before = connections;
      const run = await spawnCli([...base(), ...args]);
      expect(run.stderr).toMatch(/^error: --[^\n]*\n$/);
      expect(run.code).toBe(2);
      expect(connections).toBe(before);
    },
    60_000,
  );
});

describe('gardener-ipv6 run: a start that fails after the flags passed', () => {
  it('an API server that drops every connection: exit 1, one error line naming the components, no stack trace, nothing left', async () => {
    const before = connections;
    // The webhook's generated certificates go here, and must not outlive the failed start.
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const run = await spawnCli([...base(), '--webhook-host', '::1', '--health-host', '::1'], {
      ...process.env,
      GARDENER_IPV6_TMPDIR: tmp,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: starting admission, gardenlet, network, dns, scheduler failed: \S[^\n]*$/m);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(connections).toBeGreaterThan(before);
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});

describe('gardener-ipv6 run: stopped while starting, and after a kill -9', () => {
  it.each([
    ['while it registers the webhooks', ['--components', 'admission'], true],
    ['while its caches sync', ['--components', 'admission', '--no-webhook-register'], true],
    ['while it asks for Nodes', ['--components', 'admission,gardenlet', '--no-webhook-register'], false],
  ])(
    'removes its own files on SIGTERM %s (exit 0), and what killed runs left',
    async (_, extra: string[], keys: boolean) => {
      // An API server that takes connections and never answers: the run stays before its caches synced.
      const held = new Set<Socket>();
      const hanging = createServer((socket) => {
        held.add(socket);
        socket.on('close', () => held.delete(socket));
      });
      const port = await listen(hanging);
      const hangingConfig = join(dir, 'kubeconfig-hanging');
      writeFileSync(hangingConfig, kubeconfigFor(port));
      const tmp = mkdtempSync(join(dir, 'tmp-stopped-'));
      // What a killed run left (its process is gone), and the folder of a run that is still alive (this test's).
      const killed = join(tmp, `${RUN_FOLDER_PREFIX}${deadPid()}`);
      mkdirSync(join(killed, 'gardener-ipv6-webhook-x'), { recursive: true });
      writeFileSync(join(killed, 'gardener-ipv6-webhook-x', 'ca.key'), 'key');
      const alive = join(tmp, `${RUN_FOLDER_PREFIX}${process.pid}`);
      mkdirSync(alive);

      const child = spawn(
        process.execPath,
        [
          join(projectRoot(), 'bin', 'gardener-ipv6.js'),
          'run',
          '--kubeconfig',
          hangingConfig,
          '--webhook-host',
          '::1',
          '--webhook-port',
          '0',
          '--health-host',
          '::1',
          '--health-port',
          '0',
          ...extra,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GARDENER_IPV6_TMPDIR: tmp } },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      try {
        const own = join(tmp, `${RUN_FOLDER_PREFIX}${child.pid}`);
        // It talks to the API server, which never answers.
        await vi.waitFor(
          () => {
            if (child.exitCode !== null) throw new Error(`run exited early (${child.exitCode}):\n${stderr}`);
            expect(held.size).toBeGreaterThan(0);
            expect(existsSync(own)).toBe(true);
            // The webhook's keys come before it registers or syncs; asking for Nodes comes first.
            if (keys) expect(filesBelow(own).some((f) => f.endsWith('ca.key'))).toBe(true);
          },
          { timeout: 30_000, interval: 50 },
        );
        expect(existsSync(killed)).toBe(false);
        expect(stderr).toContain(`removed what runs that were killed left: ${killed}`);

        child.kill('SIGTERM');
        const { code, signal } = await exit;
        expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
        expect(stderr).not.toMatch(/^\s+at /m);
        expect(readdirSync(tmp)).toEqual([basename(alive)]);
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGKILL');
          await exit;
        }
        for (const socket of held) socket.destroy();
        await new Promise((resolve) => hanging.close(resolve));
      }
    },
    60_000,
  );
});

/** Every file below `dir` (none when it does not exist). */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());
}
