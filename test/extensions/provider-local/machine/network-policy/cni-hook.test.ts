/**
 * The CNI hook as containerd runs it: the plugin script executed by node with CNI's environment and stdin, talking
 * over a real Unix socket to the hook's server, whose target stands in for the enforcer.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  networkPolicyCNIPluginScript,
  parseHookRequest,
  serveNetworkPolicyHook,
  type AnnouncementTarget,
} from '../../../../../src/extensions/provider-local/machine/network-policy/cni-hook.js';
import { runCNIPlugin } from '../../../../support/cni-plugin.js';

/** The bridge plugin's result: the bridge, the host end of the pod's veth, the pod's end in its sandbox. */
const PREV_RESULT = {
  cniVersion: '1.0.0',
  interfaces: [
    { name: 'cni0', mac: '2a:00:00:00:00:01' },
    { name: 'veth1a2b3c4d', mac: '2a:00:00:00:00:02' },
    { name: 'eth0', mac: '2A:00:00:00:00:03', sandbox: '/var/run/netns/x' },
  ],
  ips: [
    { address: 'fd00:10:3:1::5/64', gateway: 'fd00:10:3:1::1', interface: 2 },
    { address: '10.3.1.5/24', gateway: '10.3.1.1', interface: 2 },
  ],
};

let dir: string;
let plugin: string;
let socket: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-cni-hook-'));
  plugin = join(dir, 'gardener-ipv6-network-policy');
  socket = join(dir, 'run', 'network-policy.sock');
  writeFileSync(plugin, networkPolicyCNIPluginScript(process.execPath), { mode: 0o755 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the plugin as a CNI runtime does: the command in the environment, the network configuration on stdin. */
function runPlugin(
  command: string,
  conf: Record<string, unknown>,
  args = 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web',
) {
  return runCNIPlugin(
    plugin,
    command,
    { cniVersion: '1.0.0', name: 'gardener-ipv6', socket, ...conf },
    {
      args,
      containerID: 'c1',
    },
  );
}

/** A stand-in enforcer: records what it is told and puts the rules in force when the test says so. */
function recordingTarget() {
  const calls: string[] = [];
  let release: () => void = () => {};
  const inForce = new Promise<void>((resolve) => (release = resolve));
  const target: AnnouncementTarget = {
    announce: async (namespace, name, ips, port) => {
      calls.push(`ADD ${namespace}/${name} ${ips.join(',')} ${port?.hostInterface} ${port?.mac}`);
      await inForce;
    },
    forget: (namespace, name, port) => void calls.push(`DEL ${namespace}/${name} ${port?.hostInterface}`),
  };
  return { target, calls, release };
}

describe('the NetworkPolicy CNI hook', () => {
  it("announces the pod's addresses and passes the previous result on only once the rules are in force", async () => {
    const { target, calls, release } = recordingTarget();
    const close = await serveNetworkPolicyHook(socket, target, () => {});
    try {
      let done = false;
      const add = runPlugin('ADD', { prevResult: PREV_RESULT }).then((r) => ((done = true), r));
      // The addresses and the pod's port: the host end of its veth, the MAC of its own end.
      await expect
        .poll(() => calls, { timeout: 10_000 })
        .toEqual(['ADD default/web fd00:10:3:1::5,10.3.1.5 veth1a2b3c4d 2a:00:00:00:00:03']);
      expect(done).toBe(false);
      release();
      const result = await add;
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(PREV_RESULT);
      const del = await runPlugin('DEL', { prevResult: PREV_RESULT });
      expect(del.code).toBe(0);
      expect(calls).toContain('DEL default/web veth1a2b3c4d');
      // A DEL without the cached result: the enforcer knows the port by the pod.
      await runPlugin('DEL', {});
      expect(calls).toContain('DEL default/web undefined');
    } finally {
      await close();
    }
  });

  it('fails ADD with a CNI error when the rules are not in force in time, or nobody serves the socket', async () => {
    const { target } = recordingTarget();
    const close = await serveNetworkPolicyHook(socket, target, () => {});
    try {
      const late = await runPlugin('ADD', { prevResult: PREV_RESULT, timeoutSeconds: 1 });
      expect(late.code).toBe(1);
      expect(JSON.parse(late.stdout)).toMatchObject({
        code: 999,
        msg: expect.stringMatching(/rules of default\/web were not in force after 1s/),
      });
    } finally {
      await close();
    }
    const unreachable = await runPlugin('ADD', { prevResult: PREV_RESULT });
    expect(unreachable.code).toBe(1);
    expect(JSON.parse(unreachable.stdout).msg).toMatch(/enforcer is not reachable/);
    // DEL succeeds whatever: a runtime must be able to remove a sandbox.
    expect((await runPlugin('DEL', {})).code).toBe(0);
  });

  it('answers VERSION, and passes ADD through for a sandbox that is no pod', async () => {
    const version = await runPlugin('VERSION', {});
    expect(JSON.parse(version.stdout).supportedVersions).toContain('1.0.0');
    const noPod = await runPlugin('ADD', { prevResult: PREV_RESULT }, '');
    expect(noPod.code).toBe(0);
    expect(JSON.parse(noPod.stdout)).toEqual(PREV_RESULT);
  });

  it("refuses requests that are not the hook's, naming what is wrong", () => {
    expect(parseHookRequest('{')).toEqual({ error: 'the request is not JSON' });
    expect(parseHookRequest('null')).toEqual({ error: 'the request is not an object' });
    expect(parseHookRequest('{"command":"CHECK","namespace":"a","name":"b"}')).toEqual({
      error: 'command must be ADD or DEL',
    });
    expect(parseHookRequest('{"command":"ADD","namespace":"","name":"b"}')).toEqual({
      error: 'namespace and name are required',
    });
    expect(parseHookRequest('{"command":"ADD","namespace":"a","name":"b","ips":[1]}')).toEqual({
      error: 'ips must be strings',
    });
    expect(parseHookRequest('{"command":"DEL","namespace":"a","name":"b"}')).toEqual({
      command: 'DEL',
      namespace: 'a',
      name: 'b',
      ips: [],
    });
    const withPort = (port: unknown) =>
      parseHookRequest(JSON.stringify({ command: 'ADD', namespace: 'a', name: 'b', port }));
    expect(withPort({ hostInterface: 'veth1', mac: '0A:00:00:00:00:01' })).toEqual({
      command: 'ADD',
      namespace: 'a',
      name: 'b',
      ips: [],
      port: { hostInterface: 'veth1', mac: '0a:00:00:00:00:01' },
    });
    // Names end up in nft scripts: only what an interface name and a MAC address can be.
    expect(withPort('veth1')).toEqual({ error: 'port must be an object' });
    expect(withPort({ hostInterface: 'veth1" drop;', mac: '0a:00:00:00:00:01' })).toEqual({
      error: 'port.hostInterface must be an interface name',
    });
    expect(withPort({ hostInterface: 'a-very-long-interface', mac: '0a:00:00:00:00:01' })).toEqual({
      error: 'port.hostInterface must be an interface name',
    });
    expect(withPort({ hostInterface: 'veth1', mac: '0a:00:00:00:00' })).toEqual({
      error: 'port.mac must be a MAC address (six hexadecimal pairs)',
    });
  });
});
