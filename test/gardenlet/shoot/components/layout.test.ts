/**
 * The shoot's components stand alone, as Gardener's: a component (a file or folder of
 * src/gardenlet/shoot/components/ with a class that deploys) imports no other component. What one needs of another
 * (the shoot's secrets, the load balancer's addresses, the networks) the flow hands on as a task's output; pure
 * helpers without a component (the pools, the kubelet settings) are shared.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const COMPONENTS = join(import.meta.dirname, '../../../../src/gardenlet/shoot/components');

interface Unit {
  readonly name: string;
  readonly files: readonly string[];
}

function units(): Unit[] {
  return readdirSync(COMPONENTS).flatMap((entry): Unit[] => {
    const path = join(COMPONENTS, entry);
    if (statSync(path).isDirectory()) {
      const files = readdirSync(path)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(path, f));
      return [{ name: `${entry}/`, files }];
    }
    return entry.endsWith('.ts') ? [{ name: entry, files: [path] }] : [];
  });
}

/** A class with a `deploy` method: what the flow runs. */
const DEPLOYS = /^export class \w+[^{]*\{[\s\S]*?^ {2}(?:async )?deploy\(/m;

type Read = (file: string) => string;
const readText: Read = (file) => readFileSync(file, 'utf8');

const isComponent = (unit: Unit, read: Read = readText) => unit.files.some((f) => DEPLOYS.test(read(f)));

/** The files a file imports (relative imports only), as absolute .ts paths. */
function importsOf(file: string, read: Read): string[] {
  const text = read(file);
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)].map((m) => resolve(dirname(file), `${m[1]}.ts`));
}

/** Each import of one component by another, as `importer -> imported`. */
function siblingImports(all: Unit[], read: Read = readText): string[] {
  const unitOf = new Map(all.flatMap((u) => u.files.map((f) => [f, u] as const)));
  const components = new Set(all.filter((u) => isComponent(u, read)));
  return all
    .filter((u) => components.has(u))
    .flatMap((u) =>
      u.files.flatMap((file) =>
        importsOf(file, read)
          .filter((imported) => {
            const other = unitOf.get(imported);
            return other !== undefined && other !== u && components.has(other);
          })
          .map((imported) => `${relative(COMPONENTS, file)} -> ${relative(COMPONENTS, imported)}`),
      ),
    );
}

describe("the shoot's components", () => {
  const all = units();

  it('are found: each deploying class is in a unit of its own', () => {
    const components = all.filter((u) => isComponent(u)).map((u) => u.name);
    // The flow's components, by file: a new one shows up here and is held to the rule below.
    expect(components).toEqual(
      expect.arrayContaining([
        'apiserver-service.ts',
        'cluster.ts',
        'controlplane/',
        'coredns.ts',
        'dns-records.ts',
        'machine-bootstrap.ts',
        'namespace.ts',
        'network-policies.ts',
        'network.ts',
        'operating-system-config.ts',
        'secrets.ts',
        'worker.ts',
      ]),
    );
  });

  it('import no other component: the flow hands on what one needs of another', () => {
    expect(siblingImports(all)).toEqual([]);
  });

  it('would see a component importing another', () => {
    const worker = join(COMPONENTS, 'worker.ts');
    const read: Read = (file) =>
      file === worker ? `import { ensureBootstrapToken } from './secrets.js';\n${readText(file)}` : readText(file);
    expect(siblingImports(all, read)).toEqual(['worker.ts -> secrets.ts']);
  });
});
