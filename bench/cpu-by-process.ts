/**
 * Where the host's CPU goes while nothing changes: every process's user+system time from /proc/<pid>/stat at two
 * moments, grouped by command name (a shoot's kube-apiserver, etcd, the machines' kubelets and containerds, the
 * gardenlet's node process), in cores. The density benchmark takes it with its shoots running and idle, to say what
 * each shoot costs at rest and which component to make cheaper.
 */
import { readFileSync } from 'node:fs';
import { allProcStats, CLOCK_TICKS } from '../src/system/proc-stat.js';

/**
 * The command name, and for node processes what they run: `node machine` and `node overlay-peer` (provider-local's
 * agents in the machines, by their `gardener-ipv6` subcommand) apart from the bench's own process.
 */
function nameOf(pid: string, comm: string): string {
  if (comm !== 'node') return comm;
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return comm;
  }
  const script = args.findIndex((a) => /gardener-ipv6\.m?js$/.test(a));
  if (script >= 0 && args[script + 1] !== undefined && !args[script + 1]!.startsWith('-')) {
    return `node ${args[script + 1]}`;
  }
  return args.some((a) => a.includes('bench/run.ts')) ? 'node (the bench: gardenlet, extensions, webhook)' : comm;
}

/** user+system ticks of every process now, by pid, with its command name. */
function sample(): Map<number, { comm: string; ticks: number }> {
  return new Map(allProcStats().map((p) => [p.pid, { comm: nameOf(String(p.pid), p.comm), ticks: p.cpuTicks }]));
}

export interface ProcessCPU {
  readonly comm: string;
  readonly processes: number;
  /** Cores used on average over the window. */
  readonly cores: number;
}

/** The CPU used over `seconds` by command name, most first (processes that started or ended meanwhile left out). */
export async function cpuByProcess(seconds: number): Promise<{ total: number; byComm: ProcessCPU[] }> {
  const before = sample();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = sample();
  const elapsed = (performance.now() - started) / 1000;
  const byComm = new Map<string, { processes: number; ticks: number }>();
  for (const [pid, now] of after) {
    const then = before.get(pid);
    if (then === undefined || then.comm !== now.comm) continue;
    const group = byComm.get(now.comm) ?? { processes: 0, ticks: 0 };
    group.processes++;
    group.ticks += now.ticks - then.ticks;
    byComm.set(now.comm, group);
  }
  const list = [...byComm]
    .map(([comm, g]) => ({ comm, processes: g.processes, cores: g.ticks / CLOCK_TICKS / elapsed }))
    .filter((p) => p.cores > 0)
    .sort((a, b) => b.cores - a.cores);
  return { total: list.reduce((sum, p) => sum + p.cores, 0), byComm: list };
}
