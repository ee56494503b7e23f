/**
 * Renders the calico chart (charts/internal/calico) with handlebars, not helm: HTML escaping off, strict lookups,
 * only known helpers, and every value emitted through the `json` helper, whose output (ASCII-only JSON) is always one
 * YAML scalar or flow collection. So no value can add keys, documents, anchors or tags: it stays data. The result is
 * parsed with `yaml` and checked before anyone applies it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { isAlias, isNode, parse, parseAllDocuments, visit } from 'yaml';
import { projectRoot } from '../../system/project.js';
import { type CalicoValues } from './values.js';
import { cniNetworkConfigText } from './cni.js';

/** A manifest as rendered: a Kubernetes object with type and object metadata. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The defaults in the chart's values.yaml. */
export interface ChartDefaults {
  readonly namespace: string;
  readonly images: {
    readonly node: string;
    readonly cni: string;
    readonly kubeControllers: string;
    readonly typha: string;
  };
  readonly crds: readonly { kind: string; plural: string; singular: string; scope: string }[];
}

export type ChartValues = CalicoValues & Partial<ChartDefaults>;

/** The templates, in the order their objects are returned. config.yaml comes before the DaemonSet that hashes it. */
export const TEMPLATE_ORDER = [
  'crds.yaml',
  'rbac.yaml',
  'config.yaml',
  'calico-node.yaml',
  'typha.yaml',
  'kube-controllers.yaml',
  'ippools.yaml',
] as const;
export type TemplateName = (typeof TEMPLATE_ORDER)[number];

/**
 * The script of the upstream-DNS source NAT sidecars: every minute, for each resolver of the sidecar's family in the
 * node's resolv.conf, a MASQUERADE rule for DNS from the pod range to it (added once). Fixed text; the family, the
 * pod range and the iptables binary of the family come from the container's env.
 */
export const SNAT_UPSTREAM_DNS_SCRIPT = [
  'set -eu',
  'while true; do',
  '  for ns in $(awk \'$1 == "nameserver" { print $2 }\' /host/etc/resolv.conf); do',
  '    case "$ns" in *:*) family=IPv6 ;; *) family=IPv4 ;; esac',
  '    [ "$family" = "$IP_FAMILY" ] || continue',
  '    for proto in udp tcp; do',
  '      rule="POSTROUTING -s $POD_CIDR -d $ns -p $proto --dport 53 -j MASQUERADE"',
  '      "$IPTABLES" -w -t nat -C $rule 2>/dev/null || "$IPTABLES" -w -t nat -A $rule',
  '    done',
  '  done',
  '  sleep 60',
  'done',
].join('\n');

/** The annotation on calico-node's pod template that changes whenever the rendered ConfigMap does. */
export const CONFIG_CHECKSUM_ANNOTATION = 'checksum/configmap-calico-config';

/** The chart's values are not all there, a template is broken, or a rendered object is not a valid manifest. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

export interface CalicoChart {
  readonly dir: string;
  readonly defaults: ChartDefaults;
  readonly templates: ReadonlyMap<TemplateName, HandlebarsTemplateDelegate>;
}

export function calicoChartDir(): string {
  return join(projectRoot(), 'charts', 'internal', 'calico');
}

let cachedChart: CalicoChart | undefined;

/** Loads and compiles the chart (once for the default folder). */
export function loadCalicoChart(dir?: string): CalicoChart {
  if (dir === undefined && cachedChart) return cachedChart;
  const chartDir = dir ?? calicoChartDir();
  const files = readdirSync(join(chartDir, 'templates')).sort();
  const expected = [...TEMPLATE_ORDER].sort();
  if (files.join() !== expected.join()) {
    throw new ManifestError(`${chartDir}/templates holds [${files.join(', ')}], expected [${expected.join(', ')}]`);
  }
  const handlebars = strictHandlebars();
  const templates = new Map<TemplateName, HandlebarsTemplateDelegate>();
  for (const name of TEMPLATE_ORDER) {
    const source = readFileSync(join(chartDir, 'templates', name), 'utf8');
    templates.set(
      name,
      handlebars.compile(source, {
        noEscape: true,
        strict: true,
        knownHelpersOnly: true,
        knownHelpers: { json: true, concat: true },
      }),
    );
  }
  const chart = {
    dir: chartDir,
    defaults: parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as ChartDefaults,
    templates,
  };
  if (dir === undefined) cachedChart = chart;
  return chart;
}

/**
 * The rendered text of every template, in {@link TEMPLATE_ORDER}. config.yaml is rendered first: the sha256 of its
 * text is calico-node's {@link CONFIG_CHECKSUM_ANNOTATION}, so any change of the ConfigMap rolls the pods.
 */
export function renderCalicoTemplates(
  values: ChartValues,
  chart: CalicoChart = loadCalicoChart(),
): Map<TemplateName, string> {
  const context = {
    values: { ...chart.defaults, ...definedEntries(values) },
    cniNetworkConfig: cniNetworkConfigText(values.cni),
    snatScript: SNAT_UPSTREAM_DNS_SCRIPT,
    checksums: { calicoConfig: '' },
  };
  const render = (name: TemplateName): string => {
    try {
      return chart.templates.get(name)!(context);
    } catch (e) {
      throw new ManifestError(`templates/${name}: ${(e as Error).message}`, { cause: e });
    }
  };
  const config = render('config.yaml');
  context.checksums.calicoConfig = createHash('sha256').update(config).digest('hex');
  return new Map(TEMPLATE_ORDER.map((name) => [name, name === 'config.yaml' ? config : render(name)]));
}

/**
 * Renders the chart with `values` over the chart defaults and returns the objects, in template order and document
 * order within a template. Deterministic: the same values give the same objects. Throws ManifestError when a value
 * the templates use is missing or a rendered object is not a valid manifest.
 */
export function renderCalicoManifests(values: ChartValues, chart: CalicoChart = loadCalicoChart()): Manifest[] {
  const objects: Manifest[] = [];
  for (const [name, text] of renderCalicoTemplates(values, chart)) {
    objects.push(...parseManifests(text, `templates/${name}`));
  }
  const seen = new Set<string>();
  for (const object of objects) {
    const id = `${object.apiVersion}/${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (seen.has(id)) throw new ManifestError(`${id} is rendered twice`);
    seen.add(id);
  }
  return objects;
}

/**
 * Parses a multi-document YAML text into checked manifests, skipping empty documents. Anchors, aliases and tags are
 * refused: the templates have none, and the json helper cannot produce one.
 */
export function parseManifests(text: string, source: string): Manifest[] {
  const objects: Manifest[] = [];
  parseAllDocuments(text, { uniqueKeys: true }).forEach((doc, i) => {
    const where = `${source}, document ${i + 1}`;
    if ('empty' in doc) return;
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) throw new ManifestError(`${where}: ${problem.message}`);
    // JSON output never has anchors, aliases or tags: one in the text means YAML structure came from a value.
    visit(doc, (_key, node) => {
      if (isAlias(node)) throw new ManifestError(`${where}: aliases are not allowed (*${node.source})`);
      if (isNode(node) && node.anchor) throw new ManifestError(`${where}: anchors are not allowed (&${node.anchor})`);
      if (isNode(node) && node.tag) throw new ManifestError(`${where}: tags are not allowed (${node.tag})`);
    });
    const object: unknown = doc.toJS({ maxAliasCount: 0 });
    if (object === null) return;
    objects.push(checkManifest(object, where));
  });
  return objects;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The checks a manifest passes before it is applied: type and object metadata, and the pod template shapes that are
 * cheap to check (container names and images, env entries with a string value or a valueFrom, integer ports,
 * string-only exec commands, string annotations and labels).
 */
export function checkManifest(object: unknown, where: string): Manifest {
  const fail = (message: string): never => {
    throw new ManifestError(`${where}: ${message}`);
  };
  if (!isRecord(object)) return fail('not an object');
  if (typeof object.apiVersion !== 'string' || object.apiVersion === '') fail('apiVersion must be a non-empty string');
  if (typeof object.kind !== 'string' || object.kind === '') fail('kind must be a non-empty string');
  const metadata = object.metadata;
  if (!isRecord(metadata)) return fail('metadata must be an object');
  if (typeof metadata.name !== 'string' || metadata.name === '') fail('metadata.name must be a non-empty string');
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') {
    fail('metadata.namespace must be a string');
  }
  for (const field of ['labels', 'annotations'] as const) checkStringMap(metadata[field], `metadata.${field}`, fail);
  const spec = isRecord(object.spec) ? object.spec : undefined;
  const template = spec && isRecord(spec.template) ? spec.template : undefined;
  if (template) {
    const meta = isRecord(template.metadata) ? template.metadata : {};
    for (const field of ['labels', 'annotations'] as const) {
      checkStringMap(meta[field], `spec.template.metadata.${field}`, fail);
    }
    const podSpec = isRecord(template.spec) ? template.spec : fail('spec.template.spec must be an object');
    for (const list of ['initContainers', 'containers'] as const) {
      const containers = podSpec[list] ?? [];
      if (!Array.isArray(containers)) return fail(`spec.template.spec.${list} must be a list`);
      containers.forEach((c, i) => checkContainer(c, `spec.template.spec.${list}[${i}]`, fail));
    }
  }
  return object as Manifest;
}

function checkContainer(container: unknown, path: string, fail: (message: string) => never): void {
  if (!isRecord(container)) fail(`${path} must be an object`);
  const c = container as Record<string, unknown>;
  if (typeof c.name !== 'string' || !DNS_LABEL.test(c.name)) fail(`${path}.name must be a DNS label`);
  if (typeof c.image !== 'string' || c.image === '') fail(`${path}.image must be a non-empty string`);
  const env = c.env ?? [];
  if (!Array.isArray(env)) fail(`${path}.env must be a list`);
  (env as unknown[]).forEach((entry, i) => {
    const at = `${path}.env[${i}]`;
    if (!isRecord(entry) || typeof entry.name !== 'string' || entry.name === '') fail(`${at}.name must be a string`);
    const e = entry as Record<string, unknown>;
    const keys = Object.keys(e).sort().join();
    if (keys === 'name,value') {
      if (typeof e.value !== 'string') fail(`${at}.value must be a string`);
    } else if (keys === 'name,valueFrom') {
      if (!isRecord(e.valueFrom)) fail(`${at}.valueFrom must be an object`);
    } else {
      fail(`${at} must have exactly name and value, or name and valueFrom (has ${keys})`);
    }
  });
  const ports = c.ports ?? [];
  if (!Array.isArray(ports)) fail(`${path}.ports must be a list`);
  (ports as unknown[]).forEach((port, i) => {
    const p = isRecord(port) ? port : {};
    if (!Number.isInteger(p.containerPort) || (p.containerPort as number) < 1 || (p.containerPort as number) > 65535) {
      fail(`${path}.ports[${i}].containerPort must be an integer in 1..65535`);
    }
  });
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const exec = isRecord(c[probe]) && isRecord((c[probe] as Record<string, unknown>).exec);
    if (!exec) continue;
    const command = ((c[probe] as Record<string, unknown>).exec as Record<string, unknown>).command;
    if (!Array.isArray(command) || command.length === 0 || !command.every((s) => typeof s === 'string')) {
      fail(`${path}.${probe}.exec.command must be a non-empty list of strings`);
    }
  }
  for (const list of ['command', 'args'] as const) {
    const value = c[list];
    if (value !== undefined && (!Array.isArray(value) || !value.every((s) => typeof s === 'string'))) {
      fail(`${path}.${list} must be a list of strings`);
    }
  }
}

function checkStringMap(value: unknown, path: string, fail: (message: string) => never): void {
  if (value === undefined) return;
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    fail(`${path} must map strings to strings`);
  }
}

/** The object without its keys whose value is undefined, so they don't hide a chart default. */
function definedEntries<T extends object>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A handlebars environment of its own, whose only way to print a value is `json`, and whose `if`/`each` refuse
 * values of the wrong type instead of treating them as false or empty (strict mode doesn't cover helper arguments).
 */
function strictHandlebars(): typeof Handlebars {
  const hb = Handlebars.create();
  hb.registerHelper('json', function (...args: unknown[]) {
    if (args.length !== 2) throw new Error('json takes exactly one value');
    return jsonScalar(args[0]);
  });
  hb.registerHelper('concat', function (...args: unknown[]) {
    const parts = args.slice(0, -1);
    if (!parts.every((p) => typeof p === 'string')) throw new Error('concat takes strings only');
    return parts.join('');
  });
  const builtinEach = hb.helpers.each as Handlebars.HelperDelegate;
  hb.registerHelper('each', function (this: unknown, list: unknown, options: Handlebars.HelperOptions) {
    if (!Array.isArray(list)) throw new Error(`each needs a list, got ${describe(list)}`);
    return builtinEach.call(this, list, options);
  });
  const builtinIf = hb.helpers.if as Handlebars.HelperDelegate;
  hb.registerHelper('if', function (this: unknown, condition: unknown, options: Handlebars.HelperOptions) {
    if (typeof condition !== 'boolean') throw new Error(`if needs a boolean, got ${describe(condition)}`);
    return builtinIf.call(this, condition, options);
  });
  hb.unregisterHelper('unless');
  hb.unregisterHelper('with');
  hb.unregisterHelper('lookup');
  hb.unregisterHelper('log');
  return hb;
}

function describe(value: unknown): string {
  return value === undefined ? 'a missing value' : Array.isArray(value) ? 'a list' : typeof value;
}

/**
 * The value as JSON with every character outside printable ASCII escaped: one YAML flow node on one line, whatever
 * the value holds (quotes, newlines, `{{`, `&a`, `*a`, `: `, `#`, `---`, line separators, control characters).
 */
export function jsonScalar(value: unknown): string {
  if (value === undefined) throw new Error('a value the template uses is missing');
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${value} is not a JSON number`);
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    throw new Error(`a ${typeof value} is not a JSON value`);
  }
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
