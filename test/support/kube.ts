/**
 * Helpers for integration tests against the shared control plane of the global setup.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { inject, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/system/project.js';

/** A client configuration for the shared control plane's admin. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
}

/** A short random suffix for cluster-scoped names (namespaces are per test, cluster-scoped objects are not). */
export function uniqueSuffix(): string {
  return randomBytes(3).toString('hex');
}

/**
 * Creates a namespace for the calling test (`PREFIX-xxxxxx`) and deletes it when the test finishes. Without a
 * controller manager a deleted namespace stays Terminating: harmless, the server is thrown away.
 */
export async function newTestNamespace(prefix = 'test'): Promise<string> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const ns = await core.createNamespace({
    body: { metadata: { generateName: `${prefix}-`, labels: { 'gardener-ipv6.test/e2e': 'true' } } },
  });
  const name = ns.metadata!.name!;
  onTestFinished(async () => {
    try {
      await core.deleteNamespace({ name });
    } catch (e) {
      if (!(e instanceof ApiException && e.code === 404)) throw e;
    }
  });
  return name;
}

/** Reads a YAML example object from examples/. */
export function example<T = Record<string, unknown>>(file: string): T {
  return parse(readFileSync(join(projectRoot(), 'examples', file), 'utf8')) as T;
}

/** The HTTP status of a client-node error (ApiException), or undefined for other errors. */
export function statusCode(e: unknown): number | undefined {
  return e instanceof ApiException ? e.code : undefined;
}
