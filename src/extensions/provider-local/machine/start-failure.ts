/**
 * Why a machine can't start, in the words that name the true cause. A process that keeps exiting says what it saw
 * last, which is not always why: a containerd that started without its CRI plugin answers `ctr version` but not the
 * kubelet, which then crash-loops with "CRI v1 runtime API is not implemented". The cause is in containerd's log
 * (`failed to load plugin io.containerd.grpc.v1.cri`), and when that is `too many open files`, it is the host's:
 * the CRI plugin watches its CNI config folder with inotify, and every machine takes some of the host user's
 * `fs.inotify.max_user_instances` (`up` raises the limits as root, see localenv/prerequisites.ts).
 */
import type { HostKernel } from './kubelet-host.js';

/** The host's inotify limits, named in a cause that comes from them. */
export const INOTIFY_SYSCTLS = ['fs.inotify.max_user_instances', 'fs.inotify.max_user_watches'] as const;

/** Per process, its failed runs since the deploy and the last one's cause. */
export type ProcessExits = ReadonlyMap<string, { readonly count: number; readonly cause: string }>;

/** A logrus field's value: `key="quoted \"text\""` or `key=bare`. */
function field(line: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|(\\S+))`).exec(line);
  if (m === null) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

/**
 * containerd's failure to load a CRI plugin, from its log (logrus lines of containerd 1.x, `msg="failed to load
 * plugin io.containerd.grpc.v1.cri" error=…`, and 2.x, `msg="failed to load plugin" error=… id=…`): the plugin and
 * its error, and for `too many open files` the host's inotify limits with their current values; undefined when
 * the log has no such line.
 */
export function containerdPluginFailure(log: string, kernel: Pick<HostKernel, 'sysctl'>): string | undefined {
  const failures = log
    .split('\n')
    .map((line) => {
      const msg = field(line, 'msg') ?? '';
      const m = /^failed to load plugin\s*(\S*)/.exec(msg);
      if (m === null) return undefined;
      const plugin = m[1] || field(line, 'id') || '';
      if (!/cri/i.test(plugin)) return undefined;
      return { plugin, error: field(line, 'error') ?? '' };
    })
    .filter((f) => f !== undefined);
  if (failures.length === 0) return undefined;
  // The plugin whose own error is the cause, not one that failed because another one had.
  const failure = failures.find((f) => /too many open files/i.test(f.error)) ?? failures[0]!;
  const cause =
    `containerd runs without its CRI plugin: failed to load plugin ${failure.plugin}` +
    (failure.error !== '' ? `: ${failure.error}` : '');
  if (!/too many open files|inotify/i.test(failure.error)) return cause;
  const limits = INOTIFY_SYSCTLS.map((key) => `${key} (now ${kernel.sysctl(key) ?? 'unknown'})`).join(' and ');
  return `${cause}: the host's inotify limits are exhausted; raise ${limits}`;
}

/**
 * Why the machine can't start, once one of its processes exited `limit` times since the deploy: containerd's CRI
 * plugin failure when its log has one (the kubelet's error then is only a consequence), else the process and the
 * cause of its last exit; undefined while no process exited that often.
 */
export function startFailureOf(
  exits: ProcessExits,
  limit: number,
  /** containerd's log, read only when a process exited that often. */
  containerdLog: () => string,
  kernel: Pick<HostKernel, 'sysctl'>,
): string | undefined {
  for (const [name, e] of exits) {
    if (e.count < limit) continue;
    const cri = containerdPluginFailure(containerdLog(), kernel);
    return cri ?? `${name} keeps exiting (${e.count} times), last ${e.cause}`;
  }
  return undefined;
}
