/**
 * The shoot's `HibernationPossible` constraint, as Gardener's care controller computes it: a webhook in the shoot
 * that would refuse pods or nodes while its own backend is not running (failure policy `Fail`, or unset, which the
 * API server defaults to `Fail`, with a rule on CREATE or UPDATE of core `pods` or `nodes`) would keep a woken-up
 * shoot from ever getting its machines and system pods back. The admission refuses to hibernate while the
 * constraint is not True. Pure.
 */
import type { HealthCheck } from './health.js';

interface RuleWithOperations {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly operations?: readonly string[];
}

interface Webhook {
  readonly name?: string;
  readonly failurePolicy?: string;
  readonly rules?: readonly RuleWithOperations[];
}

/** A Validating- or MutatingWebhookConfiguration of the shoot. */
export interface WebhookConfiguration {
  readonly kind?: string;
  readonly metadata?: { readonly name?: string };
  readonly webhooks?: readonly Webhook[];
}

/** Whether the webhook could refuse the pods or Nodes a wake-up creates while nothing serves it. */
export function isProblematicWebhook(webhook: Webhook): boolean {
  if (webhook.failurePolicy !== undefined && webhook.failurePolicy !== 'Fail') return false;
  return (webhook.rules ?? []).some(
    (rule) =>
      (rule.apiGroups ?? []).includes('') &&
      (rule.resources ?? []).some((r) => r === 'pods' || r === 'nodes') &&
      (rule.operations ?? []).some((op) => op === 'CREATE' || op === 'UPDATE' || op === '*'),
  );
}

/** The constraint from the shoot's webhook configurations: False naming the first problematic webhook. */
export function hibernationPossible(configurations: readonly WebhookConfiguration[]): HealthCheck {
  for (const configuration of configurations) {
    for (const webhook of configuration.webhooks ?? []) {
      if (!isProblematicWebhook(webhook)) continue;
      return {
        ok: false,
        reason: 'ProblematicWebhooks',
        message:
          `Shoot cannot be hibernated because of ${configuration.kind} "${configuration.metadata?.name}": webhook ` +
          `"${webhook.name}" with failurePolicy "${webhook.failurePolicy ?? 'nil'}" will probably prevent the Shoot ` +
          'from being woken up again',
      };
    }
  }
  return { ok: true, reason: 'NoProblematicWebhooks', message: 'Shoot can be hibernated.' };
}
