/**
 * An exclusive lock between processes, held by the kernel: util-linux's `flock` on a file, in a child that keeps it
 * until its standard input closes. The lock goes with its owner, however that ends (a crashed or killed test worker
 * closes the pipe), and no waiter can take it from a live one.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Takes the lock at PATH, waiting as long as another process holds it; resolves to its release. */
export async function acquireFileLock(path: string): Promise<() => Promise<void>> {
  mkdirSync(dirname(path), { recursive: true });
  const holder = spawn('flock', ['--exclusive', path, 'sh', '-c', 'echo held && exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((done) => holder.once('close', done));
  await new Promise<void>((held, fail) => {
    holder.stdout.once('data', () => held());
    holder.once('error', fail);
    void exited.then((code) => fail(new Error(`flock ${path} exited ${code} before it held the lock`)));
  });
  // The pipe is the lock's lifetime: it must not keep this process alive, and nothing else may read from it.
  holder.stdout.destroy();
  holder.unref();
  (holder.stdin as unknown as { unref(): void }).unref();
  return async () => {
    holder.stdin.end();
    await exited;
  };
}
