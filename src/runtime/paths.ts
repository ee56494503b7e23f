/** Where a resource lives on the API server: the `apiVersion` of its objects and its URL paths. */
import type { ResourceRef } from '../apis/refs.js';

/** `apiVersion` of objects of `ref` (`v1`, `coordination.k8s.io/v1`). */
export function apiVersionOf(ref: ResourceRef): string {
  return ref.group === '' ? ref.version : `${ref.group}/${ref.version}`;
}

/**
 * The URL path of a collection or object. `namespace` is ignored for cluster-scoped resources; a namespaced
 * resource without namespace addresses all namespaces (lists and watches only).
 */
export function resourcePath(ref: ResourceRef, opts: { namespace?: string; name?: string; subresource?: string } = {}) {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  if (ref.namespaced && opts.namespace) path += `/namespaces/${encodeURIComponent(opts.namespace)}`;
  path += `/${ref.plural}`;
  if (opts.name !== undefined) path += `/${encodeURIComponent(opts.name)}`;
  if (opts.subresource) path += `/${opts.subresource}`;
  return path;
}
