/**
 * Every templated value stays data whatever it holds: quotes, newlines, handlebars and YAML syntax (anchors,
 * aliases, tags, document markers, comments, `: `), YAML 1.1 booleans, control and non-BMP characters. The values
 * are injected past validation on purpose, straight into the chart values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_CHECKSUM_ANNOTATION,
  loadCalicoChart,
  parseManifests,
  renderCalicoManifests,
  renderCalicoTemplates,
  type ChartValues,
  type Manifest,
} from '../../../src/extensions/network/manifests.js';
import { calicoValues, type CalicoValues } from '../../../src/extensions/network/values.js';
import { CNI_MTU_PLACEHOLDER } from '../../../src/extensions/network/cni.js';
import { dualStackNetwork, find, IPV6_PODS } from './fixtures.js';

const HOSTILE = [
  '"',
  "'",
  '\\',
  'a"b\'c',
  'line\nbreak',
  '\r\n',
  'trailing newline\n',
  '\ttab',
  '{{values.namespace}}',
  '{{json values}}',
  '{{#each values.ipPools}}x{{/each}}',
  '}}',
  '{{',
  '{{{raw}}}',
  '&a',
  '*a',
  '&a x\n*a',
  '<<: *a',
  'key: value',
  'a: b\nc: d',
  '# comment',
  'x #not a comment',
  '---',
  '...',
  '\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: evil\n',
  '"\n---\nkind: Secret\n',
  '!!binary aGVsbG8=',
  '!local tag',
  '%YAML 1.1',
  '[1, 2]',
  '{a: 1}',
  '- item',
  '? complex',
  '|',
  '>-',
  '@',
  '`',
  'yes',
  'no',
  'on',
  'null',
  '~',
  'true',
  '0x1F',
  '1e3',
  '.inf',
  '010',
  '  leading and trailing  ',
  '\u2028',
  '\u2029',
  '\u0085',
  '\ufeff',
  '\u0000',
  '\u007f',
  '\u001b[31m',
  '😀',
  '\ud800',
  'ümlaut',
  '0.0.0.0',
];

interface InjectionPoint {
  readonly name: string;
  inject(values: ChartValues, hostile: string): ChartValues;
}

const IMAGES = loadCalicoChart().defaults.images;
const withEnv = (v: ChartValues, name: string, value: (old: string) => string): ChartValues => ({
  ...v,
  node: { ...v.node, env: v.node.env.map((e) => (e.name === name ? { ...e, value: value(e.value) } : e)) },
});
const withPool = (v: ChartValues, change: Partial<CalicoValues['ipPools'][number]>): ChartValues => ({
  ...v,
  ipPools: v.ipPools.map((p) => (p.name === 'default-ipv6-ippool' ? { ...p, ...change } : p)),
});
const withPoolSpec = (v: ChartValues, change: Record<string, unknown>): ChartValues => ({
  ...v,
  ipPools: v.ipPools.map((p) => (p.name === 'default-ipv6-ippool' ? { ...p, spec: { ...p.spec, ...change } } : p)),
});
const withSidecarEnv = (v: ChartValues, name: string, value: string): ChartValues => ({
  ...v,
  node: {
    ...v.node,
    snatSidecars: v.node.snatSidecars.map((c, i) =>
      i === 1 ? { ...c, env: c.env.map((e) => (e.name === name ? { ...e, value } : e)) } : c,
    ),
  },
});
const withTyphaEnv = (v: ChartValues, name: string, value: string): ChartValues => ({
  ...v,
  typha: { ...v.typha, env: v.typha.env.map((e) => (e.name === name ? { ...e, value } : e)) },
});
const withCNI = (v: ChartValues, change: Record<string, unknown>): ChartValues => ({
  ...v,
  cni: { ...v.cni, plugins: v.cni.plugins.map((p, i) => (i === 0 ? { ...p, ...change } : p)) },
});
const CRDS = loadCalicoChart().defaults.crds;

const POINTS: InjectionPoint[] = [
  { name: 'namespace', inject: (v, s) => ({ ...v, namespace: s }) },
  { name: 'images.node', inject: (v, s) => ({ ...v, images: { ...IMAGES, node: s } }) },
  { name: 'images.cni', inject: (v, s) => ({ ...v, images: { ...IMAGES, cni: s } }) },
  { name: 'images.kubeControllers', inject: (v, s) => ({ ...v, images: { ...IMAGES, kubeControllers: s } }) },
  { name: 'images.typha', inject: (v, s) => ({ ...v, images: { ...IMAGES, typha: s } }) },
  { name: 'backend', inject: (v, s) => ({ ...v, backend: s }) },
  { name: 'vethMTU', inject: (v, s) => ({ ...v, vethMTU: s }) },
  { name: 'typhaServiceName', inject: (v, s) => ({ ...v, typhaServiceName: s }) },
  { name: 'FELIX_SERVICELOOPPREVENTION', inject: (v, s) => withEnv(v, 'FELIX_SERVICELOOPPREVENTION', () => s) },
  {
    name: 'node resources cpu',
    inject: (v, s) => ({ ...v, node: { ...v.node, resources: { ...v.node.resources, cpu: s } } }),
  },
  {
    name: 'node resources memory',
    inject: (v, s) => ({ ...v, node: { ...v.node, resources: { ...v.node.resources, memory: s } } }),
  },
  {
    name: 'typha resources cpu',
    inject: (v, s) => ({ ...v, typha: { ...v.typha, resources: { ...v.typha.resources, cpu: s } } }),
  },
  {
    name: 'typha resources memory',
    inject: (v, s) => ({ ...v, typha: { ...v.typha, resources: { ...v.typha.resources, memory: s } } }),
  },
  { name: 'TYPHA_HEALTHHOST', inject: (v, s) => withTyphaEnv(v, 'TYPHA_HEALTHHOST', s) },
  { name: 'sidecar POD_CIDR', inject: (v, s) => withSidecarEnv(v, 'POD_CIDR', s) },
  { name: 'sidecar IPTABLES', inject: (v, s) => withSidecarEnv(v, 'IPTABLES', s) },
  { name: 'IP_AUTODETECTION_METHOD', inject: (v, s) => withEnv(v, 'IP_AUTODETECTION_METHOD', () => s) },
  { name: 'IP6_AUTODETECTION_METHOD', inject: (v, s) => withEnv(v, 'IP6_AUTODETECTION_METHOD', () => s) },
  { name: 'CALICO_IPV6POOL_CIDR', inject: (v, s) => withEnv(v, 'CALICO_IPV6POOL_CIDR', () => s) },
  {
    name: 'an env name',
    inject: (v, s) => ({ ...v, node: { ...v.node, env: [...v.node.env, { name: s, value: 'x' }] } }),
  },
  { name: 'pool name', inject: (v, s) => withPool(v, { name: s }) },
  { name: 'pool cidr', inject: (v, s) => withPoolSpec(v, { cidr: s }) },
  { name: 'pool nodeSelector', inject: (v, s) => withPoolSpec(v, { nodeSelector: s }) },
  {
    name: 'no-snat pool cidr',
    inject: (v, s) => ({
      ...v,
      ipPools: v.ipPools.map((p) => (p.name === 'no-snat-for-node-cidr' ? { ...p, spec: { ...p.spec, cidr: s } } : p)),
    }),
  },
  {
    name: 'probe argument',
    inject: (v, s) => ({
      ...v,
      node: { ...v.node, livenessProbe: v.node.livenessProbe.map((a, i) => (i === 1 ? s : a)) },
    }),
  },
  { name: 'CRD plural', inject: (v, s) => ({ ...v, crds: CRDS.map((c, i) => (i === 0 ? { ...c, plural: s } : c)) }) },
  { name: 'CRD kind', inject: (v, s) => ({ ...v, crds: CRDS.map((c, i) => (i === 0 ? { ...c, kind: s } : c)) }) },
  { name: 'CNI log_level', inject: (v, s) => withCNI(v, { log_level: s }) },
  { name: 'CNI nodename', inject: (v, s) => withCNI(v, { nodename: s }) },
];

/** Every leaf of the objects by its path; the CNI configuration string is expanded into its JSON leaves. */
function leaves(
  manifests: readonly Manifest[],
  prefix: string,
  out = new Map<string, unknown>(),
): Map<string, unknown> {
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (typeof value === 'object' && value !== null) {
      for (const [k, item] of Object.entries(value)) walk(item, `${path}.${JSON.stringify(k)}`);
    } else if (path.endsWith('."cni_network_config"') && typeof value === 'string') {
      walk(JSON.parse(value.replace(`"mtu": ${CNI_MTU_PLACEHOLDER}`, '"mtu": 0')), `${path}<json>`);
    } else out.set(path, value);
  };
  manifests.forEach((m, i) => walk(m, `${prefix}[${i}]`));
  return out;
}

/**
 * The leaves of every rendered object, by template. This is renderCalicoManifests' pipeline (render the templates,
 * parse and check each), except that a template whose text equals the base render's is not parsed again: the same
 * text gives the same objects, and parsing is what takes the time.
 */
function renderLeaves(values: ChartValues, base?: Map<string, { text: string; leaves: Map<string, unknown> }>) {
  const out = new Map<string, { text: string; leaves: Map<string, unknown> }>();
  for (const [name, text] of renderCalicoTemplates(values)) {
    const known = base?.get(name);
    out.set(name, known && known.text === text ? known : { text, leaves: leaves(parseManifests(text, name), name) });
  }
  return out;
}

const flat = (rendered: ReturnType<typeof renderLeaves>) =>
  new Map([...rendered.values()].flatMap((r) => [...r.leaves]));

/**
 * Renders `values` with `hostile` injected and checks it stayed data: the same documents and the same key paths
 * as without it, and every leaf that changed holds the hostile string (alone or as part of a name the template
 * builds), apart from the ConfigMap checksum.
 */
function expectData(base: ChartValues, point: InjectionPoint, hostile: string): void {
  const baseRender = baseRendered(base);
  const before = flat(baseRender);
  const after = flat(renderLeaves(point.inject(base, hostile), baseRender));
  const beforeKeys = [...before.keys()];
  const afterKeys = [...after.keys()];
  const holds = (value: unknown) => typeof value === 'string' && value.includes(hostile);
  expect([...after.values()].some(holds), 'the hostile string is in the output').toBe(true);
  if (point.name === 'an env name') {
    // One more env entry (its name and its value), nothing else.
    const added = afterKeys.filter((k) => !before.has(k));
    expect(added.map((k) => after.get(k))).toEqual([hostile, 'x']);
    expect(afterKeys.filter((k) => before.has(k))).toEqual(beforeKeys);
    return;
  }
  expect(afterKeys).toEqual(beforeKeys);
  for (const [path, value] of after) {
    if (Object.is(value, before.get(path)) || path.includes(JSON.stringify(CONFIG_CHECKSUM_ANNOTATION))) continue;
    expect(holds(value), `${path}: ${JSON.stringify(value)}`).toBe(true);
  }
}

const baseCache = new WeakMap<ChartValues, ReturnType<typeof renderLeaves>>();
function baseRendered(base: ChartValues): ReturnType<typeof renderLeaves> {
  let cached = baseCache.get(base);
  if (!cached) baseCache.set(base, (cached = renderLeaves(base)));
  return cached;
}

describe('hostile strings stay data', () => {
  const network = dualStackNetwork();
  // Every templated value is rendered: both families, overlay off (the pools, the no-SNAT pool and the sidecars),
  // typha on, kube-controllers on (routes by bird), a loop prevention setting.
  const base: ChartValues = calicoValues(
    network,
    {
      ipv4: { autoDetectionMethod: 'first-found' },
      ipv6: { autoDetectionMethod: 'first-found' },
      overlay: { enabled: false, createPodRoutes: true },
      serviceLoopPrevention: 'Drop',
    },
    { shoot: { statusPods: [IPV6_PODS], nodes: '10.250.0.0/16' } },
  );

  it.each(POINTS.map((p) => [p.name, p] as const))('through %s', (_name, point) => {
    for (const hostile of HOSTILE) {
      try {
        expectData(base, point, hostile);
      } catch (e) {
        throw new Error(`${point.name} = ${JSON.stringify(hostile)}: ${(e as Error).message}`, { cause: e });
      }
    }
  });

  it('any string at all (property)', () => {
    const points = POINTS.filter((p) =>
      ['namespace', 'IP6_AUTODETECTION_METHOD', 'pool name', 'CNI nodename'].includes(p.name),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        fc.constantFrom(...points),
        (s, point) => {
          expectData(base, point, s);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('every templated value of the chart is an injection point here', () => {
    // The values that reach the templates: the pools' names and specs, both sidecars, typha, kube-controllers.
    expect(base.ipPools.map((p) => p.name)).toEqual([
      'default-ipv4-ippool',
      'no-snat-for-node-cidr',
      'default-ipv6-ippool',
    ]);
    expect(base.node.snatSidecars).toHaveLength(2);
    expect(base.typha.enabled && base.kubeControllers.enabled).toBe(true);
    expect(base.node.env.map((e) => e.name)).toContain('FELIX_SERVICELOOPPREVENTION');
  });

  it('a sidecar name that is not a DNS label is refused by the manifest checks, whatever it holds', () => {
    for (const hostile of HOSTILE.filter((h) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(h))) {
      const values = {
        ...base,
        node: { ...base.node, snatSidecars: base.node.snatSidecars.map((c) => ({ ...c, name: hostile })) },
      };
      expect(() => renderCalicoManifests(values), JSON.stringify(hostile)).toThrow(/must be a DNS label/);
    }
  });

  it('a hostile value never adds a document: e.g. a Secret smuggled in through the namespace', () => {
    const smuggled = '"\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: evil\n  namespace: kube-system\n';
    const manifests = renderCalicoManifests({ ...base, namespace: smuggled });
    expect(manifests).toHaveLength(renderCalicoManifests(base).length);
    expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([]);
    expect(find(manifests, 'ServiceAccount', 'calico-node').metadata.namespace).toBe(smuggled);
  });
});
