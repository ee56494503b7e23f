/**
 * Installs the project's CRDs (charts/gardener-ipv6/crds/*.yaml) with server-side apply and waits until each is
 * Established and its resource is actually served.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  loadYaml,
  type KubeConfig,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

export const FIELD_MANAGER = 'gardener-ipv6-localenv';

/** A readable message from a client-node error: the API server's Status message when there is one. */
export function apiErrorMessage(e: unknown): string {
  if (e instanceof ApiException) {
    try {
      const status = JSON.parse(e.body as string) as { message?: string };
      if (status.message) return `HTTP ${e.code}: ${status.message}`;
    } catch {
      // Not a Status.
    }
    return `HTTP ${e.code}: ${String(e.body)}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Reads every CustomResourceDefinition document from the `*.yaml`/`*.yml` files of a folder, as client-node's typed
 * model. Not as plain parsed YAML: client-node serializes built-in kinds through that model, which only knows the
 * camelCase property names (`xKubernetesPreserveUnknownFields`) and silently drops `x-kubernetes-*` keys of plain
 * objects; the API server then rejects the schema.
 */
export async function readCRDs(dir: string): Promise<V1CustomResourceDefinition[]> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  } catch (e) {
    throw new Error(`cannot read the CRDs in ${dir} (run \`npm run generate\`): ${(e as Error).message}`);
  }
  const crds: V1CustomResourceDefinition[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${join(dir, file)}: ${doc.errors[0]!.message}`);
      const object = doc.toJSON() as KubernetesObject | null;
      if (object?.kind !== 'CustomResourceDefinition') continue;
      // JSON is YAML: loadYaml maps the plain object onto the typed model.
      crds.push(loadYaml<V1CustomResourceDefinition>(JSON.stringify(object)));
    }
  }
  if (crds.length === 0) throw new Error(`no CustomResourceDefinitions in ${dir} (run \`npm run generate\`)`);
  return crds;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Applies the CRDs and waits until they are usable. Returns their names. */
export async function installCRDs(
  kc: KubeConfig,
  crds: V1CustomResourceDefinition[],
  deadline: number,
): Promise<string[]> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  for (const crd of crds) {
    try {
      await objects.patch(crd, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    } catch (e) {
      throw new Error(`the API server rejected CRD ${crd.metadata?.name}: ${apiErrorMessage(e)}`);
    }
  }
  await Promise.all(crds.map((crd) => waitUntilServed(kc, crd, deadline)));
  return crds.map((crd) => crd.metadata!.name!);
}

/**
 * Established means the API server accepted the names; the first requests may still 404 for a moment while the
 * handler is wired, so also wait until a list of the resource succeeds.
 */
async function waitUntilServed(kc: KubeConfig, crd: V1CustomResourceDefinition, deadline: number): Promise<void> {
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const name = crd.metadata!.name!;
  const version = crd.spec.versions.find((v) => v.served)?.name;
  if (version === undefined) throw new Error(`CRD ${name} serves no version`);
  let last = 'not established';
  for (;;) {
    try {
      const current = await ext.readCustomResourceDefinition({ name });
      const conditions = current.status?.conditions ?? [];
      const established = conditions.find((c) => c.type === 'Established')?.status === 'True';
      const rejected = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      if (rejected) throw new Error(`CRD ${name}: names not accepted: ${rejected.message}`);
      if (established) {
        await custom.listClusterCustomObject({
          group: crd.spec.group,
          version,
          plural: crd.spec.names.plural,
          limit: 1,
        });
        return;
      }
    } catch (e) {
      if (e instanceof Error && e.message.includes('names not accepted')) throw e;
      last = apiErrorMessage(e);
    }
    if (Date.now() > deadline) throw new Error(`CRD ${name} not served in time: ${last}`);
    await sleep(100);
  }
}
