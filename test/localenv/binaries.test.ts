import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BINARY_NAMES, ensureBinaries, pinnedVersions, prebuiltBinary } from '../../src/localenv/binaries.js';

const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-binaries-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A folder with executable stand-ins for the named binaries. */
function fakeBinaries(name: string, binaries: readonly string[]): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  for (const binary of binaries) {
    writeFileSync(join(folder, binary), '#!/bin/sh\n');
    chmodSync(join(folder, binary), 0o755);
  }
  return folder;
}

describe('binaries', () => {
  it('pins versions in hack/versions.env', () => {
    const v = pinnedVersions();
    expect(v.KUBERNETES_VERSION).toMatch(/^v1\.\d+\.\d+$/);
    expect(v.ETCD_VERSION).toMatch(/^v3\.\d+\.\d+$/);
    expect(v.HELM_VERSION).toMatch(/^v3\.\d+\.\d+$/);
  });

  it('prefers GARDENER_IPV6_BIN_DIR, then KUBEBUILDER_ASSETS, per binary', async () => {
    // setup-envtest's layout has no helm; the project folder provides it.
    const env = {
      GARDENER_IPV6_BIN_DIR: fakeBinaries('own', ['helm']),
      KUBEBUILDER_ASSETS: fakeBinaries('kubebuilder', ['etcd', 'kube-apiserver', 'kubectl']),
    };
    expect(prebuiltBinary('helm', env)).toBe(join(dir, 'own', 'helm'));
    expect(prebuiltBinary('etcd', env)).toBe(join(dir, 'kubebuilder', 'etcd'));
    expect(prebuiltBinary('etcd', {})).toBeUndefined();

    // Everything provided: the build script does not run (it would print).
    const paths = await ensureBinaries({ env, log: (line) => expect.fail(`unexpected output: ${line}`) });
    expect(Object.keys(paths).sort()).toEqual([...BINARY_NAMES].sort());
    expect(paths.kubectl).toBe(join(dir, 'kubebuilder', 'kubectl'));
    expect(paths.helm).toBe(join(dir, 'own', 'helm'));
  });
});
