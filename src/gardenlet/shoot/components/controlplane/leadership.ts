/**
 * Whether the control plane's controllers lead. kube-controller-manager and kube-scheduler run one replica each with
 * leader election (args.ts), so in a rollout the new pod is Ready (its health endpoints answer) before it leads: the
 * old one leads until it stops and releases its Lease, and the new one takes the Lease at its next try, up to a retry
 * period later. Until then the shoot runs the old controllers' flags (a Node registering then gets pod ranges of the
 * old families only, for good) or no controllers at all (no Endpoints follow the pods), so a deploy is only done when
 * a running pod of the current template holds each Lease.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Lease } from '../../../../runtime/leader-election.js';
import { COMPONENTS } from './names.js';

/** The controllers that lead through a Lease of their own name in the shoot's `kube-system`. */
export const LEADING_CONTROLLERS = [COMPONENTS.kubeControllerManager, COMPONENTS.kubeScheduler] as const;

export type ControllerPod = KubernetesObject;

/**
 * The pod a Lease's holder runs in: client-go's identity is `<hostname>_<uuid>` and a pod's hostname is its name.
 * Undefined when nobody holds it (released, or never taken) or the holder stopped renewing it.
 */
export function leaseHolderPod(lease: Lease | undefined, now: Date): string | undefined {
  const holder = lease?.spec?.holderIdentity;
  if (!holder) return undefined;
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  const durationMs = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
  if (Number.isNaN(renewed) || renewed + durationMs < now.getTime()) return undefined;
  const separator = holder.indexOf('_');
  return separator > 0 ? holder.slice(0, separator) : holder;
}

/**
 * Why a controller does not lead yet, or undefined when it does: its Lease is held, and held by one of `pods` (the
 * component's pods of the current template that are not being deleted).
 */
export function notLeading(
  controller: string,
  lease: Lease | undefined,
  pods: readonly ControllerPod[],
  now: Date,
): string | undefined {
  const holder = leaseHolderPod(lease, now);
  if (holder === undefined) return `${controller} does not lead yet (nobody holds its Lease)`;
  const current = pods.filter((p) => p.metadata?.deletionTimestamp === undefined).map((p) => p.metadata?.name);
  if (current.includes(holder)) return undefined;
  return `${controller} of the current template does not lead yet (its Lease is held by ${holder})`;
}
