/**
 * The installation's machines as a running total, kept by the Shoot informer's events rather than summed over every
 * cached Shoot at each review: an add, update or delete changes the total by what that one Shoot counts, so a review
 * reads the total of the others in constant time however many Shoots the installation has. What a Shoot counts is
 * the caller's (provider-local's machine slots of Shoots of its type; 0 for others).
 */
import type { KubernetesObject } from '@kubernetes/client-node';

/** The informer events the total follows (src/runtime/informer.ts; onAdd replays the store once it synced). */
export interface ShootEvents<T extends KubernetesObject = KubernetesObject> {
  onAdd(handler: (object: T) => void): void;
  onUpdate(handler: (object: T, old: T) => void): void;
  onDelete(handler: (object: T) => void): void;
}

const keyOf = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ''}/${name ?? ''}`;

export class MachineTotal<T extends KubernetesObject = KubernetesObject> {
  /** What each stored Shoot counts, by namespace/name; Shoots that count 0 are left out. */
  private readonly counts = new Map<string, number>();
  private sum = 0;

  /** `count`: what one stored Shoot counts (a finite number of 0 or more; anything else counts 0). */
  constructor(private readonly count: (shoot: T) => number) {}

  /** Follows `events` from now on (and the store, which a synced informer's onAdd replays). */
  attach(events: ShootEvents<T>): this {
    events.onAdd((shoot) => this.set(shoot));
    events.onUpdate((shoot) => this.set(shoot));
    events.onDelete((shoot) => this.remove(shoot));
    return this;
  }

  /** The machines of all stored Shoots. */
  get total(): number {
    return this.sum;
  }

  /** What the stored Shoot of that namespace and name counts (0 when none is stored, or it counts none). */
  countOf(namespace: string | undefined, name: string | undefined): number {
    return this.counts.get(keyOf(namespace, name)) ?? 0;
  }

  /** The machines of the stored Shoots other than the one of that namespace and name. */
  othersThan(namespace: string | undefined, name: string | undefined): number {
    return this.sum - this.countOf(namespace, name);
  }

  /** A Shoot added or updated. */
  set(shoot: T): void {
    const key = keyOf(shoot.metadata?.namespace, shoot.metadata?.name);
    const raw = this.count(shoot);
    const next = Number.isFinite(raw) && raw > 0 ? raw : 0;
    const before = this.counts.get(key) ?? 0;
    if (next === 0) this.counts.delete(key);
    else this.counts.set(key, next);
    this.sum += next - before;
  }

  /** A Shoot deleted. */
  remove(shoot: T): void {
    const key = keyOf(shoot.metadata?.namespace, shoot.metadata?.name);
    this.sum -= this.counts.get(key) ?? 0;
    this.counts.delete(key);
  }
}
