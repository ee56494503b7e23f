import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output. */
export async function cli(args: string[], stdin = ''): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    out: (s) => (stdout += s),
    err: (s) => (stderr += s),
    readStdin: () => stdin,
  });
  return { code, stdout, stderr };
}

/** Writes text to a fresh temporary file and returns its path; removed after the test (or file) that made it. */
export function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-test-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  // Called in a test: gone when it finishes; while collecting (an it.each table): when the file's tests finished.
  try {
    onTestFinished(remove);
  } catch {
    afterAll(remove);
  }
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Parses a stream of pretty-printed JSON objects, as `validate -o json` prints them. */
export function parseJSONStream(text: string): unknown[] {
  const objects: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) objects.push(JSON.parse(text.slice(start, i + 1)));
  }
  return objects;
}
