/** /proc/<pid>/stat, parsed: fields counted from the command name's last parenthesis. */
import { describe, expect, it } from 'vitest';
import { parseProcStat, readProcStat } from '../../src/system/proc-stat.js';

describe('parseProcStat', () => {
  it('reads state, parent and CPU ticks after a command name with spaces and parentheses', () => {
    const line = '4242 (my (odd) cmd) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 1 0 12345 0 0\n';
    expect(parseProcStat(4242, line)).toEqual({ pid: 4242, comm: 'my (odd) cmd', state: 'S', ppid: 17, cpuTicks: 287 });
  });
});

describe('readProcStat', () => {
  it('reads this process, and nothing of a process that is not there', () => {
    const own = readProcStat(process.pid)!;
    expect(own.pid).toBe(process.pid);
    expect(own.ppid).toBe(process.ppid);
    expect(own.state).toMatch(/^[RS]$/);
    expect(own.cpuTicks).toBeGreaterThan(0);
    expect(readProcStat(2 ** 22 + 1)).toBeUndefined();
  });
});
