/**
 * A machine's containerd: the runc it starts pods with, checked before a machine is created; the wait until it
 * answers; the images imported into it before the kubelet starts.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MACHINE_PATHS } from './config.js';
import { importArgs, linkBlobs, linkedImportCalls } from './content-store.js';
import type { NamespaceHolder } from './holder.js';
import type { BuiltImage } from './image-archive.js';
import { lastErrorLine, type MachineProcesses } from './processes.js';

const runcChecked = new Set<string>();

/**
 * containerd gives every pod sandbox the RuntimeDefault seccomp profile when the kernel has seccomp, and a runc
 * built without seccomp then refuses to start any pod: say so before a machine is created.
 */
export function checkRuncSeccomp(runc: string): void {
  if (runcChecked.has(runc)) return;
  let version: string;
  try {
    version = execFileSync(runc, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`cannot run ${runc}: ${(e as Error).message}`);
  }
  if (!/^libseccomp:/m.test(version)) {
    throw new Error(
      `${runc} was built without seccomp; pods could not start (rebuild it: hack/ensure-binaries.sh runc)`,
    );
  }
  runcChecked.add(runc);
}

/**
 * Resolves once the machine's containerd answers; fails at the deadline (ms since epoch) saying why. `inside` is the
 * machine's holder, which throws while the machine is not deployed.
 */
export async function waitForContainerd(
  machine: { name: string; binDir: string; inside: () => NamespaceHolder; processes: MachineProcesses },
  deadline: number,
): Promise<void> {
  const ctr = join(machine.binDir, 'ctr');
  for (;;) {
    try {
      await machine.inside().exec(ctr, ['--address', MACHINE_PATHS.containerdSocket, 'version'], undefined, 5_000);
      return;
    } catch (e) {
      if (Date.now() > deadline) {
        // The first line says why (what a status shows), the details follow.
        const log = machine.processes.find('containerd')?.tail(40) ?? '';
        const why =
          machine.processes.exitCause('containerd') ?? (lastErrorLine(log) || lastErrorLine((e as Error).message));
        throw new Error(`machine ${machine.name}: containerd not up in time: ${why}\n${(e as Error).message}\n${log}`);
      }
    }
    await sleep(200);
  }
}

/**
 * The images into containerd: by linking their blobs where the archives are on this filesystem (content-store.ts),
 * else by importing the whole archive.
 */
export async function importImages(
  machine: { binDir: string; stateDir: string; inside: () => NamespaceHolder },
  images: readonly BuiltImage[],
): Promise<void> {
  const ctr = join(machine.binDir, 'ctr');
  const global = ['--address', MACHINE_PATHS.containerdSocket, '-n', 'k8s.io'];
  const root = join(machine.stateDir, MACHINE_PATHS.containerdRoot.slice(1));
  for (const image of images) {
    const calls =
      image.content !== undefined && (await linkBlobs(image.content, root))
        ? linkedImportCalls(image.content, 'overlayfs')
        : [{ args: importArgs('overlayfs'), stdin: image.archive }];
    for (const call of calls) await machine.inside().exec(ctr, [...global, ...call.args], call.stdin);
  }
}
