/**
 * kube-controller-manager with only the controllers a control plane without nodes needs: the namespace controller
 * (a deleted namespace is emptied and goes away, as the gardenlet's shoot deletion expects) and the garbage
 * collector (owner references). It serves nothing: `--secure-port=0`.
 */
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from './process.js';

export const CONTROLLERS = ['namespace-controller', 'garbage-collector-controller'];

export interface KubeControllerManagerOptions {
  bin: string;
  dir: string;
  kubeconfigPath: string;
  netns?: string;
}

export function startKubeControllerManager(opts: KubeControllerManagerOptions): ManagedProcess {
  return startProcess({
    name: 'kube-controller-manager',
    command: opts.bin,
    args: [
      `--kubeconfig=${opts.kubeconfigPath}`,
      `--controllers=${CONTROLLERS.join(',')}`,
      '--secure-port=0',
      '--leader-elect=false',
      '--use-service-account-credentials=false',
      // A namespace with nothing left in it goes at once; the default resync is for large clusters.
      '--concurrent-namespace-syncs=5',
    ],
    logFile: join(opts.dir, 'kube-controller-manager.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
}
