/** Runs a CNI plugin as a container runtime does: the command and the pod in the environment, the configuration on stdin. */
import { spawn } from 'node:child_process';

export interface PluginRun {
  readonly code: number | null;
  readonly stdout: string;
  /** How long the plugin ran. */
  readonly ms: number;
}

export function runCNIPlugin(
  plugin: string,
  command: string,
  conf: Record<string, unknown>,
  pod: { readonly args: string; readonly containerID: string },
): Promise<PluginRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(plugin, [], {
      env: {
        CNI_COMMAND: command,
        CNI_ARGS: `IgnoreUnknown=1;${pod.args}`,
        CNI_CONTAINERID: pod.containerID,
        CNI_IFNAME: 'eth0',
      },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, ms: Date.now() - started }));
    child.stdin.end(JSON.stringify(conf));
  });
}
