/**
 * Looking at processes from a test: which ones mention a path, whether one is still alive.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of processes whose command line mentions `text` (e.g. a control plane's temporary folder). */
export function pidsMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return pids;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
