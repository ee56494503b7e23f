import type { KubernetesObject } from '@kubernetes/client-node';
import { type ResourceClient } from './client.js';
import { isAlreadyExists, isConflict } from './errors.js';
import { Refs } from '../apis/refs.js';
import { realClock, type Clock } from './clock.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { metav1MicroTime } from '../apis/meta/time.js';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  /** MicroTime: RFC 3339 with exactly 6 fractional digits. */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [field: string]: unknown;
}

/** coordination.k8s.io/v1 Lease, with times kept as the strings the server sends. */
export interface Lease extends KubernetesObject {
  spec?: LeaseSpec;
}

/** client-go's defaults: hold 15 s, give up renewing after 10 s, try every 2 s. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** Tries to acquire are spread over [retryPeriod, retryPeriod · (1 + 1.2)], as client-go does. */
const ACQUIRE_JITTER = 1.2;

export interface LeaderElectorOptions {
  readonly client: ResourceClient;
  readonly name: string;
  readonly namespace: string;
  /** Unique per process, e.g. `${hostname}_${randomUUID()}`. */
  readonly identity: string;
  /** How long others wait after the last renewal they saw before taking over. @default 15_000 */
  readonly leaseDurationMs?: number;
  /** The leader gives up when renewing has failed for this long. @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts. @default 2_000 */
  readonly retryPeriodMs?: number;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly metrics?: Metrics;
  readonly random?: () => number;
}

/**
 * Leader election on a Lease, like client-go's `leaderelection` with `ReleaseOnCancel`:
 * - acquire and renew with optimistic concurrency (resourceVersion); a conflict is just a lost round;
 * - another holder's lease counts as expired only `leaseDuration` after this process last saw it change (own clock,
 *   no clock-skew trust in the timestamps);
 * - the leader that cannot renew within `renewDeadline` stops leading (before others may take over, since
 *   renewDeadline < leaseDuration);
 * - `stop()` ends the leading work first, then releases the lease (empty holder, 1 s duration) so a successor
 *   takes over at its next try.
 */
export class LeaderElector {
  private readonly client: ResourceClient;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observedRecord = '';
  private observedTime = 0;
  private observedHolder = '';
  private leading = false;
  private stopper?: AbortController;
  private running?: Promise<void>;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.leaseDurationMs = opts.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = opts.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDurationMs must exceed renewDeadlineMs');
    if (this.renewDeadlineMs <= ACQUIRE_JITTER * this.retryPeriodMs) {
      throw new Error(`renewDeadlineMs must exceed ${ACQUIRE_JITTER} × retryPeriodMs`);
    }
    if (!opts.identity) throw new Error('identity must not be empty');
    this.logger = opts.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder this process last saw (may be itself); empty when none. */
  leader(): string {
    return this.observedHolder;
  }

  /**
   * Competes for the lease until acquired, then calls `onStartedLeading` with a signal that aborts when leadership
   * ends, and renews. Resolves when leadership is lost (after `onStoppedLeading`) or after `stop()`
   * (after `onStoppedLeading` and the release). `onStoppedLeading` is only called when leading had started; when it
   * returns a promise, that is awaited before the lease is released.
   */
  run(
    onStartedLeading: (signal: AbortSignal) => void | Promise<void>,
    onStoppedLeading: () => void | Promise<void>,
  ): Promise<void> {
    if (this.running) throw new Error('leader election is already running');
    this.stopper = new AbortController();
    this.running = this.loop(this.stopper.signal, onStartedLeading, onStoppedLeading);
    return this.running;
  }

  /** Ends `run`: stops competing, or stops leading and releases the lease. */
  async stop(): Promise<void> {
    this.stopper?.abort();
    await this.running;
  }

  private async loop(
    stop: AbortSignal,
    onStartedLeading: (signal: AbortSignal) => void | Promise<void>,
    onStoppedLeading: () => void | Promise<void>,
  ): Promise<void> {
    this.logger.info('trying to acquire the lease');
    while (!stop.aborted && !(await this.tryAcquireOrRenew(stop))) {
      await this.clock.sleep(this.retryPeriodMs * (1 + ACQUIRE_JITTER * this.random()), stop);
    }
    if (stop.aborted) return;

    this.setLeading(true);
    this.logger.info('acquired the lease, started leading');
    const leadership = new AbortController();
    const work = Promise.resolve()
      .then(() => onStartedLeading(leadership.signal))
      .catch((e: unknown) => this.logger.error({ err: e }, 'onStartedLeading failed'));

    let lost = false;
    while (!stop.aborted) {
      await this.clock.sleep(this.retryPeriodMs, stop);
      if (stop.aborted) break;
      if (!(await this.renew(stop))) {
        lost = !stop.aborted;
        break;
      }
    }

    this.setLeading(false);
    leadership.abort();
    if (lost)
      this.logger.error({ renewDeadlineMs: this.renewDeadlineMs }, 'failed to renew the lease, stopped leading');
    else this.logger.info('stopping leadership');
    await work;
    try {
      await onStoppedLeading();
    } catch (e) {
      this.logger.error({ err: e }, 'onStoppedLeading failed');
    }
    if (!lost) await this.release();
  }

  /** Retries within the renew deadline; false when the deadline passed (or stopped) without success. */
  private async renew(stop: AbortSignal): Promise<boolean> {
    const deadline = this.clock.now() + this.renewDeadlineMs;
    const attempt = new AbortController();
    const onStop = (): void => attempt.abort();
    stop.addEventListener('abort', onStop, { once: true });
    const timer = new AbortController();
    void this.clock.sleep(this.renewDeadlineMs, timer.signal).then(() => attempt.abort());
    try {
      while (!attempt.signal.aborted) {
        if (await this.tryAcquireOrRenew(attempt.signal)) return true;
        const left = deadline - this.clock.now();
        if (left <= 0) return false;
        await this.clock.sleep(Math.min(this.retryPeriodMs, left), attempt.signal);
      }
      return false;
    } finally {
      timer.abort();
      stop.removeEventListener('abort', onStop);
    }
  }

  /** One round: read the lease and take or renew it when allowed. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { name, namespace, identity } = this.opts;
    const now = this.clock.now();
    const nowTime = metav1MicroTime(now);
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    try {
      const lease = await this.client.get<Lease>(Refs.lease, name, namespace, { signal });
      if (!lease) {
        const created = await this.client.create<Lease>(
          Refs.lease,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: nowTime,
              renewTime: nowTime,
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.observe(created, now);
        return true;
      }
      const spec = lease.spec ?? {};
      this.observe(lease, now);
      const holder = spec.holderIdentity ?? '';
      const mine = holder === identity;
      const expired = this.observedTime + (spec.leaseDurationSeconds ?? 0) * 1000 <= now;
      if (holder !== '' && !mine && !expired) return false;
      const transitions = spec.leaseTransitions ?? 0;
      const updated = await this.client.update<Lease>(
        Refs.lease,
        {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: mine ? (spec.acquireTime ?? nowTime) : nowTime,
            renewTime: nowTime,
            leaseTransitions: mine ? transitions : transitions + 1,
          },
        },
        { signal },
      );
      this.observe(updated, now);
      return true;
    } catch (e) {
      if (signal.aborted) return false;
      if (isConflict(e) || isAlreadyExists(e)) this.logger.debug({ err: e }, 'lost a lease update race');
      else this.logger.warn({ err: e }, 'failed to read or update the lease');
      return false;
    }
  }

  /** Sets holderIdentity empty and the duration to 1 s, if this process still holds the lease. */
  private async release(): Promise<void> {
    const { name, namespace, identity } = this.opts;
    try {
      const lease = await this.client.get<Lease>(Refs.lease, name, namespace);
      if (!lease || lease.spec?.holderIdentity !== identity) return;
      const nowTime = metav1MicroTime(this.clock.now());
      await this.client.update<Lease>(Refs.lease, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: nowTime, renewTime: nowTime },
      });
      this.observedHolder = '';
      this.logger.info('released the lease');
    } catch (e) {
      this.logger.warn({ err: e }, 'failed to release the lease; others take over when it expires');
    }
  }

  private observe(lease: Lease, now: number): void {
    const s = lease.spec ?? {};
    const record = JSON.stringify([s.holderIdentity, s.leaseDurationSeconds, s.acquireTime, s.renewTime]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedTime = now;
      const holder = s.holderIdentity ?? '';
      if (holder !== this.observedHolder) {
        this.observedHolder = holder;
        this.logger.info({ leader: holder || undefined }, 'observed a new leader');
      }
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.opts.metrics?.leaderStatus.set({ name: this.opts.name }, leading ? 1 : 0);
  }
}
