/**
 * `gardener-ipv6 kubeconfig --shoot NAMESPACE/NAME`: prints an admin kubeconfig for the shoot with a client
 * certificate valid for `--expiration` (Gardener's `shoots/adminkubeconfig` subresource, made from the shoot's CA).
 */
import {
  AdminKubeconfigError,
  MAX_EXPIRATION_SECONDS,
  MIN_EXPIRATION_SECONDS,
  shootAdminKubeconfig,
} from '../gardenlet/shoot/admin-kubeconfig.js';
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

export async function runKubeconfig(opts: KubeconfigOptions, io: CliIO): Promise<number> {
  const { namespace, name } = parseShootRef(opts.shoot);
  const expirationSeconds = parseDuration(opts.expiration);
  if (expirationSeconds < MIN_EXPIRATION_SECONDS || expirationSeconds > MAX_EXPIRATION_SECONDS) {
    throw new InputError(`--expiration must be between 10m and 24h, not ${opts.expiration}`);
  }
  const client = new ResourceClient(loadKubeConfig(opts.kubeconfig));
  try {
    io.out(await shootAdminKubeconfig(client, namespace, name, { expirationSeconds, pinAddress: opts.pinAddress }));
    return EXIT_OK;
  } catch (e) {
    // Not found, no CA yet, the garden API server unreachable: one line, no stack.
    const what = e instanceof AdminKubeconfigError || e instanceof ApiError ? '' : 'reading the shoot: ';
    io.err(`error: ${what}${(e as Error).message}\n`);
    return EXIT_UNUSABLE;
  } finally {
    client.close();
  }
}
