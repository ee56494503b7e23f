import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMachineCommand } from '../../src/cli/machine.js';
import { MACHINE_AGENT_EXIT } from '../../src/extensions/provider-local/machine-contract.js';

describe("the machine agent's last words", () => {
  let dir: string;
  let log: string;
  const io = { out: () => {}, err: () => {} };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'machine-cli-'));
    // The seed's kubelet mounts the file; the agent writes only where it exists.
    log = join(dir, 'termination-log');
    writeFileSync(log, '');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("are the termination message of a machine that can't start, one line naming it", async () => {
    const code = await runMachineCommand(
      {
        nodeName: 'machine-w-0',
        podIps: 'fd00::5',
        nodeCidrs: 'fd00:1::/64',
        userData: join(dir, 'missing'),
        terminationLog: log,
      },
      io,
    );
    expect(code).toBe(MACHINE_AGENT_EXIT.failed);
    expect(readFileSync(log, 'utf8')).toBe(
      `machine machine-w-0: ENOENT: no such file or directory, open '${join(dir, 'missing')}'`,
    );
  });

  it('are the termination message of missing inputs too', async () => {
    const code = await runMachineCommand(
      { nodeName: 'machine-w-0', podIps: '', userData: join(dir, 'missing'), terminationLog: log },
      io,
    );
    expect(code).toBe(MACHINE_AGENT_EXIT.usage);
    expect(readFileSync(log, 'utf8')).toBe('--pod-ips (or $POD_IPS) is required');
  });

  it('go nowhere outside a pod (no termination log mounted)', async () => {
    const absent = join(dir, 'absent');
    await runMachineCommand({ nodeName: '', userData: 'x', terminationLog: absent }, io);
    expect(() => readFileSync(absent)).toThrow(/ENOENT/);
  });
});
