/**
 * `gardener-ipv6 kubeconfig --shoot NAMESPACE/NAME`: prints an admin kubeconfig for the shoot with a client
 * certificate valid for `--expiration`, from Gardener's `shoots/adminkubeconfig` subresource (served by the admission
 * server: the caller needs `create` on `shoots/adminkubeconfig` in the shoot's namespace, and no access to its CA).
 */
import { parse, stringify } from 'yaml';
import {
  API_VERSION,
  KIND,
  MAX_EXPIRATION_SECONDS,
  MIN_EXPIRATION_SECONDS,
  type AdminKubeconfigRequest,
} from '../apis/authentication/v1alpha1/adminkubeconfigrequest.js';
import { ADMIN_KUBECONFIG_SUBRESOURCE, AdminKubeconfigShootRef } from '../admission/admin-kubeconfig-api.js';
import { ADDRESS_CONTEXT_SUFFIX } from '../admission/admin-kubeconfig-issuer.js';
import { ResourceClient } from '../runtime/client.js';
import { ApiError } from '../runtime/errors.js';
import { EXIT_OK, EXIT_UNUSABLE, InputError, type CliIO } from './io.js';
import { loadKubeConfig } from './run.js';

export interface KubeconfigOptions {
  readonly shoot: string;
  readonly kubeconfig?: string;
  readonly expiration: string;
  readonly pinAddress: boolean;
}

const UNITS: Record<string, number> = { h: 3600, m: 60, s: 1 };

/** `1h`, `90m`, `1h30m`, `600s` → seconds (Go's duration syntax for these units). */
export function parseDuration(text: string): number {
  if (!/^(\d+[hms])+$/.test(text)) {
    throw new InputError(`--expiration ${JSON.stringify(text)} is not a duration like 1h, 30m or 1h30m`);
  }
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)([hms])/g)) seconds += Number(amount) * UNITS[unit!]!;
  return seconds;
}

/** `garden-local/local` → namespace and name. */
export function parseShootRef(text: string): { namespace: string; name: string } {
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(text);
  if (!match) throw new InputError(`--shoot ${JSON.stringify(text)} must be NAMESPACE/NAME`);
  return { namespace: match[1]!, name: match[3]! };
}

/** The kubeconfig with the context of the load-balancer address as the current one. */
function pinned(kubeconfig: string, shoot: string): string {
  const config = parse(kubeconfig) as { contexts?: { name?: string }[]; 'current-context'?: string };
  const name = `${config['current-context'] ?? ''}${ADDRESS_CONTEXT_SUFFIX}`;
  if (!config.contexts?.some((c) => c.name === name)) {
    // The garden knows the address of shoots whose seed namespace it holds (the garden's own seed) only.
    throw new Error(
      `shoot ${shoot} has no load-balancer address in its kubeconfig: it has none yet, or it runs on a seed cluster ` +
        "other than the garden's (resolve its API server's name through the environment's DNS server instead)",
    );
  }
  return stringify({ ...config, 'current-context': name });
}

/** Why the API server itself answered: the subresource is not served, or its server does not answer. */
function hint(e: unknown): string {
  if (!(e instanceof ApiError)) return '';
  // The admission server names the shoot in its NotFound; the API server's own has no name.
  if (e.code === 404 && e.status?.details?.name === undefined) {
    return ' (the garden serves no shoots/adminkubeconfig: the APIService v1alpha1.core.gardener.cloud is missing)';
  }
  if (e.code === 503) return ' (the admission server, which serves shoots/adminkubeconfig, does not answer)';
  return '';
}

export async function runKubeconfig(opts: KubeconfigOptions, io: CliIO): Promise<number> {
  const { namespace, name } = parseShootRef(opts.shoot);
  const expirationSeconds = parseDuration(opts.expiration);
  // The issuer enforces the same bounds; checked here too to fail before contacting anything.
  if (expirationSeconds < MIN_EXPIRATION_SECONDS || expirationSeconds > MAX_EXPIRATION_SECONDS) {
    throw new InputError(`--expiration must be between 10m and 24h, not ${opts.expiration}`);
  }
  const client = new ResourceClient(loadKubeConfig(opts.kubeconfig));
  try {
    const request: AdminKubeconfigRequest = { apiVersion: API_VERSION, kind: KIND, spec: { expirationSeconds } };
    const answer = await client.createSubresource<AdminKubeconfigRequest>(
      AdminKubeconfigShootRef,
      name,
      namespace,
      ADMIN_KUBECONFIG_SUBRESOURCE,
      request,
    );
    const encoded = answer.status?.kubeconfig;
    if (!encoded) throw new Error(`the ${KIND} for ${opts.shoot} came back without status.kubeconfig`);
    const kubeconfig = Buffer.from(encoded, 'base64').toString('utf8');
    io.out(opts.pinAddress ? pinned(kubeconfig, opts.shoot) : kubeconfig);
    return EXIT_OK;
  } catch (e) {
    // Not found, forbidden, the garden API server unreachable: one line, no stack.
    const what = e instanceof ApiError ? '' : 'requesting the admin kubeconfig: ';
    io.err(`error: ${what}${(e as Error).message}${hint(e)}\n`);
    return EXIT_UNUSABLE;
  } finally {
    client.close();
  }
}
