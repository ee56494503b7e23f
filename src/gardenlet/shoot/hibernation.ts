/**
 * What a reconcile of a shoot does with its control plane and machines, as Gardener's flow decides it from
 * `spec.hibernation.enabled`: deploy them (awake, or waking up: the control plane first, the machines after it),
 * stop them (hibernating: the machines first, while their API server still answers, then the control plane), or
 * nothing (a gardenlet without control planes, a shoot without pools).
 */
import { hibernationEnabled } from '../../apis/core/v1beta1/hibernation.js';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';

export type PartPlan = 'deploy' | 'hibernate' | 'none';

export interface HibernationPlan {
  readonly controlPlane: PartPlan;
  readonly machines: PartPlan;
  /** `status.hibernated` once the reconcile succeeded. */
  readonly hibernated: boolean;
}

export function hibernationPlan(shoot: Shoot, controlPlaneWorkloads: boolean): HibernationPlan {
  const hibernate = hibernationEnabled(shoot);
  const pools = (shoot.spec.provider?.workers?.length ?? 0) > 0;
  const part = (present: boolean): PartPlan => (!present ? 'none' : hibernate ? 'hibernate' : 'deploy');
  return {
    controlPlane: part(controlPlaneWorkloads),
    machines: part(controlPlaneWorkloads && pools),
    hibernated: hibernate,
  };
}
