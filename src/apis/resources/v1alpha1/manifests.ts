/**
 * The Secrets of a ManagedResource, as Gardener's helpers write them: one base64-encoded YAML document per object,
 * under a key naming its kind, namespace and name; and the Secret and ManagedResource that hand manifests to the
 * resource manager.
 */
import { stringify } from 'yaml';

/** What a manifest needs for its Secret key. */
export interface NamedManifest {
  kind: string;
  metadata: { name: string; namespace?: string };
}

/**
 * The Secret data of a ManagedResource: one key per object, `<kind>__<namespace>__<name>.yaml` as Gardener's managed
 * resource registry names them (characters a Secret key can't hold become `_`), in the order of the manifests.
 */
export function manifestSecretData(manifests: readonly NamedManifest[]): Record<string, string> {
  const data: Record<string, string> = {};
  for (const manifest of manifests) {
    const key = manifestSecretKey(manifest);
    if (key in data) throw new Error(`two manifests map to the secret key ${key}`);
    data[key] = Buffer.from(stringify(manifest, { lineWidth: 0 }), 'utf8').toString('base64');
  }
  return data;
}

export function manifestSecretKey(manifest: NamedManifest): string {
  const raw = `${manifest.kind.toLowerCase()}__${manifest.metadata.namespace ?? ''}__${manifest.metadata.name}.yaml`;
  return raw.replace(/[^-._a-zA-Z0-9]/g, '_');
}

/** A Secret of manifests, as a ManagedResource references it. */
export interface ManifestSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type: 'Opaque';
  /** One base64-encoded YAML document per object. */
  data: Record<string, string>;
}

/**
 * The Secret `managedresource-<name>` holding the manifests and the ManagedResource `<name>` that hands them to the
 * target (the shoot), both in `namespace`, as Gardener's helpers make them; `keepObjects` false.
 */
export function managedResourceObjects(
  namespace: string,
  name: string,
  manifests: readonly NamedManifest[],
  labels: Record<string, string> = {},
): {
  secret: ManifestSecret;
  managedResource: {
    apiVersion: 'resources.gardener.cloud/v1alpha1';
    kind: 'ManagedResource';
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    spec: { secretRefs: { name: string }[]; keepObjects: boolean };
  };
} {
  const secretName = `managedresource-${name}`;
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace, labels },
      type: 'Opaque',
      data: manifestSecretData(manifests),
    },
    managedResource: {
      apiVersion: 'resources.gardener.cloud/v1alpha1',
      kind: 'ManagedResource',
      metadata: { name, namespace, labels },
      spec: { secretRefs: [{ name: secretName }], keepObjects: false },
    },
  };
}
