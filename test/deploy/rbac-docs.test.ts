/**
 * docs/architecture.md's RBAC table against what the chart must grant (expected-rbac.ts, which the chart and helm
 * install tests hold the chart to): each component's row names every resource it is granted (subresources included)
 * and every object it is granted by name, literally or by a backticked pattern (`allow-to-*`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/system/project.js';
import { EXPECTED_CLUSTER_GRANTS, EXPECTED_ENFORCER_GRANTS, EXPECTED_WORKLOAD_GRANTS } from './expected-rbac.js';

/** The table's first cell → the grants of that row. */
const ROWS: Record<string, string[]> = {
  admission: EXPECTED_CLUSTER_GRANTS.admission,
  gardenlet: EXPECTED_CLUSTER_GRANTS.gardenlet,
  'gardenlet, with `controlPlaneWorkloads` not `false` (besides)': EXPECTED_WORKLOAD_GRANTS,
  scheduler: EXPECTED_CLUSTER_GRANTS.scheduler,
  'network extension': EXPECTED_CLUSTER_GRANTS['network-calico'],
  'DNS extension': EXPECTED_CLUSTER_GRANTS['dns-local'],
  'network-policy enforcer (when enabled)': EXPECTED_ENFORCER_GRANTS,
};

function documentedRows(): Map<string, string> {
  const text = readFileSync(join(projectRoot(), 'docs', 'architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('### RBAC: what each ServiceAccount may do'));
  const rows = new Map<string, string>();
  for (const line of section.slice(0, section.indexOf('\n\n', section.indexOf('| component |'))).split('\n')) {
    const cells = /^\| (.+?) \| (.+) \|$/.exec(line);
    if (cells && cells[1] !== 'component' && !cells[1]!.startsWith('---')) rows.set(cells[1]!, cells[2]!);
  }
  return rows;
}

/** `group/resource[/sub][:name] verb` → the resource (with its subresource) and the name. */
function parseGrant(grant: string): { resource: string; name?: string } {
  const path = grant.split(' ')[0]!;
  const [resource, name] = path.slice(path.indexOf('/') + 1).split(':') as [string, string | undefined];
  return name === undefined ? { resource } : { resource, name };
}

/** Whether `row` names `name` in backticks, or a backticked pattern with `*` matches it. */
function namesObject(row: string, name: string): boolean {
  return [...row.matchAll(/`([^`]+)`/g)].some(([, quoted]) => {
    if (!quoted!.includes('*')) return quoted === name;
    const pattern = quoted!.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[a-z0-9-]*');
    return new RegExp(`^${pattern}$`).test(name);
  });
}

describe("docs/architecture.md's RBAC table", () => {
  const rows = documentedRows();

  it('has a row per component and nothing else', () => {
    expect([...rows.keys()].filter((k) => !k.startsWith('all but'))).toEqual(Object.keys(ROWS));
  });

  it.each(Object.entries(ROWS))('%s: names every resource and every object granted by name', (component, grants) => {
    const row = rows.get(component) ?? '';
    const lower = row.toLowerCase();
    const missing = new Set<string>();
    for (const grant of grants) {
      const { resource, name } = parseGrant(grant);
      if (!lower.includes(resource)) missing.add(resource);
      if (name !== undefined && !namesObject(row, name)) missing.add(`${resource} ${name}`);
    }
    expect([...missing]).toEqual([]);
  });

  it('sees a name missing from a row', () => {
    expect(namesObject('Secrets: get only `ca`', 'ca-etcd')).toBe(false);
    expect(namesObject('the `allow-to-*` policies', 'allow-to-dns')).toBe(true);
    expect(namesObject('the `allow-to-*` policies', 'deny-all')).toBe(false);
  });
});
