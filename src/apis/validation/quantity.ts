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
