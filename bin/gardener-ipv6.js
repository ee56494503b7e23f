#!/usr/bin/env node
// Runs the compiled CLI when it exists (installed package), else the TypeScript sources through tsx (a checkout).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A closed pipe (`gardener-ipv6 default ... | head`) is not an error of ours.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'cli', 'main.js');
if (existsSync(compiled)) {
  const { runCli } = await import(pathToFileURL(compiled).href);
  process.exitCode = await runCli(process.argv.slice(2));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
  process.exitCode = await runCli(process.argv.slice(2));
}
