/**
 * An in-memory stand-in for ResourceClient with the API server behaviour the calico reconciler relies on: merge
 * patches (with resourceVersion preconditions and the status subresource), server-side apply (as a replace of the
 * fields given), and deletion that waits for finalizers.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { type ResourceClient } from '../../../src/runtime/client.js';
import { ApiError } from '../../../src/runtime/errors.js';
import { type ResourceRef } from '../../../src/apis/refs.js';

type Obj = KubernetesObject & Record<string, unknown>;

const deepCopy = <T>(value: T): T => structuredClone(value);

export interface Call {
  readonly method: 'get' | 'apply' | 'mergePatch' | 'delete';
  readonly kind: string;
  readonly name: string;
  readonly subresource?: string;
}

export class FakeClient {
  private readonly store = new Map<string, Obj>();
  private rv = 1;
  readonly calls: Call[] = [];
  /** Makes the next calls matching `method` and `kind` fail. */
  readonly failures: { method: Call['method']; kind: string; error: Error }[] = [];

  asClient(): ResourceClient {
    return this as unknown as ResourceClient;
  }

  /** Puts an object into the store as the API server would have it. */
  seed(ref: ResourceRef, object: object): void {
    const o = deepCopy(object) as Obj;
    o.metadata = { generation: 1, uid: `uid-${this.rv}`, ...o.metadata, resourceVersion: String(this.rv++) };
    this.store.set(this.key(ref, o.metadata.name!, o.metadata.namespace), o);
  }

  peek<T = Obj>(ref: ResourceRef, name: string, namespace?: string): T | undefined {
    const o = this.store.get(this.key(ref, name, namespace));
    return o === undefined ? undefined : (deepCopy(o) as T);
  }

  callsOf(method: Call['method'], kind?: string, subresource?: string): Call[] {
    return this.calls.filter(
      (c) => c.method === method && (kind === undefined || c.kind === kind) && c.subresource === subresource,
    );
  }

  async get(ref: ResourceRef, name: string, namespace?: string): Promise<Obj | undefined> {
    this.record('get', ref, name);
    return this.peek(ref, name, namespace);
  }

  async apply(ref: ResourceRef, object: Obj): Promise<Obj> {
    this.record('apply', ref, object.metadata!.name!);
    const key = this.key(ref, object.metadata!.name!, object.metadata!.namespace);
    const existing = this.store.get(key);
    const next = deepCopy(object);
    next.metadata = {
      ...existing?.metadata,
      ...next.metadata,
      generation: (existing?.metadata?.generation ?? 0) + 1,
      resourceVersion: String(this.rv++),
    };
    if (existing && 'status' in existing) next.status = existing.status;
    this.store.set(key, next);
    return deepCopy(next);
  }

  async mergePatch(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: Record<string, unknown>,
    opts: { subresource?: 'status' } = {},
  ): Promise<Obj> {
    this.record('mergePatch', ref, name, opts.subresource);
    const key = this.key(ref, name, namespace);
    const existing = this.store.get(key);
    if (!existing) throw new ApiError(404, `${ref.kind} ${name} not found`, { status: { reason: 'NotFound' } });
    const wanted = (patch.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (wanted !== undefined && wanted !== existing.metadata?.resourceVersion) {
      throw new ApiError(409, 'the object has been modified', { status: { reason: 'Conflict' } });
    }
    const applied = opts.subresource === 'status' ? { status: patch.status } : withoutStatus(patch);
    const next = mergeJSON(existing, applied) as Obj;
    next.metadata = { ...next.metadata, resourceVersion: String(this.rv++) };
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) this.store.delete(key);
    else this.store.set(key, next);
    return deepCopy(next);
  }

  async delete(ref: ResourceRef, name: string, namespace?: string): Promise<boolean> {
    this.record('delete', ref, name);
    const key = this.key(ref, name, namespace);
    const existing = this.store.get(key);
    if (!existing) return false;
    if ((existing.metadata?.finalizers ?? []).length > 0) {
      existing.metadata!.deletionTimestamp ??= '2026-11-21T20:00:00Z' as unknown as Date;
      existing.metadata!.resourceVersion = String(this.rv++);
    } else {
      this.store.delete(key);
    }
    return true;
  }

  private record(method: Call['method'], ref: ResourceRef, name: string, subresource?: string): void {
    this.calls.push({ method, kind: ref.kind, name, ...(subresource ? { subresource } : {}) });
    const i = this.failures.findIndex((f) => f.method === method && f.kind === ref.kind);
    if (i >= 0) {
      const [failure] = this.failures.splice(i, 1);
      throw failure!.error;
    }
  }

  private key(ref: ResourceRef, name: string, namespace?: string): string {
    return `${ref.group}/${ref.plural}/${ref.namespaced ? (namespace ?? '') : ''}/${name}`;
  }
}

function withoutStatus(patch: Record<string, unknown>): Record<string, unknown> {
  const { status: _status, ...rest } = patch;
  return rest;
}

/** RFC 7386 JSON merge patch. */
function mergeJSON(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return deepCopy(patch);
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeJSON(out[k], v);
  }
  return out;
}
