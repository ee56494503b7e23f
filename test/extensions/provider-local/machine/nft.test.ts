/**
 * `runNft` with an nft that exits without reading its stdin (`nft list ...`, or an early failure): the write of the
 * script fails with EPIPE, which used to crash the machine agent (an unhandled 'error' event) under load.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNft } from '../../../../src/extensions/provider-local/machine/nft.js';

const dir = mkdtempSync(join(tmpdir(), 'nft-test-'));
const savedPath = process.env.PATH;
afterAll(() => {
  process.env.PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

describe('runNft', () => {
  it('reports the exit of an nft that reads nothing, without an EPIPE escaping', async () => {
    writeFileSync(join(dir, 'nft'), '#!/bin/sh\necho "listed $*"\nexit 0\n');
    chmodSync(join(dir, 'nft'), 0o755);
    process.env.PATH = `${dir}:${savedPath}`;
    // Larger than a pipe's buffer, so the write can't complete before nft exits.
    const script = 'add table inet x\n'.repeat(64 * 1024);
    for (let i = 0; i < 5; i++) {
      expect(await runNft(script, ['-f', '-'])).toBe('listed -f -\n');
      expect(await runNft('', ['list', 'table', 'inet', 'x'])).toBe('listed list table inet x\n');
    }
    writeFileSync(join(dir, 'nft'), '#!/bin/sh\necho "Error: no such table" >&2\nexit 1\n');
    await expect(runNft(script, ['-f', '-'])).rejects.toThrow('nft -f -: Error: no such table');
  });
});
