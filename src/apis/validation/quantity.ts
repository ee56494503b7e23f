/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource): what parses, and its sign.
 */

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|n|u|[eE][+-]?\d+)?$/;

/** The message of a value that is not a quantity, as `resource.ParseQuantity` words it. */
export const QUANTITY_DETAIL =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** The sign of a Kubernetes quantity (-1, 0, 1), or undefined when it is not one. */
export function quantitySign(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.sign(value) : undefined;
  const match = QUANTITY.exec(value);
  if (!match) return undefined;
  return Math.sign(Number(match[1]));
}

const SUFFIX_FACTORS: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/**
 * The value of a Kubernetes quantity in its base unit (cores, bytes), as a float: exact for what resource figures
 * hold (millicores, mebibytes); undefined when it is not a quantity.
 */
export function quantityValue(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const match = QUANTITY.exec(value);
  if (!match) return undefined;
  const suffix = match[2] ?? '';
  const factor = suffix === '' ? 1 : /^[eE]/.test(suffix) ? 10 ** Number(suffix.slice(1)) : SUFFIX_FACTORS[suffix]!;
  return Number(match[1]) * factor;
}
