/** `nft` for a machine: the network namespace's own rules (outgoing NAT, NetworkPolicies). */
import { execFile } from 'node:child_process';
import { which } from '../../../system/process.js';

/** Runs `nft` with a script on stdin, in `netns` when given. */
export function runNft(script: string, args: string[], netns?: string): Promise<string> {
  const nft = [which('nft') ?? 'nft', ...args];
  const argv = netns !== undefined ? [which('ip') ?? 'ip', 'netns', 'exec', netns, ...nft] : nft;
  return new Promise((resolve, reject) => {
    const child = execFile(argv[0]!, argv.slice(1), { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`nft ${args.join(' ')}: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
    // nft exits without reading stdin when it has nothing to read there (`list`) or fails early: the write then
    // fails with EPIPE, which must not crash the machine (the exit status above tells what happened).
    child.stdin?.on('error', () => {});
    if (script === '') child.stdin?.end();
    else child.stdin?.end(script);
  });
}
