import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  describeMachineProblems,
  joinProblemFromLog,
  mayHaveJoinProblem,
  machinePodProblem,
  MAX_CAUSE_LENGTH,
  type MachineProblem,
} from '../../../../src/extensions/provider-local/worker/machine-problems.js';

const IMAGE = 'localhost/gardener-ipv6-machine:dev';

function pod(
  status: { phase?: string; reason?: string; message?: string; conditions?: V1PodCondition[] },
  container?: Partial<V1ContainerStatus>,
  deleting = false,
): V1Pod {
  return {
    metadata: { name: 'machine-w-0', ...(deleting ? { deletionTimestamp: new Date(0) } : {}) },
    status: {
      phase: status.phase ?? 'Running',
      ...(status.reason ? { reason: status.reason } : {}),
      ...(status.message ? { message: status.message } : {}),
      conditions: status.conditions ?? [{ type: 'PodScheduled', status: 'True' }],
      ...(container
        ? {
            containerStatuses: [
              { name: 'machine', image: IMAGE, imageID: '', ready: false, restartCount: 0, ...container },
            ],
          }
        : {}),
    },
  };
}

const crashed = (exitCode: number, message?: string, reason = 'Error') => ({
  terminated: { exitCode, reason, ...(message !== undefined ? { message } : {}) },
});

const SYSCTL = 'setting kernel parameters: sysctl: setting key "net.ipv4.ip_local_port_range": Invalid argument';

const CASES: [string, V1Pod, Omit<MachineProblem, 'machine'> | undefined][] = [
  ['a ready machine', pod({ conditions: [{ type: 'Ready', status: 'True' }] }, { ready: true }), undefined],
  ['a machine pod being deleted', pod({}, { state: { waiting: { reason: 'CrashLoopBackOff' } } }, true), undefined],
  [
    'a pod being created',
    pod({ phase: 'Pending' }, { state: { waiting: { reason: 'ContainerCreating' } } }),
    undefined,
  ],
  ['a pod not yet scheduled, without a verdict', pod({ phase: 'Pending', conditions: [] }), undefined],
  ['an agent running, its Node not Ready yet', pod({}, { state: { running: {} } }), undefined],
  [
    'a pod the seed cannot schedule',
    pod({
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available.',
        },
      ],
    }),
    {
      cause:
        "the seed can't schedule its pod: 0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes " +
        'are available.',
      failing: true,
      code: 'ERR_INFRA_RESOURCES_DEPLETED',
    },
  ],
  [
    'an image the seed cannot pull',
    pod(
      { phase: 'Pending' },
      { state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${IMAGE}"` } } },
    ),
    {
      cause: `the machine image ${IMAGE} can't be pulled (ImagePullBackOff): Back-off pulling image "${IMAGE}"`,
      failing: true,
    },
  ],
  [
    'a container that cannot be configured',
    pod(
      { phase: 'Pending' },
      {
        state: {
          waiting: {
            reason: 'CreateContainerConfigError',
            message: 'secret "worker-user-data-w" not found',
          },
        },
      },
    ),
    {
      cause: 'its container can\'t be started (CreateContainerConfigError): secret "worker-user-data-w" not found',
      failing: true,
    },
  ],
  [
    'an agent that failed once, with its termination message',
    pod({}, { state: crashed(1, 'machine machine-w-0: containerd not up in time: failed to load plugin cri') }),
    { cause: 'containerd not up in time: failed to load plugin cri', failing: false },
  ],
  [
    'an agent in CrashLoopBackOff: the last run says why, and how often it failed',
    pod(
      {},
      {
        restartCount: 3,
        state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
        lastState: crashed(
          1,
          'machine machine-w-0: kubelet keeps exiting (4 times), last exited with code 1: "command failed" ' +
            'err="failed to run Kubelet: validate service connection: CRI v1 runtime API is not implemented"',
        ),
      },
    ),
    {
      cause:
        'kubelet keeps exiting (4 times), last exited with code 1: "command failed" ' +
        'err="failed to run Kubelet: validate service connection: CRI v1 runtime API is not implemented" ' +
        '(restarted 3 times)',
      failing: true,
    },
  ],
  [
    'an agent restarted once, running again: the last failure, still on its way',
    pod({}, { restartCount: 1, state: { running: {} }, lastState: crashed(1, 'machine machine-w-0: boom') }),
    { cause: 'boom (restarted 1 time)', failing: false },
  ],
  [
    "the machine's configuration refused: failing at once, with the configuration-problem code",
    pod(
      {},
      {
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        restartCount: 1,
        lastState: crashed(3, `machine machine-w-0: ${SYSCTL}`),
      },
    ),
    { cause: `${SYSCTL} (restarted 1 time)`, failing: true, code: 'ERR_CONFIGURATION_PROBLEM' },
  ],
  [
    'a crash without a message of its own: the end of its log (FallbackToLogsOnError)',
    pod(
      {},
      {
        restartCount: 2,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: crashed(
          1,
          'node:internal/modules/cjs/loader:1228\n  throw err;\n\nError: Cannot find module x\n\nNode.js v22.11.0\n',
        ),
      },
    ),
    { cause: 'Error: Cannot find module x (restarted 2 times)', failing: true },
  ],
  [
    'a crash without any message: the exit code and reason',
    pod(
      {},
      { restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: crashed(137, '', 'OOMKilled') },
    ),
    { cause: 'exited with code 137 (OOMKilled) (restarted 2 times)', failing: true },
  ],
  ['an agent stopped by a signal, on its way back', pod({}, { state: crashed(0, '', 'Completed') }), undefined],
  [
    'an evicted pod',
    pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
    { cause: 'the machine pod failed: Evicted: The node was low on resource: memory.', failing: false },
  ],
];

describe("a machine pod's problem, from its status", () => {
  it.each(CASES)('%s', (_, input, want) => {
    expect(machinePodProblem(input)).toEqual(want === undefined ? undefined : { machine: 'machine-w-0', ...want });
  });

  it('is one line of bounded length, whatever the message', () => {
    const long = `machine machine-w-0: ${'x'.repeat(5000)}`;
    const problem = machinePodProblem(pod({}, { state: crashed(1, long) }));
    expect(problem?.cause.length).toBe(MAX_CAUSE_LENGTH);
    expect(problem?.cause.endsWith('…')).toBe(true);
  });
});

describe("the Worker's description of machine problems", () => {
  it('names each machine with its cause, in the order of their ordinals', () => {
    expect(
      describeMachineProblems([
        { machine: 'machine-w-10', cause: 'b', failing: true },
        { machine: 'machine-w-2', cause: 'a', failing: false },
      ]),
    ).toBe('machine machine-w-2: a; machine machine-w-10: b');
  });
});

describe("a machine's join problem, from its agent's log", () => {
  const cause =
    "kubelet can't reach the API server at https://[fd00:10:2::1]:443: dial tcp: connect: connection refused";
  const log = [
    '2026-11-29T03:00:00.000Z machine machine-a-0: started; joining https://[fd00:10:2::1]:443',
    `2026-11-29T03:02:00.000Z machine machine-a-0: not joined: ${cause.replace('refused', 'reset')}`,
    `2026-11-29T03:03:00.000Z machine machine-a-0: not joined: ${cause}`,
    '2026-11-29T03:03:01.000Z machine machine-a-0: node sync: something else',
  ].join('\n');

  it("is the agent's last such line, as progress (not failing)", () => {
    expect(joinProblemFromLog('machine-a-0', log)).toEqual({ machine: 'machine-a-0', cause, failing: false });
    expect(joinProblemFromLog('machine-a-1', log)).toBeUndefined();
    expect(joinProblemFromLog('machine-a-0', '')).toBeUndefined();
  });

  it('is looked for only in a pod not ready whose container has run for JOIN_PROBLEM_AFTER_MS', () => {
    const now = Date.parse('2026-11-29T03:05:00Z');
    const pod = (startedAt: string, ready = false) =>
      ({
        metadata: { name: 'machine-a-0' },
        status: {
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
          containerStatuses: [{ name: 'machine', state: { running: { startedAt: new Date(startedAt) } } }],
        },
      }) as unknown as V1Pod;
    expect(mayHaveJoinProblem(pod('2026-11-29T03:03:00Z'), now)).toBe(true);
    expect(mayHaveJoinProblem(pod('2026-11-29T03:03:01Z'), now)).toBe(false);
    expect(mayHaveJoinProblem(pod('2026-11-29T03:00:00Z', true), now)).toBe(false);
  });
});
