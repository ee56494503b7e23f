/**
 * The CLI as a program of its own: the entry of the one-file bundle the machine image runs its agent from
 * (provider-local/machine/agent-bundle.ts). What bin/gardener-ipv6.js does for a checkout or the installed package.
 */
import { runCli } from './main.js';

// A closed pipe (`gardener-ipv6 ... | head`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2));
