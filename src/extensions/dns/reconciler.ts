/**
 * The DNSRecord controller's reconciler: the generic extension reconciler (src/extensions/common/reconciler.ts) with
 * the `local` DNS actuator, for DNSRecords of type `local`, decoded and defaulted as the API server would.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { decode } from '../../apis/admission.js';
import type { DNSRecord } from '../../apis/extensions/v1alpha1/dnsrecord.js';
import { DNSRecords } from '../../apis/registry.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { Clock } from '../../runtime/clock.js';
import { ExtensionReconciler, hasExtensionType, type Decoded } from '../common/reconciler.js';
import { dnsRecordRef, EXTENSION_TYPE, type DNSRecordActuator, type Published } from './actuator.js';

export const FINALIZER = 'extensions.gardener.cloud/dnsrecord-local';
/**
 * Published records are published again this often, so a DNS server that lost its data (a restart without its
 * journal) is healed and an unreachable one shows up as Error. Re-publishing unchanged data changes nothing at the
 * server (BIND9 keeps its serial).
 */
export const DEFAULT_RESYNC_INTERVAL_MS = 5 * 60_000;

export { dnsRecordRef };

/** True for DNSRecords this extension serves. */
export function isLocalDNSRecord(record: object): boolean {
  return hasExtensionType(record, EXTENSION_TYPE);
}

/** A DNSRecord as read, decoded and defaulted. */
function decodeDNSRecord(object: KubernetesObject): Decoded<DNSRecord> {
  const decoded = decode(DNSRecords, object);
  return decoded.value ? { value: DNSRecords.default(decoded.value) } : { errors: decoded.errors };
}

export interface DNSRecordReconcilerOptions {
  readonly client: ResourceClient;
  readonly actuator: DNSRecordActuator;
  readonly clock?: Clock;
  /** @default DEFAULT_RESYNC_INTERVAL_MS */
  readonly resyncIntervalMs?: number;
}

export class DNSRecordReconciler extends ExtensionReconciler<DNSRecord, Published> {
  constructor(opts: DNSRecordReconcilerOptions) {
    super({
      client: opts.client,
      ref: dnsRecordRef,
      extensionType: EXTENSION_TYPE,
      finalizer: FINALIZER,
      actuator: opts.actuator,
      ...(opts.clock ? { clock: opts.clock } : {}),
      resyncIntervalMs: opts.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS,
      decode: decodeDNSRecord,
    });
  }
}
