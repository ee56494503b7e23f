/** What the shoot flow does with the control plane and the machines, awake, hibernating and waking up. */
import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import { hibernationPlan } from '../../../src/gardenlet/shoot/hibernation.js';
import { ipv4ShootObject, shootObject } from '../../fixtures/objects.js';

const withHibernation = (shoot: Shoot, enabled: boolean | undefined, hibernated?: boolean): Shoot => {
  shoot.spec.hibernation = enabled === undefined ? {} : { enabled };
  if (hibernated !== undefined) shoot.status = { ...shoot.status, hibernated };
  return shoot;
};

describe('the hibernation plan of a shoot', () => {
  it('deploys both while awake (enabled unset or false)', () => {
    for (const enabled of [undefined, false]) {
      expect(hibernationPlan(withHibernation(ipv4ShootObject(), enabled), true)).toEqual({
        controlPlane: 'deploy',
        machines: 'deploy',
        hibernated: false,
      });
    }
  });

  it('stops both when hibernation is enabled, and says hibernated', () => {
    expect(hibernationPlan(withHibernation(ipv4ShootObject(), true), true)).toEqual({
      controlPlane: 'hibernate',
      machines: 'hibernate',
      hibernated: true,
    });
  });

  it('deploys both again when a hibernated shoot wakes up; it is hibernated until that succeeded', () => {
    const waking = withHibernation(ipv4ShootObject(), false, true);
    expect(hibernationPlan(waking, true)).toEqual({ controlPlane: 'deploy', machines: 'deploy', hibernated: false });
  });

  it('has no machines to stop without pools, and nothing to run without control plane workloads', () => {
    expect(hibernationPlan(withHibernation(shootObject({ workers: 0 }), true), true)).toEqual({
      controlPlane: 'hibernate',
      machines: 'none',
      hibernated: true,
    });
    expect(hibernationPlan(withHibernation(ipv4ShootObject(), true), false)).toEqual({
      controlPlane: 'none',
      machines: 'none',
      hibernated: true,
    });
  });
});
