import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CGROUP_DELEGATION_FILES, runCgroupDelegation } from '../../src/cli/cgroup-delegation.js';
import { CGROUP_DELEGATION_HOOK } from '../../src/extensions/provider-local/machine/cgroup-delegation.js';

describe('gardener-ipv6 cgroup-delegation', () => {
  let dir: string;
  let err: string;
  const io = { out: () => {}, err: (t: string) => void (err += t) };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cgroup-delegation-'));
    err = '';
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the hook and the node's spec with it, keeping the node's own hooks", async () => {
    const defaultSpec = join(dir, 'default.json');
    writeFileSync(
      defaultSpec,
      JSON.stringify({
        process: { rlimits: [{ type: 'RLIMIT_NOFILE' }] },
        hooks: { createContainer: [{ path: '/kind/bin/mount-product-files.sh' }] },
      }),
    );
    const out = join(dir, 'out');
    const code = await runCgroupDelegation(io, { defaultSpec, hookPath: '/kind/bin/cgroup-delegation-hook', out });
    expect([code, err]).toEqual([0, '']);
    const hook = join(out, CGROUP_DELEGATION_FILES.hook);
    expect(readFileSync(hook, 'utf8')).toBe(CGROUP_DELEGATION_HOOK);
    expect(statSync(hook).mode & 0o777).toBe(0o755);
    const spec = JSON.parse(readFileSync(join(out, CGROUP_DELEGATION_FILES.baseRuntimeSpec), 'utf8')) as {
      process: object;
      hooks: Record<string, { path: string }[]>;
    };
    expect(spec.process).toEqual({});
    expect(spec.hooks.createContainer).toEqual([{ path: '/kind/bin/mount-product-files.sh' }]);
    expect(spec.hooks.createRuntime!.map((h) => h.path)).toEqual(['/kind/bin/cgroup-delegation-hook']);
  });

  it('refuses a spec that is not a JSON object and a relative hook path, writing nothing', async () => {
    const out = join(dir, 'out');
    writeFileSync(join(dir, 'list.json'), '[]');
    writeFileSync(join(dir, 'spec.json'), '{}');
    expect(await runCgroupDelegation(io, { defaultSpec: join(dir, 'list.json'), hookPath: '/h', out })).toBe(2);
    expect(await runCgroupDelegation(io, { defaultSpec: join(dir, 'none.json'), hookPath: '/h', out })).toBe(2);
    expect(await runCgroupDelegation(io, { defaultSpec: join(dir, 'spec.json'), hookPath: 'h', out })).toBe(2);
    expect(err).toMatch(/--default-spec: not a runtime spec/);
    expect(err).toMatch(/--default-spec: ENOENT/);
    expect(err).toMatch(/--hook-path: "h" is not an absolute path/);
    expect(() => statSync(out)).toThrow();
  });
});
