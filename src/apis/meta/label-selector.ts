/**
 * `metav1.LabelSelector`: its schema, whether a label set matches it, and its string form as
 * `metav1.LabelSelectorAsSelector(...).String()` prints it (for messages).
 */
import { z } from 'zod';

export const LabelSelectorRequirementSchema = z.strictObject({
  key: z.string(),
  operator: z.string(),
  values: z.array(z.string()).optional(),
});
export type LabelSelectorRequirement = z.infer<typeof LabelSelectorRequirementSchema>;

export const LabelSelectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(LabelSelectorRequirementSchema).optional(),
});
export type LabelSelector = z.infer<typeof LabelSelectorSchema>;

export const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** Every requirement holds for `labels`; an empty selector matches everything. An unknown operator never matches. */
export function labelSelectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const set = labels ?? {};
  const has = (key: string) => Object.prototype.hasOwnProperty.call(set, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || set[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    switch (operator) {
      case 'In':
        if (!has(key) || !values.includes(set[key]!)) return false;
        break;
      case 'NotIn':
        if (has(key) && values.includes(set[key]!)) return false;
        break;
      case 'Exists':
        if (!has(key)) return false;
        break;
      case 'DoesNotExist':
        if (has(key)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** `a=b,c in (x,y),!d`: requirements sorted by key, as labels.Selector's String() gives them. */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts: [string, string][] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) parts.push([key, `${key}=${value}`]);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const sorted = [...values].sort().join(',');
    const text =
      operator === 'In'
        ? `${key} in (${sorted})`
        : operator === 'NotIn'
          ? `${key} notin (${sorted})`
          : operator === 'Exists'
            ? key
            : operator === 'DoesNotExist'
              ? `!${key}`
              : `${key} ${operator} (${sorted})`;
    parts.push([key, text]);
  }
  return parts
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}
