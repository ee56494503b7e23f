/**
 * A process's line of /proc/<pid>/stat (proc(5)), parsed: its command name, state, parent and CPU time. The command
 * name is in parentheses and may hold spaces and parentheses itself, so the fields are counted from the last `)`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  readonly pid: number;
  /** The command name (at most 15 characters, as the kernel keeps it). */
  readonly comm: string;
  /** `R`, `S`, `D`, `Z` (a zombie: exited, not reaped yet), … */
  readonly state: string;
  readonly ppid: number;
  /** User and system time, in clock ticks ({@link CLOCK_TICKS} a second). */
  readonly cpuTicks: number;
}

/** Clock ticks per second, as `getconf CLK_TCK` says (100 on Linux). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The parsed line of one /proc/<pid>/stat text. */
export function parseProcStat(pid: number, text: string): ProcStat {
  const close = text.lastIndexOf(')');
  // From the state (field 3): ppid is field 4, utime and stime are fields 14 and 15.
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    comm: text.slice(text.indexOf('(') + 1, close),
    state: fields[0] ?? '',
    ppid: Number(fields[1]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
  };
}

/** The process's stat, undefined when it is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every process's stat now (those that exit meanwhile left out). */
export function allProcStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat !== undefined) stats.push(stat);
  }
  return stats;
}
