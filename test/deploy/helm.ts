/**
 * Runs the real helm binary (hack/ensure-binaries.sh builds it into .cache/bin) on charts/gardener-ipv6 and parses
 * what it renders.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import { projectRoot } from '../../src/system/project.js';

export const CHART_DIR = join(projectRoot(), 'charts', 'gardener-ipv6');

/** The values presets the tests (and hack/local/deploy.sh) use: none, or one file of the chart's ci/ folder. */
export const PRESETS = {
  default: [],
  ipv4: [join(CHART_DIR, 'ci', 'ipv4-values.yaml')],
  ipv6: [join(CHART_DIR, 'ci', 'ipv6-values.yaml')],
  dual: [join(CHART_DIR, 'ci', 'dual-values.yaml')],
} as const satisfies Record<string, readonly string[]>;
export type Preset = keyof typeof PRESETS;

export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

let helmPath: string | undefined;

/** The helm binary, built by hack/ensure-binaries.sh when missing (a no-op when cached). */
export async function helmBinary(): Promise<string> {
  helmPath ??= (await ensureBinaries({ names: ['helm'] })).helm;
  return helmPath;
}

/** Runs helm with a clean environment (no user config, no cluster). */
export function helm(args: readonly string[], env: NodeJS.ProcessEnv = {}): HelmResult {
  if (helmPath === undefined) throw new Error('call helmBinary() first (beforeAll)');
  const home = join(projectRoot(), '.cache', 'helm-test-home');
  const result = spawnSync(helmPath, args, {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      ...env,
    },
  });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

export interface RenderOptions {
  readonly release?: string;
  readonly namespace?: string;
  /** `--set` pairs. */
  readonly set?: Readonly<Record<string, string>>;
  /** Values files after the preset's. */
  readonly valuesFiles?: readonly string[];
  readonly includeCRDs?: boolean;
}

/** The `-f`/`--set` arguments of a preset plus extra settings. */
export function valuesArgs(preset: Preset, set: Readonly<Record<string, string>> = {}): string[] {
  return [
    ...PRESETS[preset].flatMap((f) => ['-f', f]),
    ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
  ];
}

/** `helm template`; throws with helm's message when it fails. */
export function renderChart(preset: Preset, opts: RenderOptions = {}): K8sObject[] {
  const result = tryRenderChart(preset, opts);
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
  return parseObjects(result.stdout);
}

export function tryRenderChart(preset: Preset, opts: RenderOptions = {}): HelmResult {
  return helm([
    'template',
    opts.release ?? 'gardener-ipv6',
    CHART_DIR,
    '--namespace',
    opts.namespace ?? 'gardener-ipv6',
    ...(opts.includeCRDs ? ['--include-crds'] : []),
    ...valuesArgs(preset, opts.set),
    ...(opts.valuesFiles ?? []).flatMap((f) => ['-f', f]),
  ]);
}

/** Every non-empty document of a YAML stream. */
export function parseObjects(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0]!.message}`);
    const value = doc.toJSON() as K8sObject | null;
    if (value) objects.push(value);
  }
  return objects;
}

export function ofKind<T = K8sObject>(objects: readonly K8sObject[], kind: string): (K8sObject & T)[] {
  return objects.filter((o) => o.kind === kind) as (K8sObject & T)[];
}

export function named<T = K8sObject>(objects: readonly K8sObject[], kind: string, name: string): K8sObject & T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found as K8sObject & T;
}
