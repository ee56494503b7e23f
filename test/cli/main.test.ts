import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeControlCharacters } from '../../src/cli/io.js';
import {
  DEFAULT_MAX_MACHINES_PER_POOL,
  DEFAULT_MAX_MACHINES_PER_SHOOT,
  DEFAULT_MAX_MACHINES,
} from '../../src/extensions/provider-local/admission.js';
import { cli, tempFile } from '../support/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('gardener-ipv6', () => {
  it.each([['--version'], ['-V']])('%s prints the version and the bundled components', async (flag) => {
    const pinned = Object.fromEntries(
      readFileSync(join(ROOT, 'hack', 'versions.env'), 'utf8')
        .split('\n')
        .map((l) => /^([A-Z_]+)=(\S+)$/.exec(l))
        .filter((m) => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );
    expect(await cli([flag])).toEqual({
      code: 0,
      stdout:
        [
          `gardener-ipv6 ${version}`,
          `kubernetes ${pinned.KUBERNETES_VERSION}`,
          `etcd ${pinned.ETCD_VERSION}`,
          `containerd ${pinned.CONTAINERD_VERSION}`,
          `runc ${pinned.RUNC_VERSION}`,
          `cni-plugins ${pinned.CNI_PLUGINS_VERSION}`,
          `coredns ${pinned.COREDNS_VERSION}`,
          `helm ${pinned.HELM_VERSION}`,
        ].join('\n') + '\n',
      stderr: '',
    });
  });

  it('--help lists every command', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['validate', 'default', 'render', 'up', 'run']) expect(run.stdout).toContain(command);
  });

  it.each([['abc'], ['-1'], ['11'], ['2.5']])('up --seed-nodes %s: exit 2 and one line, nothing started', async (n) => {
    const run = await cli(['up', '--seed-nodes', n]);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: --seed-nodes ${JSON.stringify(n)}: a number from 0 to 10\n`,
    });
  });

  it.each([
    ['ipv4', 'unknown seed "ipv4": one of ipv6, dual-stack, dual-stack-ipv6'],
    ['', 'a comma-separated list of ipv6, dual-stack, dual-stack-ipv6'],
    ['ipv6,ipv6', 'ipv6 is listed twice'],
  ])('up --seeds %s: exit 2 and one line, nothing started', async (list, message) => {
    expect(await cli(['up', '--seeds', list])).toEqual({ code: 2, stdout: '', stderr: `error: --seeds: ${message}\n` });
  });

  it.each([
    ['up', '--max-machines-per-pool', '0'],
    ['up', '--max-machines-per-shoot', 'many'],
    ['run', '--max-machines-per-pool', '-3'],
    ['run', '--max-machines-per-shoot', '2.5'],
    ['up', '--max-machines', '0'],
    ['run', '--max-machines', '1000000'],
    ['run', '--max-machines', 'all'],
  ])('%s %s %s: exit 2 and one line, nothing started', async (command, flag, value) => {
    expect(await cli([command, flag, value])).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: ${flag} ${JSON.stringify(value)}: a whole number from 1 to 999999\n`,
    });
  });

  it.each(['up', 'run'])('%s --help names the machine limits with their defaults', async (command) => {
    const help = (await cli([command, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      `--max-machines-per-pool <n> the most machines (minimum, maximum) of a shoot worker pool the webhook admits ` +
        `(default ${DEFAULT_MAX_MACHINES_PER_POOL})`,
    );
    expect(help).toContain(
      `--max-machines-per-shoot <n> the most machines of a shoot (its pools' maximums together) the webhook admits ` +
        `(default ${DEFAULT_MAX_MACHINES_PER_SHOOT})`,
    );
    expect(help).toContain(
      `--max-machines <n> the most machines of all shoots together the webhook admits (default ${DEFAULT_MAX_MACHINES})`,
    );
  });

  it('up runs shoots on the seed Nodes only: without them (--seed-nodes 0, --no-machines) they are objects only', async () => {
    const run = await cli(['up', '--help']);
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--seed-nodes <n> how many Nodes the seed cluster gets (root; 0: shoots are objects only');
    expect(help).toContain('--no-machines give the seed no Nodes: the shoots are objects only');
    expect(help).toContain(
      "--seeds <list> seed clusters, the garden's own first: ipv6, dual-stack (with an IPv4 shoot to migrate), " +
        'dual-stack-ipv6 (IPv6 first, with an IPv6 shoot to migrate), or several (each further one a cluster with ' +
        'its own gardenlet) (default: "ipv6")',
    );
    expect(help).not.toContain('control-plane-workloads');
  });

  it('machine and overlay-peer name what they lack (exit 2) before they touch anything', async () => {
    const saved = {
      NODE_NAME: process.env.NODE_NAME,
      POD_IPS: process.env.POD_IPS,
      POD_NAME: process.env.POD_NAME,
      NODE_CIDRS: process.env.NODE_CIDRS,
    };
    delete process.env.NODE_NAME;
    delete process.env.POD_IPS;
    delete process.env.POD_NAME;
    delete process.env.NODE_CIDRS;
    try {
      expect(await cli(['machine'])).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: --node-name (or $NODE_NAME) is required\n',
      });
      expect(await cli(['machine', '--node-name', 'm-0'])).toMatchObject({
        code: 2,
        stderr: 'error: --pod-ips (or $POD_IPS) is required\n',
      });
      expect(await cli(['machine', '--node-name', 'm-0', '--pod-ips', 'fd00::5'])).toMatchObject({
        code: 2,
        stderr: 'error: --node-cidrs (or $NODE_CIDRS) is required\n',
      });
      expect(
        await cli([
          'machine',
          '--node-name',
          'm-0',
          '--pod-ips',
          'fd00::5',
          '--node-cidrs',
          'fd00:1::/64',
          '--first-machine-index',
          '-1',
        ]),
      ).toMatchObject({ code: 2, stderr: 'error: --first-machine-index: "-1" is not a non-negative integer\n' });
      const peer = await cli(['overlay-peer', '--kubeconfig', '/nonexistent']);
      expect(peer.code).toBe(2);
      expect(peer.stderr).toContain('$POD_NAME and $POD_IPS are required');
      process.env.POD_NAME = 'kube-apiserver-0';
      process.env.POD_IPS = 'fd00::5';
      expect(await cli(['overlay-peer', '--kubeconfig', '/nonexistent', '--underlay-family', 'IPv5'])).toMatchObject({
        code: 2,
        stderr: 'error: --underlay-family: "IPv5" is neither IPv4 nor IPv6\n',
      });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v !== undefined) process.env[k] = v;
        else delete process.env[k];
      }
    }
  });

  it('escapes control bytes of the input in its messages (a YAML error frame echoes the line)', async () => {
    const file = tempFile('bad.yaml', 'kind: \u001b[2J\u009bShoot: [\r\n');
    const run = await cli(['validate', '-f', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('kind: \\u001b[2J\\u009bShoot: [');
    expect(escapeControlCharacters(run.stderr)).toBe(run.stderr);
  });

  it('escapes them in names too', async () => {
    const file = tempFile(
      's.yaml',
      'apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: "a\\bb"}\nspec: {}\n',
    );
    const run = await cli(['validate', '-f', file]);
    expect(run.stdout).toContain('Seed.core.gardener.cloud "a\\bb" is invalid');
    expect(run.stdout).not.toContain('\b');
  });

  it.each([
    ['tab and newline stay', 'a\tb\nc', 'a\tb\nc'],
    ['escape, bell, carriage return, DEL, C1', '\u001b]0;x\u0007\r\u007f\u0085', '\\u001b]0;x\\u0007\\r\\u007f\\u0085'],
    ['printable unicode stays', 'fd00::1 ✓ ü', 'fd00::1 ✓ ü'],
  ])('escapeControlCharacters: %s', (_, input, expected) => {
    expect(escapeControlCharacters(input)).toBe(expected);
  });
});
