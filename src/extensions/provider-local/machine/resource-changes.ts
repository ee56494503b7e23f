/**
 * Whether a list a machine reads has changed since it last read it, told by a watch instead of reading it again: the
 * node sync reads the Nodes and the control plane peers' Leases when they changed (or at least every RESYNC_MS),
 * not every few seconds per machine and shoot.
 *
 * A change is what a machine acts on: the Nodes' heartbeats and the Leases' renewals are not, so an object's
 * `relevant` view leaves them out. The watch starts from a list's resourceVersion and runs on from the last event it
 * saw; when it fails (410 Gone, a broken connection) the list counts as changed, and the next list starts a new one.
 */
import type { NodeInfo, WatchEvent } from './api-client.js';
import type { PeerLease } from './overlay.js';

/** At least this often a list is read again, changed or not: a safety net for a change a watch missed. */
export const RESYNC_MS = 30_000;
/** The server ends each watch after this long; the next one starts from where it ended. */
export const WATCH_TIMEOUT_SECONDS = 300;

export interface ListedObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

/**
 * Opens a watch from `resourceVersion` and streams its events until it ends (resolves: the server's timeout, or
 * `signal` aborted) or fails (rejects).
 */
export type Watch<T> = (
  resourceVersion: string,
  onEvent: (event: WatchEvent<T>) => void,
  signal: AbortSignal,
) => Promise<void>;

/** The URL path of a watch of the collection at `path` (which may have a query), from `resourceVersion`. */
export function watchPath(path: string, resourceVersion: string): string {
  const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_TIMEOUT_SECONDS}`;
  return `${path}${path.includes('?') ? '&' : '?'}${query}&resourceVersion=${encodeURIComponent(resourceVersion)}`;
}

export class ResourceChanges<T extends ListedObject> {
  private readonly known = new Map<string, string>();
  private changed = true;
  private resourceVersion: string | undefined;
  private watching: AbortController | undefined;
  private lastError: string | undefined;
  /** The events seen while a list is read: the list may predate them. */
  private duringList: WatchEvent<T>[] | undefined;

  /**
   * @param what the collection, for the log
   * @param relevant what of an object counts as a change, as a string to compare
   */
  constructor(
    private readonly what: string,
    private readonly relevant: (obj: T) => string,
    private readonly watch: Watch<T>,
    private readonly log: (line: string) => void,
  ) {}

  /** True until the next `listed`, once something relevant changed (or the watch is not running). */
  get hasChanged(): boolean {
    return this.changed || this.watching === undefined;
  }

  /** Reads the list with `read` and records it: `listing` before, `listed` after. */
  async list(read: () => Promise<{ items: T[]; resourceVersion?: string }>): Promise<T[]> {
    this.listing();
    let got: { items: T[]; resourceVersion?: string };
    try {
      got = await read();
    } catch (e) {
      // Nothing to compare the events seen meanwhile with: the list counts as changed until one is read.
      this.duringList = undefined;
      throw e;
    }
    this.listed(got.items, got.resourceVersion);
    return got.items;
  }

  /** Called before reading the list. */
  listing(): void {
    this.duringList = [];
  }

  /** Records what a list read, and watches from its resourceVersion unless a watch runs already. */
  listed(items: readonly T[], resourceVersion: string | undefined): void {
    this.known.clear();
    for (const item of items) this.known.set(keyOf(item), this.relevant(item));
    this.changed = false;
    // An event that arrived while the list was read and says otherwise may be newer than the list.
    const seen = this.duringList ?? [];
    this.duringList = undefined;
    for (const event of seen) this.compare(event);
    if (this.watching === undefined && resourceVersion) {
      this.resourceVersion = resourceVersion;
      this.startWatch();
    }
  }

  /** Ends the watch. */
  stop(): void {
    this.watching?.abort();
    this.watching = undefined;
  }

  private startWatch(): void {
    const controller = new AbortController();
    this.watching = controller;
    const run = async () => {
      while (!controller.signal.aborted) {
        await this.watch(this.resourceVersion ?? '', (e) => this.observe(e), controller.signal);
        this.lastError = undefined;
      }
    };
    run().catch((e: Error) => {
      if (this.watching !== controller) return;
      if (e.message !== this.lastError) this.log(`watch of ${this.what}: ${e.message}; reading them again`);
      this.lastError = e.message;
      // The next list starts a new watch from its own resourceVersion.
      this.watching = undefined;
      this.changed = true;
    });
  }

  private observe(event: WatchEvent<T>): void {
    const rv = event.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return;
    this.duringList?.push(event);
    this.compare(event);
  }

  private compare(event: WatchEvent<T>): void {
    const key = keyOf(event.object);
    const was = this.known.get(key);
    if (event.type === 'DELETED') {
      if (was !== undefined) this.changed = true;
      return;
    }
    if (was !== this.relevant(event.object)) this.changed = true;
  }
}

function keyOf(obj: ListedObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

/** What of a Node the machine acts on: not its heartbeats, images or capacity. */
export function relevantNode(node: NodeInfo): string {
  const conditions = (node.status?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]);
  return JSON.stringify([node.metadata.annotations, node.spec, node.status?.addresses, conditions]);
}

/** What of a control plane peer's Lease the machine acts on: not its renewals (a resync drops expired ones). */
export function relevantPeerLease(lease: PeerLease): string {
  return JSON.stringify([lease.metadata.annotations, lease.spec?.holderIdentity, lease.spec?.leaseDurationSeconds]);
}
