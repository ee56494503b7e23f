#!/usr/bin/env node
// `npm test`: runs vitest inside a fresh IPv6-only network namespace when this process may create one (root and
// iproute2), so the control plane of the integration tests and the tests' own clients run where 127.0.0.1 does not
// exist. Elsewhere it runs vitest directly, on the host's [::1], and says so once.
//
// Before entering the namespace (which has no route to the internet) it runs hack/ensure-binaries.sh, which is
// instant when the binaries are cached. Skipped with GARDENER_IPV6_SKIP_BINARIES=1 or `--project unit`.
//
// Arguments are passed to `vitest run`. The exit code is vitest's (128+N when it died of signal N), or 1 when the
// tests passed but left temporary files behind.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const say = (line) => process.stderr.write(`[test-in-netns] ${line}\n`);

// The namespace helpers are TypeScript (src/system/netns.ts); load them through tsx like bin/gardener-ipv6.js.
const { register } = await import('tsx/esm/api');
register();
const netnsModule = await import(pathToFileURL(join(root, 'src', 'system', 'netns.ts')).href);
const { NETNS_ENV, createIPv6OnlyNetns, deleteNetns, netnsUnsupportedReason } = netnsModule;
const { which } = await import(pathToFileURL(join(root, 'src', 'system', 'process.ts')).href);

const unitOnly = args.some((a, i) => (a === '--project' && args[i + 1] === 'unit') || a === '--project=unit');
if (process.env.GARDENER_IPV6_SKIP_BINARIES !== '1' && !unitOnly) {
  // All but the conformance runner's (@test), which the conformance file builds when it starts, through the host's
  // network (hack/conformance.ts): .ci/run builds them in the background while the other files run.
  const built = spawnSync('bash', [join(root, 'hack', 'ensure-binaries.sh'), '@control-plane', '@node', '@kind'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, GARDENER_IPV6_QUIET_CACHED: '1' },
  });
  if (built.status !== 0) {
    say('hack/ensure-binaries.sh failed; the integration tests need its binaries');
    process.exit(built.status ?? 1);
  }
}

// Tests that need a missing tool skip themselves; say which tools once, up front, instead of silently.
const check = spawnSync('bash', [join(root, 'hack', 'check-prerequisites.sh'), 'test'], {
  stdio: 'inherit',
  env: { ...process.env, GARDENER_IPV6_NODE: process.execPath },
});
if (check.status !== 0) {
  say('some tests will be skipped or fail without the prerequisites above');
}

const vitest = [process.execPath, join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args];
const env = { ...process.env };
let netns;
// An existing cluster (KUBECONFIG and IPFAMILY, as Gardener's e2e) is not reachable from a fresh namespace.
const existingCluster = Boolean(process.env.KUBECONFIG?.trim() && process.env.IPFAMILY?.trim());
const reason = existingCluster
  ? 'KUBECONFIG and IPFAMILY select an existing cluster, which a fresh namespace cannot reach'
  : netnsUnsupportedReason();
if (reason === undefined) {
  try {
    netns = createIPv6OnlyNetns();
  } catch (e) {
    say(`cannot create a network namespace (${e.message}); running on the host's [::1]`);
  }
} else {
  say(`running on the host's [::1], not in an IPv6-only network namespace: ${reason}`);
}
if (netns !== undefined) {
  say(`running vitest in network namespace ${netns} (loopback ::1 only, no IPv4)`);
  env[NETNS_ENV] = netns;
  // This process stays in the host's network and mount namespaces: tests that drive Docker (test/kind) enter both
  // through here. `ip netns exec` mounts a fresh /sys without the cgroup hierarchies, so a dockerd started in its
  // mount namespace would have none (or the tests' own mounts of them), and would not be the host's.
  env.GARDENER_IPV6_HOST_NETNS = `/proc/${process.pid}/ns/net`;
  env.GARDENER_IPV6_HOST_MNTNS = `/proc/${process.pid}/ns/mnt`;
}
// The global setup would otherwise repeat the notice.
env.GARDENER_IPV6_HOST_NOTICE_SHOWN = '1';
// The control planes' temporary folders go here, and we remove it at the end: nothing stays behind even when
// vitest is killed (its children die with it through setpriv --pdeathsig, and with the namespace).
const runDir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-test-run-'));
env.GARDENER_IPV6_TMPDIR = runDir;
// Every temporary file of the run goes there too (os.tmpdir() reads TMPDIR): what a finished run leaves in it is a
// test that does not clean up, and fails the run below.
env.TMPDIR = runDir;
// Servers that drop root (the chart's BIND9 runs as its pod user) must reach their folders in it.
chmodSync(runDir, 0o711);

const command = netns !== undefined ? [which('ip') ?? 'ip', 'netns', 'exec', netns, ...vitest] : vitest;
const child = spawn(command[0], command.slice(1), { cwd: root, env, stdio: 'inherit' });

// A Ctrl-C in a terminal reaches vitest directly (same process group); forward SIGINT only when it came from
// elsewhere (CI, `kill`), so vitest does not get it twice. SIGTERM and SIGHUP are always forwarded.
const forward = (signal) => {
  if (signal !== 'SIGINT' || !process.stdin.isTTY) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);

const cleanup = () => {
  // Kills anything vitest left running in the namespace (deleteNetns does), then removes it.
  if (netns !== undefined) deleteNetns(netns);
  netns = undefined;
  rmSync(runDir, { recursive: true, force: true });
};
process.on('exit', cleanup);

child.on('error', (e) => {
  say(`cannot start vitest: ${e.message}`);
  cleanup();
  process.exit(1);
});
/** What the tests left in the run's temporary folder (nothing, when every test cleans up after itself). */
function leftovers() {
  try {
    // tsx keeps its compile cache in the temp dir (tsx-UID): a tool's cache, not a test's leftover.
    return readdirSync(runDir).filter((name) => !/^tsx-\d+$/.test(name));
  } catch {
    return [];
  }
}

child.on('exit', (code, signal) => {
  let exitCode = code ?? 128 + (constants.signals[signal] ?? 15);
  const left = code === null ? [] : leftovers();
  if (left.length > 0) {
    say(`the tests left ${left.length} temporary files or folders behind in ${runDir}: ${left.sort().join(', ')}`);
    if (exitCode === 0) exitCode = 1;
  }
  cleanup();
  process.exit(exitCode);
});
