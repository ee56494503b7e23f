/**
 * Pods of a seed namespace for e2e tests: a node script run in the machine image (which has node at this process's
 * path), with the labels the namespace's NetworkPolicies select on, and its output once it has finished.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { IMAGES } from '../../src/imagevector/images.js';
import { Refs } from '../../src/apis/refs.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { run } from './shoot.js';
import { waitFor } from './wait.js';

export interface SeedPodScript {
  readonly namespace: string;
  readonly name: string;
  readonly script: string;
  readonly env?: Record<string, string>;
  readonly labels?: Record<string, string>;
}

/** Runs the script in a pod of the seed and returns its log; the pod is deleted whatever happened. */
export async function seedPodScript(
  client: ResourceClient,
  kubectl: { readonly bin: string; readonly kubeconfig: string },
  pod: SeedPodScript,
): Promise<string> {
  const { namespace, name } = pod;
  await client.create(Refs.pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(pod.labels ? { labels: pod.labels } : {}) },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'probe',
          image: IMAGES.machine,
          command: [process.execPath, '-e', pod.script],
          env: Object.entries(pod.env ?? {}).map(([k, v]) => ({ name: k, value: v })),
        },
      ],
    },
  } as KubernetesObject);
  try {
    return await waitFor(
      async () => {
        const current = await client.get<KubernetesObject & { status?: { phase?: string } }>(Refs.pod, name, namespace);
        if (current?.status?.phase !== 'Succeeded' && current?.status?.phase !== 'Failed') return undefined;
        return (await run(kubectl.bin, ['--kubeconfig', kubectl.kubeconfig, '-n', namespace, 'logs', name])).stdout;
      },
      { timeoutMs: 60_000, intervalMs: 500, message: `the pod ${namespace}/${name} to finish` },
    );
  } finally {
    await client.delete(Refs.pod, name, namespace);
  }
}

/**
 * A script that connects to each `host port` of `targets` over TCP, again and again until the outcome is `expect`
 * (or `patienceMs` has passed), and prints `<target> connected` or `<target> refused <code>` of the last attempt, one
 * line each. Patience covers what Kubernetes allows an enforcer: a new pod's address reaches its peers' rules, and
 * a new pod its own isolation, a moment after it starts.
 */
export function tcpConnectScript(
  targets: readonly string[],
  expect: 'connected' | 'refused',
  patienceMs = 15_000,
): string {
  return [
    "const net = require('node:net');",
    `const targets = ${JSON.stringify(targets)};`,
    `const deadline = Date.now() + ${patienceMs};`,
    'let left = targets.length;',
    'const attempt = (target) => {',
    "  const [host, port] = target.split(' ');",
    '  const socket = net.connect({ host, port: Number(port) });',
    '  let finished = false;',
    '  const done = (line) => {',
    '    if (finished) return;',
    '    finished = true;',
    '    socket.destroy();',
    `    const wanted = ${JSON.stringify(expect)} === 'connected' ? line === 'connected' : line !== 'connected';`,
    '    if (!wanted && Date.now() < deadline) return setTimeout(() => attempt(target), 250);',
    '    console.log(target + " " + line);',
    '    if (--left === 0) process.exit(0);',
    '  };',
    "  socket.setTimeout(5000, () => done('refused ETIMEDOUT'));",
    "  socket.on('connect', () => done('connected'));",
    "  socket.on('error', (e) => done('refused ' + (e.code || e.message)));",
    '};',
    'targets.forEach(attempt);',
  ].join('\n');
}
