/**
 * The docs: the index lists every page of docs/, every relative link and anchor resolves, and the numbers they quote
 * are the ones of the kind configs, the chart and the scripts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/system/project.js';

const ROOT = projectRoot();
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
const PAGES = [
  join(ROOT, 'README.md'),
  ...DOCS.map((f) => join(ROOT, 'docs', f)),
  join(ROOT, 'charts', 'gardener-ipv6', 'README.md'),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#+\s+(.*)$/gm)].map((m) => anchor(m[1]!)));
}

describe.each(PAGES.map((p) => [relative(ROOT, p), p]))('%s', (_, page) => {
  const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');

  it('links only to files and headings that exist', () => {
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, hash] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? page : join(dirname(page), path);
      expect(existsSync(file), `${target} from ${relative(ROOT, page)}`).toBe(true);
      if (hash) expect(anchors(file), `#${hash} in ${relative(ROOT, file)}`).toContain(hash);
    }
  });
});

describe('docs/README.md', () => {
  it('lists every page of docs/', () => {
    const index = readFileSync(join(ROOT, 'docs', 'README.md'), 'utf8');
    const listed = new Set([...index.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]));
    const missing = DOCS.filter((page) => page !== 'README.md' && !listed.has(page));
    expect(missing, 'pages of docs/ missing from docs/README.md').toEqual([]);
  });
});

describe('getting-started-ipv6.md', () => {
  const page = readFileSync(join(ROOT, 'docs', 'getting-started-ipv6.md'), 'utf8');

  it("quotes the subnets of the kind configs and the example seed's pods", () => {
    for (const family of ['ipv6', 'dual']) {
      const cluster = parse(readFileSync(join(ROOT, 'hack', 'kind', `cluster-${family}.yaml`), 'utf8')) as {
        name: string;
        networking: { podSubnet: string; serviceSubnet: string };
      };
      expect(page).toContain(cluster.networking.podSubnet);
      expect(page).toContain(cluster.networking.serviceSubnet);
      expect(page).toContain(cluster.name.replace('-dual', '-ipv6'));
    }
    const seed = parse(readFileSync(join(ROOT, 'examples', 'seed-ipv6.yaml'), 'utf8')) as {
      spec: { networks: { pods: string; nodes: string } };
    };
    expect(page).toContain(seed.spec.networks.pods);
    expect(page).toContain(seed.spec.networks.nodes);
  });

  it('shows what the scripts print without Docker and the way out', () => {
    expect(page).toContain('Docker is not available: the docker command is not on PATH');
    expect(page).toContain('npx gardener-ipv6 up');
    const lib = readFileSync(join(ROOT, 'hack', 'local', 'lib.sh'), 'utf8');
    expect(lib).toContain('See docs/getting-started-ipv6.md, "Without Docker".');
    expect(anchors(join(ROOT, 'docs', 'getting-started-ipv6.md'))).toContain('without-docker');
  });
});

describe('shoot-control-planes.md', () => {
  it("names in its health table exactly the condition reasons the gardenlet's code writes", () => {
    const page = readFileSync(join(ROOT, 'docs', 'shoot-control-planes.md'), 'utf8');
    const table = /### Health\n\n([\s\S]*?)\n\n/.exec(page)![1]!;
    const rows = table.split('\n').slice(2);
    expect(rows.map((r) => /^\| `(\w+)`/.exec(r)?.[1])).toEqual([
      'APIServerAvailable',
      'ControlPlaneHealthy',
      'EveryNodeReady',
      'SystemComponentsHealthy',
    ]);
    // The gardenlet's conditions; a Node condition the machines report (provider-local) is named as an example.
    const sources = ['src/gardenlet', 'src/extensions/provider-local']
      .flatMap((dir) =>
        readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => join(ROOT, dir, f)),
      )
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    for (const row of rows) {
      const [, , trueWhen, falseWhen] = row.split(' | ');
      // Every reason the row names (backticked CamelCase words of its last two columns) is a literal in the code.
      const reasons = [...`${trueWhen} ${falseWhen}`.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((m) => m[1]!);
      for (const reason of reasons) expect(sources, `${reason} in the code`).toContain(`'${reason}'`);
    }
  });
});
