/**
 * What the resource manager makes of a ManagedResource, as pure functions: the objects of its Secrets (YAML, one or
 * more documents per data key), prepared for applying (labels injected, the origin annotation), the order to apply
 * them in, what to prune, and how healthy an applied object is.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

/** On every applied object: which ManagedResource it belongs to (`<cluster>:<namespace>/<name>`). */
export const ORIGIN_ANNOTATION = 'resources.gardener.cloud/origin';
/** `true` on an object: it stays when removed from its ManagedResource or when that is deleted. */
export const KEEP_OBJECT_ANNOTATION = 'resources.gardener.cloud/keep-object';
/** `Ignore` on an object: it is not applied, nor pruned, nor counted. */
export const MODE_ANNOTATION = 'resources.gardener.cloud/mode';
export const FINALIZER = 'resources.gardener.cloud/gardener-resource-manager';
export const FIELD_MANAGER = 'gardener-resource-manager';

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface SecretManifests {
  name: string;
  data?: Record<string, string>;
}

export interface DecodeResult {
  objects: KubernetesObject[];
  /** `secret <name> key <key>: <what is wrong>`. */
  errors: string[];
}

/** The objects in the Secrets' data (base64 YAML); documents that are empty are skipped, invalid ones reported. */
export function decodeManifests(secrets: readonly SecretManifests[]): DecodeResult {
  const objects: KubernetesObject[] = [];
  const errors: string[] = [];
  for (const secret of secrets) {
    for (const key of Object.keys(secret.data ?? {}).sort()) {
      const text = Buffer.from(secret.data![key]!, 'base64').toString('utf8');
      const where = `secret ${secret.name} key ${key}`;
      for (const doc of parseAllDocuments(text)) {
        if (doc.errors.length > 0) {
          errors.push(`${where}: ${doc.errors[0]!.message}`);
          continue;
        }
        const value = doc.toJS() as unknown;
        if (value === null || value === undefined) continue;
        const problem = objectProblem(value);
        if (problem !== undefined) errors.push(`${where}: ${problem}`);
        else objects.push(value as KubernetesObject);
      }
    }
  }
  const seen = new Map<string, number>();
  for (const o of objects) {
    const key = referenceKey(referenceOf(o));
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, count] of seen) if (count > 1) errors.push(`${key} appears ${count} times`);
  return { objects, errors };
}

function objectProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || Array.isArray(value)) return 'not an object';
  const o = value as KubernetesObject;
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') return 'apiVersion missing';
  if (typeof o.kind !== 'string' || o.kind === '') return 'kind missing';
  if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') return `${o.kind}: metadata.name missing`;
  return undefined;
}

export function referenceOf(o: KubernetesObject): ObjectReference {
  return {
    apiVersion: o.apiVersion!,
    kind: o.kind!,
    name: o.metadata!.name!,
    ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
  };
}

/** `Kind group/namespace/name`: one key per object, whatever version names it. */
export function referenceKey(r: ObjectReference): string {
  const group = r.apiVersion.includes('/') ? r.apiVersion.split('/')[0] : '';
  return `${group ? `${r.kind}.${group}` : r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

export const isIgnored = (o: KubernetesObject) => o.metadata?.annotations?.[MODE_ANNOTATION] === 'Ignore';
export const isKept = (o: KubernetesObject | undefined) =>
  o?.metadata?.annotations?.[KEEP_OBJECT_ANNOTATION] === 'true';

/** A copy of each object with the injected labels and the origin annotation. */
export function prepareObjects(
  objects: readonly KubernetesObject[],
  opts: { injectLabels?: Record<string, string>; origin: string },
): KubernetesObject[] {
  return objects.map((o) => {
    const copy = structuredClone(o);
    copy.metadata = {
      ...copy.metadata,
      labels: { ...copy.metadata?.labels, ...opts.injectLabels },
      annotations: { ...copy.metadata?.annotations, [ORIGIN_ANNOTATION]: opts.origin },
    };
    return copy;
  });
}

/** Kinds that others need first: namespaces, definitions, identities and configuration before workloads. */
const KIND_ORDER = [
  'Namespace',
  'CustomResourceDefinition',
  'PriorityClass',
  'ServiceAccount',
  'ClusterRole',
  'Role',
  'ClusterRoleBinding',
  'RoleBinding',
  'ConfigMap',
  'Secret',
  'Service',
];

/** The objects in the order to apply them (the reverse is the order to delete them); stable otherwise. */
export function applyOrder<T extends { kind?: string }>(objects: readonly T[]): T[] {
  const rank = (o: T) => {
    const i = KIND_ORDER.indexOf(o.kind ?? '');
    return i < 0 ? KIND_ORDER.length : i;
  };
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => o);
}

/** What was applied before and is no longer wanted. */
export function toPrune(previous: readonly ObjectReference[], desired: readonly ObjectReference[]): ObjectReference[] {
  const wanted = new Set(desired.map(referenceKey));
  return previous.filter((r) => !wanted.has(referenceKey(r)));
}

export interface Health {
  healthy: boolean;
  progressing: boolean;
  /** Why not healthy or still progressing. */
  message?: string;
}

interface WorkloadStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  desiredNumberScheduled?: number;
  numberReady?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  currentRevision?: string;
  updateRevision?: string;
}

/** The health of an object as it is in the target cluster, by the rules of Gardener's health checks per kind. */
export function healthOf(o: KubernetesObject): Health {
  const status = (o as { status?: WorkloadStatus }).status ?? {};
  const spec = (o as { spec?: { replicas?: number } }).spec ?? {};
  const name = `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
  const generation = o.metadata?.generation;
  const stale =
    generation !== undefined && status.observedGeneration !== undefined && status.observedGeneration < generation;
  switch (o.kind) {
    case 'Deployment':
    case 'StatefulSet': {
      const want = spec.replicas ?? 1;
      const ready = status.readyReplicas ?? 0;
      const updated = status.updatedReplicas ?? 0;
      if (ready < want)
        return { healthy: false, progressing: true, message: `${name}: ${ready}/${want} replicas ready` };
      if (stale || updated < want) return { healthy: true, progressing: true, message: `${name}: rolling out` };
      // Pods of an earlier template still run (a Deployment's surge, a StatefulSet's rolling update not done yet).
      const earlier =
        o.kind === 'Deployment'
          ? (status.replicas ?? 0) > updated
          : status.updateRevision !== undefined && status.currentRevision !== status.updateRevision;
      if (earlier) return { healthy: true, progressing: true, message: `${name}: pods of an earlier template left` };
      return { healthy: true, progressing: false };
    }
    case 'DaemonSet': {
      const want = status.desiredNumberScheduled ?? 0;
      const ready = status.numberReady ?? 0;
      if (ready < want) return { healthy: false, progressing: true, message: `${name}: ${ready}/${want} pods ready` };
      if (stale || (status.updatedNumberScheduled ?? 0) < want)
        return { healthy: true, progressing: true, message: `${name}: rolling out` };
      return { healthy: true, progressing: false };
    }
    case 'CustomResourceDefinition': {
      const established = status.conditions?.find((c) => c.type === 'Established');
      return established?.status === 'True'
        ? { healthy: true, progressing: false }
        : { healthy: false, progressing: true, message: `${name}: not established` };
    }
    default:
      return { healthy: true, progressing: false };
  }
}
