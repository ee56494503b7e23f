/**
 * CustomResourceDefinitions generated from the zod schemas, so the API server checks the same shapes the code uses.
 *
 * zod's JSON Schema is close to a Kubernetes structural schema; `toStructural` removes what the API server rejects
 * or prunes differently (loose objects become `x-kubernetes-preserve-unknown-fields`).
 */
import { z } from 'zod';
import { ALL_KINDS, type KindInfo } from './registry.js';

export type JSONSchemaProps = Record<string, unknown>;

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
const INT32 = { min: -2147483648, max: 2147483647 };
/** Keywords zod may emit that have no place in a structural schema. */
const DROPPED_KEYWORDS = ['$schema', 'id', '$id', 'definitions', '$defs'];

export function crdFor(kind: KindInfo<unknown>): Record<string, unknown> {
  const schema = openAPIV3Schema(kind);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${kind.group}` },
    spec: {
      group: kind.group,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.singular,
        ...(kind.shortNames.length > 0 ? { shortNames: [...kind.shortNames] } : {}),
      },
      scope: kind.scope,
      versions: [
        {
          name: kind.version,
          served: true,
          storage: true,
          additionalPrinterColumns: kind.columns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
        },
      ],
    },
  };
}

export function allCRDs(): { fileName: string; crd: Record<string, unknown> }[] {
  return (ALL_KINDS as readonly KindInfo<unknown>[]).map((kind) => ({
    fileName: `${kind.group}_${kind.plural}.yaml`,
    crd: crdFor(kind),
  }));
}

export function openAPIV3Schema(kind: KindInfo<unknown>): JSONSchemaProps {
  const raw = z.toJSONSchema(kind.schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' });
  const root = toStructural(raw as JSONSchemaProps);
  const properties = root.properties as Record<string, JSONSchemaProps>;
  // The API server owns these three; their schema is fixed by Kubernetes.
  properties.apiVersion = { type: 'string', description: 'APIVersion defines the versioned schema of this object.' };
  properties.kind = { type: 'string', description: 'Kind is a string value representing the REST resource.' };
  properties.metadata = { type: 'object' };
  // Objects with a spec need one (a Secret-like kind has none).
  if (properties.spec !== undefined) root.required = ['spec'];
  else delete root.required;
  return root;
}

/** Rewrites one zod JSON Schema node (and its children) into a structural schema node. */
export function toStructural(node: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = {};
  // An int-or-string is zod's union of a number and a string: the marker says it all, `anyOf` is not structural.
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYWORDS.includes(key) || (intOrString && key === 'anyOf')) continue;
    switch (key) {
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, JSONSchemaProps>).map(([name, child]) => [name, toStructural(child)]),
        );
        break;
      case 'items':
        out.items = toStructural(value as JSONSchemaProps);
        break;
      case 'additionalProperties':
        // `{}` marks a loose object: keep unknown fields. `false` (strict) is the API server's default anyway.
        if (value === false) break;
        if (isEmptySchema(value)) out['x-kubernetes-preserve-unknown-fields'] = true;
        else out.additionalProperties = toStructural(value as JSONSchemaProps);
        break;
      case 'minimum':
      case 'maximum':
        if (!SAFE_INTEGER_BOUNDS.has(value as number)) out[key] = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (out.type === 'integer') {
    const isInt32 = out.minimum === INT32.min && out.maximum === INT32.max;
    out.format = isInt32 ? 'int32' : 'int64';
    if (isInt32) {
      delete out.minimum;
      delete out.maximum;
    }
  }
  return out;
}

function isEmptySchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/**
 * The structural-schema rules the API server enforces that zod output could break. Returns one message per
 * violation, with the JSON path.
 */
export function structuralViolations(node: JSONSchemaProps, path = '$'): string[] {
  const problems: string[] = [];
  for (const keyword of ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'definitions', '$defs', 'const']) {
    if (keyword in node) problems.push(`${path}: ${keyword} is not allowed`);
  }
  if (node.additionalProperties === false) problems.push(`${path}: additionalProperties: false is not allowed`);
  if (node.properties && node.additionalProperties) {
    problems.push(`${path}: properties and additionalProperties are mutually exclusive`);
  }
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  if (node.type === undefined && !preserve && !intOrString) problems.push(`${path}: type is required`);
  if (typeof node.pattern === 'string' && /\(\?[=!<]/.test(node.pattern)) {
    problems.push(`${path}: pattern uses a lookaround, which Go's regexp engine lacks`);
  }
  for (const [name, child] of Object.entries((node.properties as Record<string, JSONSchemaProps>) ?? {})) {
    problems.push(...structuralViolations(child, `${path}.${name}`));
  }
  if (node.items) problems.push(...structuralViolations(node.items as JSONSchemaProps, `${path}[*]`));
  if (typeof node.additionalProperties === 'object') {
    problems.push(...structuralViolations(node.additionalProperties as JSONSchemaProps, `${path}{*}`));
  }
  return problems;
}
