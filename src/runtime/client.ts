/**
 * The API client of the controllers and the tests: ResourceClient, JSON requests of any resource over a KubeConfig
 * (get, list, create, update, patch, apply, delete, watch), and the requests in flight per abort signal.
 *
 * Kept as one file (over 400 lines): ResourceClient is one class whose verbs share its request path (connections,
 * credentials, timeouts, errors); the paths and errors it builds on are paths.ts and errors.ts.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { apiVersionOf, resourcePath } from './paths.js';
import { ApiError, isGone, isNotFound, parseStatus } from './errors.js';
import type { ResourceRef } from '../apis/refs.js';

export interface CallOptions {
  /** Aborts the request (e.g. the reconcile's signal). */
  signal?: AbortSignal;
}

export interface WriteOptions extends CallOptions {
  /** Run admission and validation, persist nothing (`dryRun=All`). */
  dryRun?: boolean;
}

export interface ListOptions extends CallOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` until the list is complete. @default 500 */
  limit?: number;
}

export interface WatchOptions {
  namespace?: string;
  /** Where to start; from a list's resourceVersion to miss nothing. */
  resourceVersion: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks: boolean;
  /** The server ends the watch after this long. */
  timeoutSeconds?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface ClientOptions {
  /** Timeout of a single request (not watches). @default 60_000 */
  requestTimeoutMs?: number;
}

interface Prepared {
  url: URL;
  options: https.RequestOptions;
  request: string;
}

/**
 * The requests in flight per caller signal, behind one abort listener per signal. Handing the signal to each
 * `http.request` instead adds a listener per request, and a reconcile's parallel requests share one signal: more
 * than ten at once is Node's MaxListenersExceededWarning.
 */
const inFlight = new WeakMap<AbortSignal, { requests: Set<http.ClientRequest>; onAbort: () => void }>();

function trackRequest(signal: AbortSignal, req: http.ClientRequest): () => void {
  let entry = inFlight.get(signal);
  if (!entry) {
    const requests = new Set<http.ClientRequest>();
    const onAbort = () => {
      // What http.request({ signal }) throws: an AbortError carrying the reason.
      const error = Object.assign(new Error('The operation was aborted', { cause: signal.reason }), {
        name: 'AbortError',
        code: 'ABORT_ERR',
      });
      for (const r of requests) r.destroy(error);
    };
    entry = { requests, onAbort };
    inFlight.set(signal, entry);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  const { requests, onAbort } = entry;
  requests.add(req);
  return () => {
    requests.delete(req);
    if (requests.size > 0 || inFlight.get(signal) !== entry) return;
    inFlight.delete(signal);
    signal.removeEventListener('abort', onAbort);
  };
}

/**
 * Generic JSON client for any resource, over the KubeConfig's server, credentials and TLS settings. Reuses
 * connections (keep-alive) as long as the TLS material stays the same; credentials are re-read for every request so
 * rotating tokens and exec plugins work. Errors of the server are thrown as {@link ApiError}.
 */
export class ResourceClient {
  private readonly requestTimeoutMs: number;
  private agent?: { key: string; agent: http.Agent };

  constructor(
    readonly kubeConfig: KubeConfig,
    opts: ClientOptions = {},
  ) {
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    name: string,
    namespace?: string,
    opts: CallOptions = {},
  ): Promise<T | undefined> {
    try {
      return withTypeMeta(ref, await this.call<T>('GET', resourcePath(ref, { namespace, name }), opts));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** All objects (following pagination) and the list's resourceVersion to start a watch from. */
  async list<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    opts: ListOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const path = resourcePath(ref, { namespace: opts.namespace });
    const limit = opts.limit ?? 500;
    const items: T[] = [];
    let cont: string | undefined;
    for (;;) {
      const query = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit, continue: cont };
      let page: { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
      try {
        page = await this.call('GET', path, { ...opts, query });
      } catch (e) {
        // An expired continue token: start over without paging, as client-go's pager does.
        if (cont !== undefined && isGone(e)) return this.list(ref, { ...opts, limit: 0 });
        throw e;
      }
      for (const item of page.items ?? []) items.push(withTypeMeta(ref, item));
      cont = page.metadata?.continue || undefined;
      if (!cont || !limit) return { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
    }
  }

  async create<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    const path = resourcePath(ref, { namespace: obj.metadata?.namespace });
    const query = opts.dryRun ? { dryRun: 'All' } : undefined;
    return withTypeMeta(ref, await this.call<T>('POST', path, { ...opts, body: withTypeMeta(ref, obj), query }));
  }

  /** POST of `body` to a subresource of an object (`shoots/<name>/adminkubeconfig`); the server's answer. */
  async createSubresource<T>(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    subresource: string,
    body: unknown,
    opts: CallOptions = {},
  ): Promise<T> {
    return this.call<T>('POST', resourcePath(ref, { namespace, name, subresource }), { ...opts, body });
  }

  /**
   * The text of a GET of a subresource that is not JSON (`pods/<name>/log`, with its query such as `tailLines`);
   * undefined when the object does not exist.
   */
  async getText(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    subresource: string,
    query: Query = {},
    opts: CallOptions = {},
  ): Promise<string | undefined> {
    try {
      return await this.call<string>('GET', resourcePath(ref, { namespace, name, subresource }), {
        ...opts,
        query,
        text: true,
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** PUT of the whole object; fails with Conflict when `metadata.resourceVersion` is stale. */
  async update<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts: CallOptions = {}): Promise<T> {
    return withTypeMeta(
      ref,
      await this.call<T>('PUT', objectPath(ref, obj), { ...opts, body: withTypeMeta(ref, obj) }),
    );
  }

  async updateStatus<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts: CallOptions = {}): Promise<T> {
    const path = objectPath(ref, obj, 'status');
    return withTypeMeta(ref, await this.call<T>('PUT', path, { ...opts, body: withTypeMeta(ref, obj) }));
  }

  /** JSON merge patch (RFC 7386): `null` deletes a field, arrays are replaced. */
  async mergePatch<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    opts: CallOptions & { subresource?: 'status' } = {},
  ): Promise<T> {
    const path = resourcePath(ref, { namespace, name, subresource: opts.subresource });
    return withTypeMeta(
      ref,
      await this.call<T>('PATCH', path, { ...opts, body: patch, contentType: 'application/merge-patch+json' }),
    );
  }

  /**
   * Server-side apply: `obj` holds exactly the fields this manager owns (with apiVersion, kind, name and
   * namespace; apiVersion and kind are filled in from `ref` when missing).
   */
  async apply<T extends KubernetesObject>(
    ref: ResourceRef,
    obj: T,
    opts: CallOptions & { fieldManager: string; force?: boolean; subresource?: 'status' },
  ): Promise<T> {
    const path = objectPath(ref, obj, opts.subresource);
    const query = { fieldManager: opts.fieldManager, force: opts.force ? 'true' : undefined };
    return withTypeMeta(
      ref,
      await this.call<T>('PATCH', path, {
        ...opts,
        query,
        body: withTypeMeta(ref, obj),
        contentType: 'application/apply-patch+yaml',
      }),
    );
  }

  /**
   * The resources the server serves for `apiVersion` (`v1`, `apps/v1`): discovery, for objects of kinds known only
   * at run time. Undefined when the server does not serve that group version.
   */
  async serverResources(
    apiVersion: string,
    opts: CallOptions = {},
  ): Promise<{ name: string; kind: string; namespaced: boolean }[] | undefined> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    try {
      const list = await this.call<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>(
        'GET',
        path,
        opts,
      );
      return list.resources ?? [];
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Deletes the object; false when it was already gone. */
  async delete(
    ref: ResourceRef,
    name: string,
    namespace?: string,
    opts: CallOptions & {
      propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
      preconditions?: { uid?: string; resourceVersion?: string };
      /** 0 deletes a pod at once, without waiting for its kubelet. */
      gracePeriodSeconds?: number;
    } = {},
  ): Promise<boolean> {
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
      ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
      ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
    };
    try {
      await this.call('DELETE', resourcePath(ref, { namespace, name }), { ...opts, body });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /**
   * Starts a watch and returns at once with its handle. `onEvent` gets every event in order; `onDone` is called
   * exactly once when the watch ends by itself: `undefined` when the server closed it cleanly, else the error (an
   * ERROR event arrives as its ApiError, e.g. 410 Gone). After `abort()`, neither is called again.
   */
  async watch<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    opts: WatchOptions,
    onEvent: (type: WatchEventType, obj: T) => void,
    onDone: (err?: unknown) => void,
  ): Promise<{ abort(): void }> {
    const query = {
      watch: 'true',
      resourceVersion: opts.resourceVersion || undefined,
      allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      timeoutSeconds: opts.timeoutSeconds,
    };
    const { url, options, request } = await this.prepare('GET', resourcePath(ref, opts), query);
    let finished = false;
    const finish = (err?: unknown): void => {
      if (finished) return;
      finished = true;
      req.destroy();
      onDone(err);
    };
    const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
      if (res.statusCode !== 200) {
        readBody(res)
          .then((body) => finish(ApiError.fromResponse(res.statusCode ?? 0, body, request)))
          .catch(finish);
        return;
      }
      res.setEncoding('utf8');
      let buffered = '';
      const handleLine = (line: string): void => {
        if (finished || line.trim() === '') return;
        let event: { type?: string; object?: unknown };
        try {
          event = JSON.parse(line);
        } catch (e) {
          finish(new Error(`${request}: malformed watch event`, { cause: e }));
          return;
        }
        if (event.type === 'ERROR') {
          const status = parseStatus(event.object);
          finish(new ApiError(status?.code ?? 500, status?.message || 'watch error', { status, request }));
          return;
        }
        const type = event.type as WatchEventType;
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') return;
        onEvent(type, withTypeMeta(ref, event.object as T));
      };
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while (!finished && (nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          handleLine(line);
        }
      });
      res.on('end', () => {
        handleLine(buffered);
        finish();
      });
      res.on('error', finish);
      res.on('close', () => finish(new Error(`${request}: watch connection closed`)));
    });
    req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
    req.on('error', (e) => finish(new Error(`${request}: ${e.message}`, { cause: e })));
    req.end();
    return {
      abort: () => {
        finished = true;
        req.destroy();
      },
    };
  }

  /** One request; the parsed JSON answer, or ApiError. */
  private async call<T>(
    method: string,
    path: string,
    opts: CallOptions & { query?: Query; body?: unknown; contentType?: string; text?: boolean } = {},
  ): Promise<T> {
    const { url, options, request } = await this.prepare(method, path, opts.query);
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined) {
      options.headers = {
        ...options.headers,
        'Content-Type': opts.contentType ?? 'application/json',
        'Content-Length': Buffer.byteLength(body),
      };
    }
    opts.signal?.throwIfAborted();
    return new Promise<T>((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
        readBody(res).then((text) => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            reject(ApiError.fromResponse(code, text, request));
            return;
          }
          if (opts.text) {
            resolve(text as T);
            return;
          }
          try {
            resolve((text === '' ? undefined : JSON.parse(text)) as T);
          } catch (e) {
            reject(new Error(`${request}: malformed response`, { cause: e }));
          }
        }, reject);
      });
      if (opts.signal) {
        const untrack = trackRequest(opts.signal, req);
        req.once('close', untrack);
      }
      req.setTimeout(this.requestTimeoutMs, () =>
        req.destroy(new Error(`${request}: no answer within ${this.requestTimeoutMs} ms`)),
      );
      req.on('error', (e) => reject(e.name === 'AbortError' ? e : new Error(`${request}: ${e.message}`, { cause: e })));
      req.end(body);
    });
  }

  private async prepare(method: string, path: string, query: Query = {}): Promise<Prepared> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const options: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const headers: http.OutgoingHttpHeaders = {
      Accept: 'application/json',
      ...((options.headers ?? {}) as http.OutgoingHttpHeaders),
    };
    if (options.auth) {
      headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    }
    return {
      url,
      options: { method, headers, agent: cluster.proxyUrl ? options.agent : this.agentFor(url, options) },
      request: `${method} ${url.pathname}`,
    };
  }

  /** A keep-alive agent with the kubeconfig's TLS material, replaced when that material changes. */
  private agentFor(url: URL, o: https.RequestOptions): http.Agent {
    const hash = createHash('sha256');
    for (const part of [o.ca, o.cert, o.key, o.pfx]) hash.update(part ? String(part) : '-').update('\0');
    hash.update(`${o.rejectUnauthorized}|${o.servername}|${url.protocol}`);
    const key = hash.digest('hex');
    if (this.agent?.key !== key) {
      this.agent?.agent.destroy();
      const agent =
        url.protocol === 'https:'
          ? new https.Agent({
              keepAlive: true,
              ca: o.ca,
              cert: o.cert,
              key: o.key,
              pfx: o.pfx,
              passphrase: o.passphrase,
              ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
              ...(o.servername ? { servername: o.servername } : {}),
            })
          : new http.Agent({ keepAlive: true });
      this.agent = { key, agent };
    }
    return this.agent.agent;
  }

  /** Closes idle keep-alive connections (open watches end too). */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }
}

type Query = Record<string, string | number | undefined>;

function objectPath(ref: ResourceRef, obj: KubernetesObject, subresource?: string): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`${ref.kind} without metadata.name`);
  return resourcePath(ref, { namespace: obj.metadata?.namespace, name, subresource });
}

/** Lists (and some answers) leave out apiVersion and kind of their items; fill them in. */
function withTypeMeta<T>(ref: ResourceRef, obj: T): T {
  if (obj && typeof obj === 'object') {
    const o = obj as KubernetesObject;
    if (o.apiVersion === undefined || o.kind === undefined) {
      return { ...o, apiVersion: o.apiVersion ?? apiVersionOf(ref), kind: o.kind ?? ref.kind } as T;
    }
  }
  return obj;
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}
