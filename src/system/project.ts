/**
 * Where the project's files are: the checkout (hack/, .cache/) or the installed package (charts/ only).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The folder holding this package's package.json, found by walking up from this module (src/ or dist/). */
export function projectRoot(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'gardener-ipv6') return (cached = dir);
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('cannot find the gardener-ipv6 package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** The CRDs the control plane installs (written by `npm run generate`). */
export function crdDir(): string {
  return join(projectRoot(), 'charts', 'gardener-ipv6', 'crds');
}
