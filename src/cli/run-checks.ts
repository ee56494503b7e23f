/**
 * The flags of `gardener-ipv6 run`, checked before anything starts: a wrong flag is a usage error (exit 2, one line
 * on stderr naming every bad flag), never a stack trace from deep inside a half-started process.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, isIP, type Server } from 'node:net';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../apis/validation/dns-name.js';
import { parseServer } from '../extensions/dns/transport.js';
import { urlHost } from '../system/net.js';
import type { RegisteredExtensionTypes } from '../admission/extensions.js';
import type { Component } from '../app/runtime.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import type { HostIPs } from '../extensions/provider-local/loadbalancer/ingress.js';
import type { LoadBalancerNetworks } from '../extensions/provider-local/loadbalancer/pool.js';
import type { MachineLimits } from '../extensions/provider-local/admission.js';
import { InputError } from './io.js';
import { parse as parseYAML } from 'yaml';
import { admit, UnknownKindError } from '../apis/admission.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import { errorString } from '../apis/field/errors.js';

export interface RunOptions {
  readonly kubeconfig?: string;
  /** The garden's, when it is another cluster than `kubeconfig`'s (which is then the seed). */
  readonly gardenKubeconfig?: string;
  readonly components: readonly Component[];
  readonly gates: FeatureGates;
  readonly webhookHost: string;
  readonly webhookPort: number;
  readonly webhookCertDir?: string;
  readonly webhookRegister: boolean;
  readonly webhookAdvertiseHost: string;
  readonly healthHost: string;
  readonly healthPort: number;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionID: string;
  readonly seedName?: string;
  /** A file with the Seed the gardenlet registers in the garden when it starts (Gardener's `seedConfig`). */
  readonly seedConfig?: string;
  readonly dnsServer: string;
  readonly dnsTSIGKeyName?: string;
  readonly dnsTSIGSecretFile?: string;
  readonly domain: string;
  readonly hostIPs: HostIPs;
  /**
   * Shoot control planes and machines as workloads of the cluster: `auto` when it has Nodes (and the gardenlet runs),
   * else objects only.
   */
  readonly controlPlaneWorkloads: ControlPlaneWorkloadsMode;
  /** Where the load balancers of shoots with workloads take their addresses. @default DEFAULT_LOAD_BALANCER_NETWORKS */
  readonly loadBalancerNetworks?: LoadBalancerNetworks;
  /** The most machines the webhook admits per pool and per shoot. @default the defaults of provider-local/admission.ts */
  readonly machineLimits?: MachineLimits;
  readonly logLevel: string;
  /** The extension types the webhook lets Shoots use. */
  readonly extensionTypes: RegisteredExtensionTypes;
}

export const CONTROL_PLANE_WORKLOADS_MODES = ['auto', 'true', 'false'] as const;
export type ControlPlaneWorkloadsMode = (typeof CONTROL_PLANE_WORKLOADS_MODES)[number];

export function parseControlPlaneWorkloadsMode(text: string): ControlPlaneWorkloadsMode {
  if (!(CONTROL_PLANE_WORKLOADS_MODES as readonly string[]).includes(text)) {
    throw new InputError(
      `--control-plane-workloads ${JSON.stringify(text)}: one of ${CONTROL_PLANE_WORKLOADS_MODES.join(', ')}`,
    );
  }
  return text as ControlPlaneWorkloadsMode;
}

/** pino's level names. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** What the checks read, so that the run does not read it again. */
export interface CheckedRunInputs {
  readonly kubeConfig: KubeConfig;
  /** --garden-kubeconfig's, loaded. */
  readonly gardenKubeConfig?: KubeConfig;
  /** The TSIG secret from --dns-tsig-secret-file, trimmed. */
  readonly tsigSecret?: string;
  /** --seed-config's Seed, decoded, defaulted and valid. */
  readonly seedConfig?: Seed;
  /** --seed-name, or the name of --seed-config's Seed. */
  readonly seedName?: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function readable(flag: string, path: string, errors: string[]): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    errors.push(`${flag} ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    return undefined;
  }
}

function ipAddress(flag: string, value: string, errors: string[]): boolean {
  if (isIP(value) !== 0) return true;
  errors.push(`${flag} ${JSON.stringify(value)}: not an IP address (without brackets, e.g. :: or fd00::1)`);
  return false;
}

function name(flag: string, value: string, check: (v: string) => string[], errors: string[]): void {
  const problems = check(value);
  if (problems.length > 0) errors.push(`${flag} ${JSON.stringify(value)}: ${problems[0]}`);
}

function webhookCertDirErrors(dir: string, errors: string[]): void {
  const read = (file: string) => readable('--webhook-cert-dir', join(dir, file), errors);
  const parse = (file: string, text: string | undefined, parser: (text: string) => unknown) => {
    if (text === undefined) return;
    try {
      parser(text);
    } catch (e) {
      errors.push(
        `--webhook-cert-dir ${join(dir, file)}: not a PEM ${file.endsWith('.key') ? 'key' : 'certificate'} (${(e as Error).message})`,
      );
    }
  };
  parse('tls.crt', read('tls.crt'), (t) => new X509Certificate(t));
  parse('tls.key', read('tls.key'), (t) => createPrivateKey(t));
  parse('ca.crt', read('ca.crt'), (t) => new X509Certificate(t));
}

/** Binds `host`:`port` and keeps it until released: what the process will bind, held so two flags can't share it. */
function probe(server: Server, host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    server.listen({ host, port, exclusive: true }, () => resolve(undefined));
  });
}

async function listenErrors(
  listeners: { hostFlag: string; portFlag: string; host: string; port: number }[],
  errors: string[],
): Promise<void> {
  const servers: Server[] = [];
  try {
    for (const l of listeners) {
      const server = createServer();
      servers.push(server);
      const e = await probe(server, l.host, l.port);
      if (e === undefined) continue;
      const where = `${urlHost(l.host)}:${l.port}`;
      if (e.code === 'EADDRNOTAVAIL') errors.push(`${l.hostFlag} ${l.host}: no such address on this host`);
      else if (e.code === 'EADDRINUSE') errors.push(`${l.portFlag} ${l.port}: ${where} is already in use`);
      else if (e.code === 'EACCES') errors.push(`${l.portFlag} ${l.port}: not allowed to listen on ${where}`);
      else
        errors.push(
          `${l.hostFlag} ${l.host}, ${l.portFlag} ${l.port}: cannot listen on ${where} (${e.code ?? e.message})`,
        );
    }
  } finally {
    await Promise.all(
      servers.map((s) => new Promise((resolve) => (s.listening ? s.close(resolve) : resolve(undefined)))),
    );
  }
}

/**
 * Checks every flag of `run` (names, addresses, files, that the listen addresses exist here and their ports are
 * free) and loads the kubeconfig. Throws one InputError naming every bad flag; starts nothing.
 */
export async function checkRunOptions(
  options: RunOptions,
  loadKubeConfig: (path: string | undefined) => KubeConfig,
): Promise<CheckedRunInputs> {
  const errors: string[] = [];
  if (!(LOG_LEVELS as readonly string[]).includes(options.logLevel)) {
    errors.push(`--log-level ${JSON.stringify(options.logLevel)}: want one of ${LOG_LEVELS.join(', ')}`);
  }
  const admission = options.components.includes('admission');
  const webhookHostOK = ipAddress('--webhook-host', options.webhookHost, errors);
  const healthHostOK = ipAddress('--health-host', options.healthHost, errors);
  if (admission && options.webhookRegister) ipAddress('--webhook-advertise-host', options.webhookAdvertiseHost, errors);
  if (admission && options.webhookCertDir !== undefined) webhookCertDirErrors(options.webhookCertDir, errors);
  name('--leader-election-namespace', options.leaderElectionNamespace, dns1123LabelErrors, errors);
  name('--leader-election-id', options.leaderElectionID, dns1123SubdomainErrors, errors);
  if (options.seedName !== undefined) name('--seed-name', options.seedName, dns1123SubdomainErrors, errors);
  name('--domain', options.domain.replace(/\.$/, ''), dns1123SubdomainErrors, errors);
  try {
    parseServer(options.dnsServer);
  } catch (e) {
    errors.push(`--dns-server: ${(e as Error).message}`);
  }

  let tsigSecret: string | undefined;
  const { dnsTSIGKeyName: keyName, dnsTSIGSecretFile: secretFile } = options;
  if ((keyName === undefined) !== (secretFile === undefined)) {
    errors.push('--dns-tsig-key-name and --dns-tsig-secret-file go together: give both or neither');
  }
  if (keyName !== undefined) name('--dns-tsig-key-name', keyName.replace(/\.$/, ''), dns1123SubdomainErrors, errors);
  if (secretFile !== undefined) {
    const text = readable('--dns-tsig-secret-file', secretFile, errors)?.trim();
    if (text !== undefined && !BASE64.test(text)) {
      errors.push(`--dns-tsig-secret-file ${secretFile}: not a base64 secret (as tsig-keygen writes it)`);
    } else tsigSecret = text;
  }

  // Only when the addresses are addresses: a name would be resolved, which is not what the flag means.
  const listeners = [];
  if (admission && webhookHostOK) {
    listeners.push({
      hostFlag: '--webhook-host',
      portFlag: '--webhook-port',
      host: options.webhookHost,
      port: options.webhookPort,
    });
  }
  if (healthHostOK) {
    listeners.push({
      hostFlag: '--health-host',
      portFlag: '--health-port',
      host: options.healthHost,
      port: options.healthPort,
    });
  }
  await listenErrors(listeners, errors);

  const seedConfig = options.seedConfig !== undefined ? seedConfigOf(options, errors) : undefined;
  const seedName = options.seedName ?? seedConfig?.metadata.name;

  let gardenKubeConfig: KubeConfig | undefined;
  if (options.gardenKubeconfig !== undefined) {
    const gardenOnly = options.components.filter((c) => c === 'admission' || c === 'scheduler');
    if (gardenOnly.length > 0) {
      errors.push(
        `--garden-kubeconfig: ${gardenOnly.join(' and ')} run in the garden (leave them out of --components)`,
      );
    }
    // A gardenlet in its own seed serves that seed only, as Gardener's: it knows which Seed it is.
    if (seedName === undefined && options.seedConfig === undefined) {
      errors.push('--garden-kubeconfig needs --seed-name (or --seed-config)');
    }
    try {
      gardenKubeConfig = loadKubeConfig(options.gardenKubeconfig);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      errors.push(`--garden-kubeconfig: ${e.message}`);
    }
  }
  let kubeConfig: KubeConfig | undefined;
  try {
    kubeConfig = loadKubeConfig(options.kubeconfig);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    errors.push(e.message);
  }
  if (errors.length > 0 || kubeConfig === undefined) throw new InputError(errors.join('; '));
  return {
    kubeConfig,
    ...(gardenKubeConfig !== undefined ? { gardenKubeConfig } : {}),
    ...(tsigSecret !== undefined ? { tsigSecret } : {}),
    ...(seedConfig !== undefined ? { seedConfig } : {}),
    ...(seedName !== undefined ? { seedName } : {}),
  };
}

/**
 * --seed-config's Seed, decoded, defaulted and checked as the webhook would (the same field errors); undefined with
 * the reasons in `errors` when it can't be used. Its name must be --seed-name's when both are given.
 */
function seedConfigOf(options: RunOptions, errors: string[]): Seed | undefined {
  const file = options.seedConfig!;
  const flag = `--seed-config ${file}`;
  if (!options.components.includes('gardenlet')) {
    errors.push('--seed-config: the gardenlet registers the Seed (add gardenlet to --components)');
    return undefined;
  }
  const text = readable('--seed-config', file, errors);
  if (text === undefined) return undefined;
  let object: unknown;
  try {
    object = parseYAML(text, { uniqueKeys: true });
  } catch (e) {
    errors.push(`${flag}: not YAML (${(e as Error).message.split('\n')[0]})`);
    return undefined;
  }
  let result;
  try {
    result = admit({ object, gates: options.gates });
  } catch (e) {
    if (!(e instanceof UnknownKindError)) throw e;
    errors.push(`${flag}: ${e.message}`);
    return undefined;
  }
  if ((result.kind.kind as string) !== 'Seed') {
    errors.push(`${flag}: a ${result.kind.kind}, not a Seed of core.gardener.cloud/v1beta1`);
    return undefined;
  }
  if (result.errors.length > 0 || result.object === undefined) {
    errors.push(`${flag}: the Seed is invalid: ${result.errors.map(errorString).join('; ')}`);
    return undefined;
  }
  const seed = result.object as Seed;
  if (options.seedName !== undefined && seed.metadata.name !== options.seedName) {
    errors.push(`${flag}: the Seed is named ${JSON.stringify(seed.metadata.name)}, --seed-name ${options.seedName}`);
    return undefined;
  }
  return seed;
}
