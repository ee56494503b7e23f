/**
 * Wiring of the `local` DNS extension: the DNSRecord informer feeding one controller, for DNSRecords with
 * `spec.type: local` only.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Controller } from '../../runtime/controller.js';
import { requestFor } from '../../runtime/controller.js';
import type { Manager } from '../../runtime/manager.js';
import { LocalDNSActuator, type PublisherFactory } from './actuator.js';
import { DNSRecordReconciler, dnsRecordRef, isLocalDNSRecord } from './reconciler.js';
import type { Transport } from './transport.js';
import { specOrMetadataChanged } from '../../runtime/predicates.js';

export const CONTROLLER_NAME = 'dnsrecord-local';

export interface DNSExtensionOptions {
  readonly workers?: number;
  /** Only DNSRecords of this namespace. @default all namespaces */
  readonly namespace?: string;
  /** Re-publish interval of published records. @default DEFAULT_RESYNC_INTERVAL_MS (5 min) */
  readonly resyncIntervalMs?: number;
  /** Per DNS request. @default 2000 */
  readonly dnsTimeoutMs?: number;
  /** @default 'udp' (TCP when an answer is truncated) */
  readonly transport?: Transport;
  /** Per-key error backoff. @default the controller's (100 ms doubling to 60 s) */
  readonly backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Replaces the RFC 2136 client (tests). */
  readonly publisher?: PublisherFactory;
}

/** Adds the DNSRecord controller of provider `local` to the manager (before `manager.start()`). */
export function addDNSExtension(manager: Manager, options: DNSExtensionOptions = {}): Controller {
  const { client, clock } = manager;
  const actuator = new LocalDNSActuator({
    client,
    ...(options.dnsTimeoutMs !== undefined ? { timeoutMs: options.dnsTimeoutMs } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
    ...(options.publisher ? { publisher: options.publisher } : {}),
  });
  const records = manager.informer<KubernetesObject>(
    dnsRecordRef,
    options.namespace ? { namespace: options.namespace } : {},
  );
  return manager
    .controller({
      name: CONTROLLER_NAME,
      reconciler: new DNSRecordReconciler({
        client,
        clock,
        actuator,
        ...(options.resyncIntervalMs !== undefined ? { resyncIntervalMs: options.resyncIntervalMs } : {}),
      }),
      ...(options.workers ? { workers: options.workers } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
    })
    .watch(records, (r) => (isLocalDNSRecord(r) ? [requestFor(r)] : []), specOrMetadataChanged);
}
