/**
 * The Dockerfile, without a Docker engine: its stages and instructions (multi-stage, production dependencies only,
 * non-root user of the chart, no shell in the runtime image), the .dockerignore against what the stages copy, and
 * the runtime image's file set assembled by hand — compiled by the build stage's command, with exactly the packages
 * `npm ci --omit=dev` installs — running the CLI.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/system/project.js';
import { SERVER_NODE_FLAGS } from '../../src/runtime/node-flags.js';

const ROOT = projectRoot();

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions of a Dockerfile: comments dropped, continuation lines joined. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw) || (pending === '' && raw.trim() === '')) continue;
    if (raw.endsWith('\\')) {
      pending += raw.slice(0, -1) + ' ';
      continue;
    }
    lines.push((pending + raw).trim());
    pending = '';
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!m) throw new Error(`cannot parse FROM ${rest}`);
      stages.push({ from: m[1]!, name: m[2], instructions: [] });
    } else if (stages.length === 0) {
      if (upper !== 'ARG') throw new Error(`${upper} before the first FROM`);
      const [name, value = ''] = rest.split('=');
      args.set(name!, value);
    } else {
      stages.at(-1)!.instructions.push({ keyword: upper, args: rest });
    }
  }
  return { args, stages };
}

function expand(text: string, args: Map<string, string>): string {
  return text.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (_, a: string | undefined, b: string | undefined) => args.get(a ?? b!) ?? '',
  );
}

/** Whether .dockerignore keeps `path` in the build context (Docker's rules: last match wins, parents count). */
function inContext(dockerignore: string, path: string): boolean {
  const patterns = dockerignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const segments = path.split('/');
  const candidates = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let included = true;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const glob = (negated ? pattern.slice(1) : pattern).replace(/\/$/, '');
    const regex = new RegExp(
      '^' +
        glob
          .split('/')
          .map((s) =>
            s === '**'
              ? '.*'
              : s
                  .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                  .replace(/\*/g, '[^/]*')
                  .replace(/\?/g, '[^/]'),
          )
          .join('/') +
        '$',
    );
    if (candidates.some((c) => regex.test(c))) included = negated;
  }
  return included;
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8');
const stage = (name: string) => dockerfile.stages.find((s) => s.name === name)!;
const runtime = dockerfile.stages.at(-1)!;
const of = (s: Stage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

describe('Dockerfile', () => {
  it('has a build, a production-dependencies and a runtime stage', () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(['build', 'dependencies', 'runtime']);
    expect(of(stage('build'), 'RUN')).toEqual(['npm ci --ignore-scripts --no-audit --no-fund', 'npm run build']);
    expect(of(stage('dependencies'), 'RUN')).toEqual([
      'npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force',
    ]);
  });

  it('builds on the Node release package.json asks for and runs on a distroless image without a shell', () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    const major = dockerfile.args.get('NODE_VERSION');
    expect(engines).toMatch(new RegExp(`^>=${major}\\b`));
    expect(expand(stage('build').from, dockerfile.args)).toBe(`node:${major}-bookworm-slim`);
    expect(expand(runtime.from, dockerfile.args)).toBe(`gcr.io/distroless/nodejs${major}-debian12:nonroot`);
    expect(of(runtime, 'RUN')).toEqual([]);
  });

  it('runs as the chart’s non-root user', () => {
    const values = parse(readFileSync(join(ROOT, 'charts', 'gardener-ipv6', 'values.yaml'), 'utf8')) as {
      podSecurityContext: { runAsUser: number; runAsGroup: number };
      webhook: { port: number };
      healthPort: number;
    };
    const user = of(runtime, 'USER');
    expect(user).toEqual([`${values.podSecurityContext.runAsUser}:${values.podSecurityContext.runAsGroup}`]);
    expect(user[0]).not.toMatch(/^(0|root)\b/);
    expect(of(runtime, 'EXPOSE')).toEqual([`${values.webhook.port} ${values.healthPort}`]);
  });

  it('copies only compiled code, production dependencies and the files read at run time', () => {
    expect(of(runtime, 'COPY')).toEqual([
      '--from=dependencies /app/node_modules ./node_modules',
      '--from=build /src/dist ./dist',
      'package.json ./',
      'bin ./bin',
      'charts/internal ./charts/internal',
    ]);
    expect(JSON.parse(of(runtime, 'ENTRYPOINT')[0]!)).toEqual([
      '/nodejs/bin/node',
      ...SERVER_NODE_FLAGS,
      '/app/bin/gardener-ipv6.js',
    ]);
    expect(of(runtime, 'WORKDIR')).toEqual(['/app']);
  });

  it('has a build context with what the stages copy and nothing else of the checkout', () => {
    const sources = dockerfile.stages
      .flatMap((s) => of(s, 'COPY'))
      .filter((c) => !c.startsWith('--from='))
      .flatMap((c) => c.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(inContext(dockerignore, source), source).toBe(true);
    for (const path of ['src/cli/main.ts', 'charts/internal/calico/values.yaml']) {
      expect(inContext(dockerignore, path), path).toBe(true);
    }
    for (const path of [
      'node_modules/yaml/package.json',
      '.cache/bin/helm',
      '.git/HEAD',
      'test/deploy',
      'dist/cli',
      'docs',
      'charts/gardener-ipv6/values.yaml',
      'Dockerfile',
    ]) {
      expect(inContext(dockerignore, path), path).toBe(false);
    }
  });
});

describe('the runtime image’s files', () => {
  let app: string;

  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'gardener-ipv6-image-'));
    // The build stage's `npm run build`, into the image's folder.
    const tsc = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        join(ROOT, 'tsconfig.build.json'),
        '--outDir',
        join(app, 'dist'),
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    expect(tsc.stdout + tsc.stderr, 'tsc -p tsconfig.build.json').toBe('');
    for (const path of ['package.json', 'bin', join('charts', 'internal')]) {
      cpSync(join(ROOT, path), join(app, path), { recursive: true });
    }
    // What `npm ci --omit=dev` installs: every package of the lockfile not marked dev.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    for (const [path, entry] of Object.entries(lock.packages)) {
      const name = path.slice('node_modules/'.length);
      if (!path.startsWith('node_modules/') || name.includes('node_modules/') || entry.dev) continue;
      mkdirSync(dirname(join(app, path)), { recursive: true });
      symlinkSync(join(ROOT, path), join(app, path));
    }
  }, 180_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  function cli(...args: string[]) {
    // As the ENTRYPOINT runs it: node refuses a flag it does not know (exit 9), so this also checks the flags.
    return spawnSync(process.execPath, [...SERVER_NODE_FLAGS, join(app, 'bin', 'gardener-ipv6.js'), ...args], {
      encoding: 'utf8',
      cwd: app,
      env: { PATH: process.env.PATH ?? '', HOME: app, NODE_ENV: 'production' },
    });
  }

  it('imports only Node built-ins and production dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
      );
    const imported = new Set<string>();
    for (const file of files(join(app, 'dist'))) {
      // `from`/`import` as keywords, not inside a string such as ctr's 'images', 'import' arguments.
      const imports = /(?:^|[^\w'"$.])(?:from|import)\s*\(?\s*['"]([^'".][^'"]*)['"]/gm;
      for (const m of readFileSync(file, 'utf8').matchAll(imports)) {
        const spec = m[1]!;
        if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
        imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
      expect(relative(app, file)).not.toMatch(/\.test\.js$/);
    }
    expect([...imported]).toEqual(expect.arrayContaining(['@kubernetes/client-node', 'yaml', 'zod']));
    for (const name of imported) expect(Object.keys(pkg.dependencies), name).toContain(name);
  });

  it('runs the CLI from dist/ with those packages: validate, render and `run --help`', () => {
    const validate = cli(
      'validate',
      '-f',
      join(ROOT, 'examples', 'shoot-ipv6.yaml'),
      '--seed',
      join(ROOT, 'examples', 'seed-ipv6.yaml'),
      '--feature-gates',
      'IPv6SingleStack=true',
    );
    expect(validate.stderr).toBe('');
    expect(validate.stdout).toContain('is valid');
    expect(validate.status).toBe(0);
    const render = cli(
      'render',
      '-f',
      join(ROOT, 'examples', 'seed-ipv6.yaml'),
      '-f',
      join(ROOT, 'examples', 'shoot-ipv6.yaml'),
      '--feature-gates',
      'IPv6SingleStack=true',
    );
    expect(render.status, render.stderr).toBe(0);
    expect(render.stdout).toContain('recordType: AAAA');
    // The network extension finds its chart next to dist/, as in the image.
    const calico = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(app, 'dist', 'extensions', 'network', 'manifests.js'))});
         m.loadCalicoChart(); console.log(m.calicoChartDir());`,
      ],
      { encoding: 'utf8', cwd: app },
    );
    expect(calico.stderr).toBe('');
    expect(calico.stdout.trim()).toBe(join(app, 'charts', 'internal', 'calico'));
    const help = cli('run', '--help');
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('--no-webhook-register');
  });
});
