/**
 * Finds the control plane's binaries the way hack/ensure-binaries.sh does, per binary:
 *   $GARDENER_IPV6_BIN_DIR/NAME, then $KUBEBUILDER_ASSETS/NAME, then .cache/bin/NAME (built by the script).
 * When one is missing (or its build is stale) and this is a checkout, runs the script, which is instant when
 * everything is cached.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../system/project.js';

/**
 * The machines' binaries: node components, the sandbox binary, CNI plugins, CoreDNS and the e2e tests' servers
 * (their images).
 */
export const NODE_BINARY_NAMES = [
  'kubelet',
  'kube-proxy',
  'pause',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'runc',
  'cni-bridge',
  'cni-host-local',
  'cni-loopback',
  'cni-portmap',
  'coredns',
  'agnhost',
  'agnhost-rootfs',
  'regression-issue-74839',
] as const;

export const BINARY_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'helm',
  ...NODE_BINARY_NAMES,
] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];
export type BinaryPaths = Record<BinaryName, string>;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The ready-made binary from GARDENER_IPV6_BIN_DIR or KUBEBUILDER_ASSETS, if any. */
export function prebuiltBinary(name: BinaryName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of [env.GARDENER_IPV6_BIN_DIR, env.KUBEBUILDER_ASSETS]) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

export function cacheBinDir(): string {
  return join(projectRoot(), '.cache', 'bin');
}

/** The pinned versions from hack/versions.env (empty in an installed package, which has no hack/). */
export function pinnedVersions(): Record<string, string> {
  const file = join(projectRoot(), 'hack', 'versions.env');
  if (!existsSync(file)) return {};
  const versions: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(\S*)\s*$/.exec(line);
    if (m) versions[m[1]!] = m[2]!;
  }
  return versions;
}

export interface EnsureOptions {
  names?: readonly BinaryName[];
  /** Progress lines of the build script. */
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * Returns the paths of the binaries, running hack/ensure-binaries.sh for those not provided through the
 * environment. Fails with the script's message (Go missing, module download failed) or, in an installed package,
 * with how to provide the binaries.
 */
export async function ensureBinaries(opts: EnsureOptions = {}): Promise<BinaryPaths> {
  const names = opts.names ?? BINARY_NAMES;
  const env = opts.env ?? process.env;
  const paths: Partial<BinaryPaths> = {};
  const toBuild: BinaryName[] = [];
  for (const name of names) {
    const found = prebuiltBinary(name, env);
    if (found !== undefined) paths[name] = found;
    else toBuild.push(name);
  }
  if (toBuild.length > 0) {
    const script = join(projectRoot(), 'hack', 'ensure-binaries.sh');
    if (!existsSync(script)) {
      throw new Error(
        `missing ${toBuild.join(', ')}: set GARDENER_IPV6_BIN_DIR (or KUBEBUILDER_ASSETS) to a folder with ` +
          `${BINARY_NAMES.join(', ')} binaries`,
      );
    }
    await runScript(script, toBuild, env, opts.log ?? ((line) => process.stderr.write(line + '\n')));
    for (const name of toBuild) {
      const path = join(cacheBinDir(), name);
      if (!isExecutable(path)) throw new Error(`hack/ensure-binaries.sh succeeded but ${path} is missing`);
      paths[name] = path;
    }
  }
  return paths as BinaryPaths;
}

function runScript(
  script: string,
  names: BinaryName[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // Quiet when everything is cached: progress only when something is built (or fails).
    const child = spawn('bash', [script, ...names], {
      cwd: projectRoot(),
      env: { ...env, GARDENER_IPV6_QUIET_CACHED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let pending = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) log(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (e) => reject(new Error(`cannot run ${script}: ${e.message}`)));
    child.on('close', (code) => {
      if (pending) log(pending);
      if (code === 0) resolve();
      else {
        const error = output.split('\n').filter((l) => l.includes('ERROR:'));
        reject(
          new Error(
            `hack/ensure-binaries.sh ${names.join(' ')} failed (exit ${code})${error.length ? ': ' + error.join('; ') : ''}`,
          ),
        );
      }
    });
  });
}
