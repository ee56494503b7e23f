/**
 * vitest global setup of the `integration` project: one control plane for all integration test files (each test
 * works in its own namespace). The tests get the kubeconfig through `inject('kubeconfig')`.
 *
 * `npm test` (hack/test-in-netns.mjs) runs vitest inside a fresh IPv6-only network namespace when it can, so the
 * API server and the tests' clients live where 127.0.0.1 does not exist.
 */
import type { TestProject } from 'vitest/node';
import { startControlPlane } from '../../src/localenv/control-plane.js';
import { NETNS_ENV, netnsUnsupportedReason } from '../../src/system/netns.js';
import { describeE2ETarget, provideExistingCluster, selectE2ETarget } from './target.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the shared control plane. */
    kubeconfig: string;
    /** `https://[::1]:PORT`. */
    apiServerURL: string;
    /** The IPv6-only network namespace the tests run in, or '' on the host. */
    netns: string;
  }
}

export const HOST_NOTICE_ENV = 'GARDENER_IPV6_HOST_NOTICE_SHOWN';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`[control-plane] ${line}\n`);
  // As Gardener's e2e: KUBECONFIG and IPFAMILY=ipv6|ipv4|dual select an existing (kind) cluster instead.
  const target = selectE2ETarget();
  project.provide('ipFamily', target.ipFamily);
  if (target.kind === 'existing-cluster') {
    log(describeE2ETarget(target));
    provideExistingCluster(project, target);
    return async () => {};
  }
  const netns = process.env[NETNS_ENV] ?? '';
  if (netns === '' && process.env[HOST_NOTICE_ENV] === undefined) {
    const why = netnsUnsupportedReason() ?? 'vitest was started directly, not through `npm test`';
    log(`running on the host's [::1], not in an IPv6-only network namespace (${why})`);
  }
  const started = Date.now();
  const cp = await startControlPlane({ log });
  log(
    `up in ${((Date.now() - started) / 1000).toFixed(1)}s at ${cp.server}${netns ? ` in network namespace ${netns}` : ''}`,
  );
  // Tests would only see connection errors; say what happened.
  void cp.crashed.then((message) => log(`the shared control plane died: ${message}`));
  project.provide('kubeconfig', cp.kubeconfigPath);
  project.provide('apiServerURL', cp.server);
  project.provide('netns', netns);
  return async () => {
    await cp.stop();
  };
}
