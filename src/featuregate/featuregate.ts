/**
 * Feature gates, parsed from Kubernetes-style `--feature-gates A=true,B=false`.
 */
export const Feature = {
  IPv6SingleStack: 'IPv6SingleStack',
  DualStack: 'DualStack',
} as const;
export type Feature = (typeof Feature)[keyof typeof Feature];

/** Both gates are alpha: off unless asked for. */
const DEFAULTS: Readonly<Record<Feature, boolean>> = { IPv6SingleStack: false, DualStack: false };

export type FeatureGates = Readonly<Record<Feature, boolean>>;

export const defaultFeatureGates: FeatureGates = DEFAULTS;

export function featureGates(overrides: Partial<Record<Feature, boolean>> = {}): FeatureGates {
  return { ...DEFAULTS, ...overrides };
}

export class FeatureGateError extends Error {}

/** Parses `A=true,B=false`. Unknown gates and non-boolean values are errors, as in Kubernetes. */
export function parseFeatureGates(text: string | undefined): FeatureGates {
  const gates: Record<Feature, boolean> = { ...DEFAULTS };
  if (text === undefined || text.trim() === '') return gates;
  for (const entry of text.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq < 0) throw new FeatureGateError(`missing bool value for feature gate ${JSON.stringify(trimmed)}`);
    const name = trimmed.slice(0, eq).trim();
    const value = trimmed
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (!isFeature(name)) {
      throw new FeatureGateError(
        `unrecognized feature gate: ${name} (known gates: ${Object.keys(DEFAULTS).sort().join(', ')})`,
      );
    }
    if (value !== 'true' && value !== 'false') {
      throw new FeatureGateError(`invalid value of ${name}=${value}, err: expected true or false`);
    }
    gates[name] = value === 'true';
  }
  return gates;
}

export function formatFeatureGates(gates: FeatureGates): string {
  return (Object.keys(gates) as Feature[])
    .sort()
    .map((name) => `${name}=${gates[name]}`)
    .join(',');
}

function isFeature(name: string): name is Feature {
  return Object.prototype.hasOwnProperty.call(DEFAULTS, name);
}
