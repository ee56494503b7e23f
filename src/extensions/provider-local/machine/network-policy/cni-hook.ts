/**
 * The CNI hook of the NetworkPolicy enforcer: a chained CNI plugin after the bridge plugin that tells the machine's
 * enforcer a new pod's addresses and its port on the bridge (the host end of its veth and its MAC, from the bridge
 * plugin's result), and returns only once the port holds the pod to its addresses (anti-spoofing.ts) and a ruleset
 * with them is in force. With the enforcer's
 * fail-closed rules (rules.ts), a pod's first packets are subject to its policies, as with calico, whose CNI plugin
 * creates the pod's endpoint before the containers start; without the hook they would pass until the kubelet posts
 * the pod's addresses and the enforcer sees them.
 *
 * The plugin is a small script run by the machine's node (no dependencies: it runs inside the machine's mount
 * namespace, where the agent's bundle is not); it talks to the enforcer over a Unix socket in the machine's `/run`,
 * one JSON request and one JSON answer per connection. ADD fails when the enforcer doesn't answer in time (the
 * kubelet retries the sandbox); DEL always succeeds.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { invalidPodPort, type BridgePort } from './anti-spoofing.js';

/** The plugin's `type` in the CNI configuration and its file name in the CNI bin dir. */
export const NETWORK_POLICY_CNI_PLUGIN = 'gardener-ipv6-network-policy';
/** The enforcer's socket, as seen inside the machine. */
export const NETWORK_POLICY_SOCKET = '/run/gardener-ipv6/network-policy.sock';
/** How long ADD waits for the rules. */
export const NETWORK_POLICY_HOOK_TIMEOUT_SECONDS = 20;

/** The largest request the enforcer reads: a pod's namespace, name and a few addresses. */
const MAX_REQUEST_BYTES = 4096;

/** The plugin's CNI configuration entry. */
export function networkPolicyCNIPlugin(): Record<string, unknown> {
  return {
    type: NETWORK_POLICY_CNI_PLUGIN,
    socket: NETWORK_POLICY_SOCKET,
    timeoutSeconds: NETWORK_POLICY_HOOK_TIMEOUT_SECONDS,
  };
}

/** The plugin: a CommonJS script for `node` at `nodePath` (its first line). */
export function networkPolicyCNIPluginScript(nodePath: string): string {
  return `#!${nodePath}
'use strict';
// ${NETWORK_POLICY_CNI_PLUGIN}: announces a pod's addresses to the machine's NetworkPolicy enforcer (CNI chained plugin).
const net = require('node:net');
const command = process.env.CNI_COMMAND || '';
const out = (value) => process.stdout.write(JSON.stringify(value));
const fail = (version, msg) => {
  out({ cniVersion: version, code: 999, msg: '${NETWORK_POLICY_CNI_PLUGIN}: ' + msg });
  process.exit(1);
};
let input = '';
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  let conf;
  try {
    conf = JSON.parse(input || '{}');
  } catch (e) {
    return fail('1.0.0', 'the network configuration is not JSON: ' + e.message);
  }
  const version = conf.cniVersion || '1.0.0';
  if (command === 'VERSION') return out({ cniVersion: version, supportedVersions: ['0.4.0', '1.0.0', '1.1.0'] });
  if (command !== 'ADD' && command !== 'DEL') return;
  const args = {};
  for (const pair of (process.env.CNI_ARGS || '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0) args[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const namespace = args.K8S_POD_NAMESPACE;
  const name = args.K8S_POD_NAME;
  const result = conf.prevResult || { cniVersion: version };
  if (!namespace || !name) return command === 'ADD' ? out(result) : undefined;
  const ips = ((result && result.ips) || []).map((ip) => String(ip.address).split('/')[0]);
  // The bridge plugin's interfaces: the bridge, the host end of the pod's veth, the pod's end (in its sandbox).
  const interfaces = (result && result.interfaces) || [];
  const own = interfaces.find((i) => i && i.sandbox);
  const host = interfaces.find((i, index) => index > 0 && i && !i.sandbox);
  const port = own && host ? { hostInterface: String(host.name), mac: String(own.mac) } : undefined;
  const timeoutMs = (Number(conf.timeoutSeconds) || ${NETWORK_POLICY_HOOK_TIMEOUT_SECONDS}) * 1000;
  const socket = net.connect(conf.socket || '${NETWORK_POLICY_SOCKET}');
  let answer = '';
  const timer = setTimeout(() => {
    socket.destroy();
    if (command === 'ADD') fail(version, 'the NetworkPolicy rules of ' + namespace + '/' + name + ' were not in force after ' + timeoutMs / 1000 + 's');
  }, timeoutMs);
  socket.on('connect', () => socket.end(JSON.stringify({ command, namespace, name, ips, port }) + '\\n'));
  socket.on('data', (chunk) => (answer += chunk));
  socket.on('error', (e) => {
    clearTimeout(timer);
    if (command === 'ADD') fail(version, 'the NetworkPolicy enforcer is not reachable: ' + e.message);
  });
  socket.on('close', () => {
    clearTimeout(timer);
    if (command !== 'ADD') return;
    let reply;
    try {
      reply = JSON.parse(answer);
    } catch {
      return fail(version, 'the NetworkPolicy enforcer gave no answer');
    }
    if (reply.error) return fail(version, reply.error);
    out(result);
  });
});
`;
}

/** What the hook asks of the enforcer. */
export interface AnnouncementTarget {
  announce(namespace: string, name: string, ips: readonly string[], port?: BridgePort): Promise<void>;
  forget(namespace: string, name: string, port?: BridgePort): void;
}

interface HookRequest {
  command: 'ADD' | 'DEL';
  namespace: string;
  name: string;
  ips: string[];
  port?: BridgePort;
}

/** A request, or why it isn't one. */
export function parseHookRequest(text: string): HookRequest | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'the request is not JSON' };
  }
  const r = value as Partial<HookRequest> | null;
  if (r === null || typeof r !== 'object') return { error: 'the request is not an object' };
  if (r.command !== 'ADD' && r.command !== 'DEL') return { error: 'command must be ADD or DEL' };
  if (typeof r.namespace !== 'string' || r.namespace === '' || typeof r.name !== 'string' || r.name === '')
    return { error: 'namespace and name are required' };
  const ips = r.ips ?? [];
  if (!Array.isArray(ips) || ips.some((ip) => typeof ip !== 'string')) return { error: 'ips must be strings' };
  if (r.port === undefined) return { command: r.command, namespace: r.namespace, name: r.name, ips };
  const invalid = r.port === null || typeof r.port !== 'object' ? 'port must be an object' : invalidPodPort(r.port);
  if (invalid !== undefined) return { error: invalid };
  const port = { hostInterface: r.port.hostInterface, mac: r.port.mac.toLowerCase() };
  return { command: r.command, namespace: r.namespace, name: r.name, ips, port };
}

/**
 * Serves the hook's requests on `path` (a path of the machine's `/run` as seen from here) until the returned
 * function closes the server and removes the socket.
 */
export async function serveNetworkPolicyHook(
  path: string,
  target: AnnouncementTarget,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  await mkdir(dirname(path), { recursive: true });
  await rm(path, { force: true });
  const open = new Set<Socket>();
  const handle = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_REQUEST_BYTES) {
        socket.end(JSON.stringify({ error: `the request is larger than ${MAX_REQUEST_BYTES} bytes` }));
        socket.destroy();
      }
    });
    socket.on('end', () => {
      const request = parseHookRequest(text);
      if ('error' in request) {
        socket.end(JSON.stringify(request));
        return;
      }
      if (request.command === 'DEL') {
        target.forget(request.namespace, request.name, request.port);
        socket.end(JSON.stringify({ ok: true }));
        return;
      }
      target.announce(request.namespace, request.name, request.ips, request.port).then(
        () => socket.end(JSON.stringify({ ok: true })),
        (e: Error) => {
          log(`network policies: CNI hook for ${request.namespace}/${request.name}: ${e.message}`);
          socket.end(JSON.stringify({ error: e.message }));
        },
      );
    });
  };
  const server: Server = createServer({ allowHalfOpen: true }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Requests still waiting for rules are answered by nobody: their plugin fails the ADD on its own.
    for (const socket of open) socket.destroy();
    await closed;
    await rm(path, { force: true });
  };
}
