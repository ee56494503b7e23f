/**
 * A small, real HTTP API server on [::1] for tests of long-lived watches and of code that talks to the API:
 * list, get, create, update (with resourceVersion conflicts), merge patch, apply (as a merge), delete and chunked
 * watches (ADDED/MODIFIED/DELETED/BOOKMARK lines) for any resource path, plus fault injection — HTTP errors, 410 Gone
 * on watches, dropped connections and silent (hung) watches — and a log of every request.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { ResourceRef } from '../../src/apis/refs.js';

export interface RequestRecord {
  method: string;
  path: string;
  query: URLSearchParams;
  watch: boolean;
  /** Date.now() when it arrived. */
  at: number;
}

export type Fault =
  /** Answer with this HTTP code and a Status body. */
  | { kind: 'status'; code: number; reason?: string; message?: string }
  /** Destroy the connection without answering. */
  | { kind: 'drop' }
  /** Watches: send headers, then nothing, ever. Other requests: never answer. */
  | { kind: 'hang' }
  /** Watches: 200 with an ERROR event carrying 410 Expired, then close (as the real server does). */
  | { kind: 'gone' };

export interface FaultRule {
  method?: string;
  /** Only watch requests (true) or only non-watch requests (false). */
  watch?: boolean;
  pathPrefix?: string;
  /** How many requests to hit. @default every one */
  times?: number;
  fault: Fault;
}

interface Watcher {
  resource: string;
  namespace?: string;
  selector: (obj: KubernetesObject) => boolean;
  bookmarks: boolean;
  res: http.ServerResponse;
}

interface HistoryEntry {
  rv: number;
  resource: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  obj: KubernetesObject;
}

interface Target {
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

type Json = Record<string, unknown>;

export class FakeApiServer {
  readonly requests: RequestRecord[] = [];
  private readonly faults: Array<FaultRule & { hits: number }> = [];
  private readonly store = new Map<string, Map<string, KubernetesObject>>();
  private readonly history: HistoryEntry[] = [];
  private readonly watchers = new Set<Watcher>();
  private rv = 100;
  private compactedRv = 0;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeApiServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen({ host: '::1', port: 0 }, resolve));
    const fake = new FakeApiServer(server, (server.address() as AddressInfo).port);
    server.on('request', (req, res) => fake.handle(req, res));
    return fake;
  }

  get url(): string {
    return `http://[::1]:${this.port}`;
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'test', token: 'test-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'test' }],
      currentContext: 'fake',
    });
    return kc;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Adds a fault; returns a function removing it. */
  addFault(rule: FaultRule): () => void {
    const entry = { ...rule, hits: 0 };
    this.faults.push(entry);
    return () => {
      const i = this.faults.indexOf(entry);
      if (i >= 0) this.faults.splice(i, 1);
    };
  }

  /**
   * The next list (a GET that is no watch) under `pathPrefix` answers 500: an informer stays unsynced until its
   * backoff's retry lists again.
   */
  failNextList(pathPrefix: string): () => void {
    return this.addFault({ method: 'GET', watch: false, pathPrefix, times: 1, fault: { kind: 'status', code: 500 } });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Requests matching the filter, e.g. `{ watch: true }`. */
  requestsWhere(filter: { method?: string; watch?: boolean; pathPrefix?: string }): RequestRecord[] {
    return this.requests.filter(
      (r) =>
        (filter.method === undefined || r.method === filter.method) &&
        (filter.watch === undefined || r.watch === filter.watch) &&
        (filter.pathPrefix === undefined || r.path.startsWith(filter.pathPrefix)),
    );
  }

  /** Current resourceVersion of the whole store. */
  resourceVersion(): string {
    return String(this.rv);
  }

  /** Forgets the history: watches from any earlier resourceVersion now get 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history.length = 0;
  }

  /** Open watch connections (optionally of one resource). */
  openWatches(ref?: ResourceRef): number {
    if (!ref) return this.watchers.size;
    return [...this.watchers].filter((w) => w.resource === resourceKey(ref)).length;
  }

  /** Closes every open watch connection abruptly (no clean end of the stream). */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Ends every open watch cleanly, as the server does after timeoutSeconds. */
  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      writeEvent(w.res, 'BOOKMARK', {
        apiVersion: apiVersionOfKey(w.resource),
        kind: kindOf(w.resource),
        metadata: { resourceVersion: String(this.rv) },
      });
    }
  }

  /** The stored objects of a resource. */
  objects<T extends KubernetesObject = KubernetesObject>(ref: ResourceRef): T[] {
    return [...(this.store.get(resourceKey(ref))?.values() ?? [])] as T[];
  }

  /** Creates or replaces an object directly (no conflict checks), notifying watches. */
  upsert<T extends KubernetesObject>(ref: ResourceRef, obj: T): T {
    const resource = resourceKey(ref);
    const ns = ref.namespaced ? obj.metadata?.namespace : undefined;
    const existing = this.bucket(resource).get(objKey(ns, obj.metadata?.name ?? ''));
    return this.write(resource, { apiVersion: apiVersion(ref), kind: ref.kind, ...obj }, existing) as T;
  }

  /** Deletes an object directly, notifying watches; false when absent. */
  remove(ref: ResourceRef, name: string, namespace?: string): boolean {
    return this.delete(resourceKey(ref), objKey(ref.namespaced ? namespace : undefined, name));
  }

  private bucket(resource: string): Map<string, KubernetesObject> {
    let b = this.store.get(resource);
    if (!b) this.store.set(resource, (b = new Map()));
    return b;
  }

  private write(resource: string, obj: KubernetesObject, existing?: KubernetesObject): KubernetesObject {
    const rv = ++this.rv;
    const name = obj.metadata?.name ?? '';
    const stored = structuredClone({
      ...obj,
      metadata: {
        ...obj.metadata,
        name,
        uid: existing?.metadata?.uid ?? obj.metadata?.uid ?? randomUUID(),
        creationTimestamp: existing?.metadata?.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        resourceVersion: String(rv),
      },
    }) as unknown as KubernetesObject;
    this.bucket(resource).set(objKey(stored.metadata?.namespace, name), stored);
    this.publish({ rv, resource, type: existing ? 'MODIFIED' : 'ADDED', obj: stored });
    return stored;
  }

  private delete(resource: string, key: string): boolean {
    const b = this.bucket(resource);
    const existing = b.get(key);
    if (!existing) return false;
    b.delete(key);
    const rv = ++this.rv;
    const obj = structuredClone({ ...existing, metadata: { ...existing.metadata, resourceVersion: String(rv) } });
    this.publish({ rv, resource, type: 'DELETED', obj });
    return true;
  }

  private publish(entry: HistoryEntry): void {
    this.history.push(entry);
    for (const w of this.watchers) {
      if (w.resource === entry.resource && matches(w, entry.obj)) writeEvent(w.res, entry.type, entry.obj);
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    this.requests.push({ method, path: url.pathname, query: url.searchParams, watch, at: Date.now() });

    const rule = this.faults.find(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.watch === undefined || f.watch === watch) &&
        (f.pathPrefix === undefined || url.pathname.startsWith(f.pathPrefix)) &&
        (f.times === undefined || f.hits < f.times),
    );
    if (rule) {
      rule.hits++;
      this.fail(rule.fault, res, watch);
      return;
    }

    const target = parsePath(url.pathname);
    if (!target) {
      sendStatus(res, 404, 'NotFound', `the server could not find the requested resource`);
      return;
    }
    readJson(req).then(
      (body) => this.serve(method, target, url.searchParams, watch, body, res),
      () => sendStatus(res, 400, 'BadRequest', 'malformed body'),
    );
  }

  private fail(fault: Fault, res: http.ServerResponse, watch: boolean): void {
    switch (fault.kind) {
      case 'status':
        sendStatus(res, fault.code, fault.reason ?? http.STATUS_CODES[fault.code] ?? '', fault.message ?? 'injected');
        return;
      case 'drop':
        res.socket?.destroy();
        return;
      case 'hang':
        if (watch) {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.flushHeaders();
        }
        return;
      case 'gone':
        res.writeHead(200, { 'Content-Type': 'application/json' });
        writeEvent(res, 'ERROR', goneStatus());
        res.end();
        return;
    }
  }

  private serve(
    method: string,
    t: Target,
    query: URLSearchParams,
    watch: boolean,
    body: Json | undefined,
    res: http.ServerResponse,
  ): void {
    const bucket = this.bucket(t.resource);
    const kind = kindOf(t.resource);
    const what = `${t.resource.split('/')[2]} "${t.name}"`;
    const bodyNs = (body?.metadata as { namespace?: string } | undefined)?.namespace;
    const key = objKey(t.namespace ?? bodyNs, t.name ?? '');
    const existing = t.name === undefined ? undefined : bucket.get(objKey(t.namespace, t.name));

    if (method === 'GET' && watch) {
      this.startWatch(t, query, res);
      return;
    }
    if (method === 'GET' && t.name === undefined) {
      const selector = labelSelector(query.get('labelSelector') ?? '');
      const items = [...bucket.values()].filter(
        (o) => (!t.namespace || o.metadata?.namespace === t.namespace) && selector(o),
      );
      sendJson(res, 200, { kind: `${kind}List`, metadata: { resourceVersion: String(this.rv) }, items });
      return;
    }
    if (method === 'GET') {
      if (existing) sendJson(res, 200, existing);
      else sendStatus(res, 404, 'NotFound', `${what} not found`);
      return;
    }
    if (method === 'POST') {
      const name = (body?.metadata as { name?: string } | undefined)?.name ?? '';
      if (bucket.has(objKey(t.namespace ?? bodyNs, name))) {
        sendStatus(res, 409, 'AlreadyExists', `${t.resource.split('/')[2]} "${name}" already exists`);
        return;
      }
      const obj = { ...body, metadata: { ...(body?.metadata as Json), namespace: t.namespace ?? bodyNs } };
      sendJson(res, 201, this.write(t.resource, obj as KubernetesObject));
      return;
    }
    if (method === 'PUT') {
      if (!existing) {
        sendStatus(res, 404, 'NotFound', `${what} not found`);
        return;
      }
      const rv = (body?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      if (rv && rv !== existing.metadata?.resourceVersion) {
        sendStatus(
          res,
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`,
        );
        return;
      }
      const next =
        t.subresource === 'status'
          ? { ...existing, status: body?.status }
          : { ...body, ...('status' in existing ? { status: (existing as unknown as Json).status } : {}) };
      sendJson(res, 200, this.write(t.resource, next as KubernetesObject, existing));
      return;
    }
    if (method === 'PATCH') {
      if (!existing && query.get('fieldManager') === null) {
        sendStatus(res, 404, 'NotFound', `${what} not found`);
        return;
      }
      const merged = mergePatch(existing ?? { metadata: { name: t.name, namespace: t.namespace } }, body ?? {});
      sendJson(res, 200, this.write(t.resource, merged as KubernetesObject, existing));
      return;
    }
    if (method === 'DELETE') {
      if (!existing) {
        sendStatus(res, 404, 'NotFound', `${what} not found`);
        return;
      }
      this.delete(t.resource, key);
      sendJson(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', code: 200 });
      return;
    }
    sendStatus(res, 405, 'MethodNotAllowed', `${method} is not supported`);
  }

  private startWatch(t: Target, query: URLSearchParams, res: http.ServerResponse): void {
    const watcher: Watcher = {
      resource: t.resource,
      namespace: t.namespace,
      selector: labelSelector(query.get('labelSelector') ?? ''),
      bookmarks: query.get('allowWatchBookmarks') === 'true',
      res,
    };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    const from = query.get('resourceVersion');
    if (from && from !== '0') {
      if (Number(from) < this.compactedRv) {
        writeEvent(res, 'ERROR', goneStatus());
        res.end();
        return;
      }
      for (const e of this.history) {
        if (e.rv > Number(from) && e.resource === t.resource && matches(watcher, e.obj)) {
          writeEvent(res, e.type, e.obj);
        }
      }
    } else {
      for (const obj of this.bucket(t.resource).values()) if (matches(watcher, obj)) writeEvent(res, 'ADDED', obj);
    }
    this.watchers.add(watcher);
    const timeout = Number(query.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      clearTimeout(timer);
      this.watchers.delete(watcher);
    });
  }
}

function resourceKey(ref: ResourceRef): string {
  kinds[`${ref.group}/${ref.version}/${ref.plural}`] = ref.kind;
  return `${ref.group}/${ref.version}/${ref.plural}`;
}

/** `group/version/plural` → kind, learned from the refs tests pass, for list kinds and bookmarks. */
function kindOf(resource: string): string {
  return kinds[resource] ?? resource.split('/')[2] ?? '';
}

function apiVersionOfKey(resource: string): string {
  const [group, version] = resource.split('/');
  return group ? `${group}/${version}` : (version ?? '');
}

function apiVersion(ref: ResourceRef): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

const kinds: Record<string, string> = {
  '/v1/configmaps': 'ConfigMap',
  '/v1/secrets': 'Secret',
  'coordination.k8s.io/v1/leases': 'Lease',
};

function parsePath(path: string): Target | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  if (!plural) return undefined;
  return { resource: `${group}/${version}/${plural}`, namespace, name, subresource };
}

function objKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function matches(w: Pick<Watcher, 'namespace' | 'selector'>, obj: KubernetesObject): boolean {
  return (!w.namespace || obj.metadata?.namespace === w.namespace) && w.selector(obj);
}

/** `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated. */
function labelSelector(selector: string): (obj: KubernetesObject) => boolean {
  const terms = selector
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return (obj) => {
    const labels = obj.metadata?.labels ?? {};
    return terms.every((term) => {
      const ne = term.match(/^([^!=]+)!=(.*)$/);
      if (ne) return labels[ne[1]!.trim()] !== ne[2]!.trim();
      const eq = term.match(/^([^!=]+)==?(.*)$/);
      if (eq) return labels[eq[1]!.trim()] === eq[2]!.trim();
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      return term in labels;
    });
  };
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Json =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Json) } : ({} as Json);
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function goneStatus(): Json {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'too old resource version',
    reason: 'Expired',
    code: 410,
  };
}

function writeEvent(res: http.ServerResponse, type: string, object: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify({ type, object }) + '\n');
}

function sendJson(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

function sendStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
}

function readJson(req: http.IncomingMessage): Promise<Json | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) {
        resolve(undefined);
        return;
      }
      try {
        resolve(JSON.parse(text) as Json);
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}
