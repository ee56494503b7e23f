import { describe, expect, it } from 'vitest';
import { hibernationPossible, isProblematicWebhook } from '../../../../src/gardenlet/shoot/care/constraints.js';

const rule = (resources: string[], operations: string[], apiGroups = ['']) => ({ apiGroups, resources, operations });

describe('the HibernationPossible constraint', () => {
  it.each<[string, Parameters<typeof isProblematicWebhook>[0], boolean]>([
    ['Fail on CREATE pods', { failurePolicy: 'Fail', rules: [rule(['pods'], ['CREATE'])] }, true],
    ['an unset policy (Fail) on UPDATE nodes', { rules: [rule(['nodes'], ['UPDATE'])] }, true],
    ['Fail on every operation of pods', { failurePolicy: 'Fail', rules: [rule(['pods'], ['*'])] }, true],
    ['Ignore on CREATE pods', { failurePolicy: 'Ignore', rules: [rule(['pods'], ['CREATE'])] }, false],
    ['Fail on DELETE pods only', { failurePolicy: 'Fail', rules: [rule(['pods'], ['DELETE'])] }, false],
    [
      'Fail on CREATE deployments',
      { failurePolicy: 'Fail', rules: [rule(['deployments'], ['CREATE'], ['apps'])] },
      false,
    ],
    ['Fail on pods of another group', { failurePolicy: 'Fail', rules: [rule(['pods'], ['CREATE'], ['x.io'])] }, false],
  ])('%s: problematic %s', (_, webhook, problematic) => {
    expect(isProblematicWebhook(webhook)).toBe(problematic);
  });

  it('is False naming the first problematic webhook, True without one', () => {
    const harmless = {
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'ok' },
      webhooks: [{ name: 'a', failurePolicy: 'Ignore', rules: [rule(['pods'], ['CREATE'])] }],
    };
    const blocking = {
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'policy' },
      webhooks: [{ name: 'pods.policy.example.com', rules: [rule(['pods'], ['CREATE'])] }],
    };
    expect(hibernationPossible([harmless])).toEqual({
      ok: true,
      reason: 'NoProblematicWebhooks',
      message: 'Shoot can be hibernated.',
    });
    expect(hibernationPossible([harmless, blocking])).toEqual({
      ok: false,
      reason: 'ProblematicWebhooks',
      message:
        'Shoot cannot be hibernated because of ValidatingWebhookConfiguration "policy": webhook ' +
        '"pods.policy.example.com" with failurePolicy "nil" will probably prevent the Shoot from being woken up again',
    });
  });
});
