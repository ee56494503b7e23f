/**
 * The generic part of the DNSRecord controller, as Gardener's extension library does it: finalizer, the actuator's
 * reconcile or delete, and `status.lastOperation`, `status.lastError`, `status.observedGeneration`, `status.zone`.
 */
import { decode } from '../../apis/admission.js';
import type { DNSRecord } from '../../apis/extensions/v1alpha1/dnsrecord.js';
import { DNSRecords } from '../../apis/registry.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { dnsRecordRef, EXTENSION_TYPE, type DNSRecordActuator, type Published } from './actuator.js';
import { ConfigurationError } from './errors.js';
import { extensionStatusPatch, operationType, type ExtensionOutcome, type OperationType } from '../common/status.js';
import { DNSUpdateError } from './rfc2136.js';

export const FINALIZER = 'extensions.gardener.cloud/dnsrecord-local';
/**
 * Published records are published again this often, so a DNS server that lost its data (a restart without its
 * journal) is healed and an unreachable one shows up as Error. Re-publishing unchanged data changes nothing at the
 * server (BIND9 keeps its serial).
 */
export const DEFAULT_RESYNC_INTERVAL_MS = 5 * 60_000;

export { dnsRecordRef };

/** Gardener's error codes (`gardencorev1beta1.ErrorCode`) for `status.lastError.codes`. */
export const ErrorCodes = {
  unauthenticated: 'ERR_INFRA_UNAUTHENTICATED',
  unauthorized: 'ERR_INFRA_UNAUTHORIZED',
  configuration: 'ERR_CONFIGURATION_PROBLEM',
  dependencies: 'ERR_RETRYABLE_INFRA_DEPENDENCIES',
} as const;

/** The Gardener error codes that describe `e`, for `status.lastError.codes`. */
export function errorCodes(e: unknown): string[] {
  if (e instanceof ConfigurationError) return [ErrorCodes.configuration];
  if (!(e instanceof DNSUpdateError)) return [];
  switch (e.reason) {
    case 'tsig':
      return [ErrorCodes.unauthenticated];
    case 'timeout':
    case 'unreachable':
      return [ErrorCodes.dependencies];
    case 'rcode':
      if (e.rcode === 'REFUSED' || e.rcode === 'NOTAUTH') return [ErrorCodes.unauthorized];
      if (e.rcode === 'NOTZONE') return [ErrorCodes.configuration];
      return [];
    default:
      return [];
  }
}

/** True for DNSRecords this extension serves. */
export function isLocalDNSRecord(record: object): boolean {
  return (record as { spec?: { type?: unknown } }).spec?.type === EXTENSION_TYPE;
}

export interface DNSRecordReconcilerOptions {
  readonly client: ResourceClient;
  readonly actuator: DNSRecordActuator;
  readonly clock?: Clock;
  /** @default DEFAULT_RESYNC_INTERVAL_MS */
  readonly resyncIntervalMs?: number;
}

export class DNSRecordReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly actuator: DNSRecordActuator;
  private readonly clock: Clock;
  private readonly resyncIntervalMs: number;

  constructor(opts: DNSRecordReconcilerOptions) {
    this.client = opts.client;
    this.actuator = opts.actuator;
    this.clock = opts.clock ?? realClock;
    this.resyncIntervalMs = opts.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const raw = await this.client.get(dnsRecordRef, req.name, req.namespace, { signal: ctx.signal });
    if (!raw || !isLocalDNSRecord(raw)) return;
    const decoded = decode(DNSRecords, raw);
    if (!decoded.value) {
      // The API server validates DNSRecords; an object that does not decode is left alone, not guessed at.
      ctx.logger.error({ errors: decoded.errors }, 'DNSRecord cannot be decoded, skipping');
      return;
    }
    const record = DNSRecords.default(decoded.value);
    if (record.metadata.deletionTimestamp) return this.delete(record, ctx);

    await addFinalizer(this.client, dnsRecordRef, record, FINALIZER, { signal: ctx.signal });
    const type = operationType(record);
    let published: Published;
    try {
      published = await this.actuator.reconcile(record, ctx);
    } catch (e) {
      await this.writeError(record, type, e, ctx);
      throw e;
    }
    const { spec } = record;
    const description = `${spec.recordType} ${spec.name} published at ${published.server}`;
    await this.patchStatus(
      record,
      {
        ...this.statusOf(record, { state: 'Succeeded', description }, type),
        zone: published.zone,
        providerStatus: published.providerStatus,
      },
      ctx,
    );
    ctx.logger.debug({ zone: published.zone, server: published.server }, 'DNS record published');
    return { requeueAfter: this.resyncIntervalMs };
  }

  private async delete(record: DNSRecord, ctx: ReconcileContext): Promise<void> {
    if (!hasFinalizer(record, FINALIZER)) return;
    try {
      await this.actuator.delete(record, ctx);
    } catch (e) {
      // Keep the finalizer: the record may still be published. The controller retries with backoff.
      await this.writeError(record, 'Delete', e, ctx);
      throw e;
    }
    await removeFinalizer(this.client, dnsRecordRef, record, FINALIZER, { signal: ctx.signal });
    ctx.logger.debug('DNS record removed');
  }

  private async writeError(record: DNSRecord, type: OperationType, e: unknown, ctx: ReconcileContext): Promise<void> {
    const description = e instanceof Error ? e.message : String(e);
    try {
      await this.patchStatus(
        record,
        this.statusOf(record, { state: 'Error', description, codes: errorCodes(e) }, type),
        ctx,
      );
    } catch (statusError) {
      // The reconcile error matters more; the status is written again on the retry.
      ctx.logger.warn({ err: statusError }, 'cannot write the error to the DNSRecord status');
    }
  }

  /** Merge-patches the status; skipped when nothing but timestamps would change (no needless watch events). */
  private async patchStatus(record: DNSRecord, status: Record<string, unknown>, ctx: ReconcileContext): Promise<void> {
    await patchStatusIfChanged(this.client, dnsRecordRef, record, status, { signal: ctx.signal });
  }

  private statusOf(record: DNSRecord, outcome: ExtensionOutcome, type: OperationType): Record<string, unknown> {
    return extensionStatusPatch(record, outcome, this.clock.now(), type);
  }
}
