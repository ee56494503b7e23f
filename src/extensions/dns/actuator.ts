/**
 * The provider part of the `local` DNS extension: what publishing and removing a DNSRecord means at a DNS server
 * that takes RFC 2136 updates (BIND9 in the local setup). The generic part (finalizer, status) is the reconciler's.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { DNSRecord } from '../../apis/extensions/v1alpha1/dnsrecord.js';
import { resources, type ResourceClient } from '../../runtime/client.js';
import {
  canonicalValue,
  DNSUpdateClient,
  RECORD_TYPE_CODES,
  type RRset,
  type RRsetRef,
  type UpdateRecordType,
} from './rfc2136.js';
import { DEFAULT_DNS_TIMEOUT_MS, type Transport } from './transport.js';
import { canonicalNameWire, tsigKey, type TSIGKey } from './tsig.js';

export const EXTENSION_TYPE = 'local';
/** Used when neither the DNSRecord (`spec.zone`) nor the secret (`zone`) names a zone. */
export const DEFAULT_ZONE = 'local.gardener.cloud.';
export const DEFAULT_TTL = 120;

/** The keys of the secret in `spec.secretRef`, as the gardenlet writes them (src/gardenlet/dns-provider.ts). */
export const SecretKeys = {
  server: 'server',
  zone: 'zone',
  tsigKeyName: 'tsigKeyName',
  tsigAlgorithm: 'tsigAlgorithm',
  tsigSecret: 'tsigSecret',
} as const;

/** A DNSRecord or its secret that cannot work as it is; fixing the object (not retrying) helps. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/** Where and how to publish, read from the secret. */
export interface LocalDNSProvider {
  readonly server: string;
  readonly zone?: string;
  readonly tsig?: TSIGKey;
}

/** Reads the provider settings from the secret's `data` (base64, as the API server returns it). */
export function providerFromSecret(secret: V1Secret): LocalDNSProvider {
  const what = `secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  const field = (key: string): string | undefined => {
    const raw = secret.data?.[key] ?? secret.stringData?.[key];
    if (raw === undefined) return undefined;
    const text = (secret.data?.[key] !== undefined ? Buffer.from(raw, 'base64').toString('utf8') : raw).trim();
    return text === '' ? undefined : text;
  };
  const server = field(SecretKeys.server);
  if (!server) throw new ConfigurationError(`${what} has no "${SecretKeys.server}"`);
  const zone = field(SecretKeys.zone);
  const keyName = field(SecretKeys.tsigKeyName);
  const keySecret = field(SecretKeys.tsigSecret);
  if ((keyName === undefined) !== (keySecret === undefined)) {
    throw new ConfigurationError(`${what} must have both "${SecretKeys.tsigKeyName}" and "${SecretKeys.tsigSecret}"`);
  }
  let tsig: TSIGKey | undefined;
  if (keyName !== undefined && keySecret !== undefined) {
    try {
      tsig = tsigKey(keyName, field(SecretKeys.tsigAlgorithm), keySecret);
    } catch (e) {
      throw new ConfigurationError(`${what}: ${(e as Error).message}`);
    }
  }
  return { server, ...(zone ? { zone } : {}), ...(tsig ? { tsig } : {}) };
}

/** The RRset a DNSRecord asks for; throws ConfigurationError for what validation should have caught. */
export function desiredRRset(record: DNSRecord, provider: LocalDNSProvider): RRset {
  const { spec } = record;
  const type = spec.recordType ?? '';
  if (!(type in RECORD_TYPE_CODES)) {
    throw new ConfigurationError(
      `record type "${type}" is not supported (${Object.keys(RECORD_TYPE_CODES).join(', ')})`,
    );
  }
  if (!spec.name) throw new ConfigurationError('spec.name is empty');
  const values = (spec.values ?? []).map((value, i) => {
    try {
      return canonicalValue(type as UpdateRecordType, value);
    } catch (e) {
      throw new ConfigurationError(`spec.values[${i}]: ${(e as Error).message}`);
    }
  });
  const zone = spec.zone || provider.zone || DEFAULT_ZONE;
  for (const [field, name] of [
    ['spec.name', spec.name],
    ['zone', zone],
  ] as const) {
    try {
      canonicalNameWire(name);
    } catch (e) {
      throw new ConfigurationError(`${field}: ${(e as Error).message}`);
    }
  }
  return { zone, name: spec.name, type: type as UpdateRecordType, ttl: spec.ttl ?? DEFAULT_TTL, values };
}

/** What the actuator needs from a DNS client; {@link DNSUpdateClient} in production, fakes in unit tests. */
export interface RRsetPublisher {
  replaceRRset(rrset: RRset, opts?: { signal?: AbortSignal }): Promise<void>;
  deleteRRset(ref: RRsetRef, opts?: { signal?: AbortSignal }): Promise<void>;
}

export type PublisherFactory = (provider: LocalDNSProvider) => RRsetPublisher;

export interface ActuatorContext {
  readonly signal: AbortSignal;
}

/**
 * `status.providerStatus` of a DNSRecord: which RRset was published last, so that a changed name or record type
 * (immutable by validation, but nothing else enforces it) does not leave the old RRset behind.
 */
export interface LocalDNSRecordStatus {
  readonly apiVersion: typeof PROVIDER_STATUS_API_VERSION;
  readonly kind: 'DNSRecordStatus';
  readonly published: { readonly zone: string; readonly name: string; readonly recordType: string };
}
export const PROVIDER_STATUS_API_VERSION = 'dns.local.extensions.gardener.cloud/v1alpha1';

/** The RRset the last successful reconcile published, from `status.providerStatus`. */
export function publishedRRset(record: DNSRecord): RRsetRef | undefined {
  const published = (record.status?.providerStatus as Partial<LocalDNSRecordStatus> | undefined)?.published;
  if (!published?.zone || !published.name || !(published.recordType in RECORD_TYPE_CODES)) return undefined;
  return { zone: published.zone, name: published.name, type: published.recordType as UpdateRecordType };
}

function sameRRset(a: RRsetRef, b: RRsetRef): boolean {
  const norm = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return norm(a.zone) === norm(b.zone) && norm(a.name) === norm(b.name) && a.type === b.type;
}

export interface Published {
  /** With trailing dot. */
  readonly zone: string;
  readonly server: string;
  readonly providerStatus: LocalDNSRecordStatus;
}

/** Gardener's split: the actuator does the provider work, the reconciler the bookkeeping. */
export interface DNSRecordActuator {
  /** Publishes the record (and removes an RRset it published before under another name or type). */
  reconcile(record: DNSRecord, ctx: ActuatorContext): Promise<Published>;
  /** Removes the record's RRset; succeeds when it is already gone. */
  delete(record: DNSRecord, ctx: ActuatorContext): Promise<void>;
}

export interface LocalDNSActuatorOptions {
  readonly client: ResourceClient;
  /** Per DNS request. @default 2000 */
  readonly timeoutMs?: number;
  /** @default 'udp' (TCP when an answer is truncated) */
  readonly transport?: Transport;
  /** @default RFC 2136 updates with {@link DNSUpdateClient} */
  readonly publisher?: PublisherFactory;
}

export class LocalDNSActuator implements DNSRecordActuator {
  private readonly client: ResourceClient;
  private readonly publisher: PublisherFactory;

  constructor(opts: LocalDNSActuatorOptions) {
    this.client = opts.client;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
    this.publisher =
      opts.publisher ??
      ((p) =>
        new DNSUpdateClient({
          server: p.server,
          timeoutMs,
          ...(p.tsig ? { tsig: p.tsig } : {}),
          ...(opts.transport ? { transport: opts.transport } : {}),
        }));
  }

  async reconcile(record: DNSRecord, ctx: ActuatorContext): Promise<Published> {
    const provider = await this.provider(record, ctx);
    const rrset = desiredRRset(record, provider);
    const publisher = this.publisherFor(provider);
    await publisher.replaceRRset(rrset, { signal: ctx.signal });
    // The new RRset first, then the old one goes: the name never resolves to nothing in between.
    const previous = publishedRRset(record);
    if (previous && !sameRRset(previous, rrset)) await publisher.deleteRRset(previous, { signal: ctx.signal });
    const zone = withDot(rrset.zone);
    return {
      zone,
      server: provider.server,
      providerStatus: {
        apiVersion: PROVIDER_STATUS_API_VERSION,
        kind: 'DNSRecordStatus',
        published: { zone, name: rrset.name, recordType: rrset.type },
      },
    };
  }

  async delete(record: DNSRecord, ctx: ActuatorContext): Promise<void> {
    const provider = await this.provider(record, ctx);
    const { zone, name, type } = desiredRRset(record, provider);
    const publisher = this.publisherFor(provider);
    await publisher.deleteRRset({ zone, name, type }, { signal: ctx.signal });
    const previous = publishedRRset(record);
    if (previous && !sameRRset(previous, { zone, name, type })) {
      await publisher.deleteRRset(previous, { signal: ctx.signal });
    }
  }

  private publisherFor(provider: LocalDNSProvider): RRsetPublisher {
    try {
      return this.publisher(provider);
    } catch (e) {
      // An unparsable server address.
      throw new ConfigurationError((e as Error).message);
    }
  }

  private async provider(record: DNSRecord, ctx: ActuatorContext): Promise<LocalDNSProvider> {
    const ref = record.spec.secretRef;
    if (!ref?.name) throw new ConfigurationError('spec.secretRef.name is empty');
    const namespace = ref.namespace || record.metadata.namespace;
    const secret = await this.client.get<V1Secret>(resources.secret, ref.name, namespace, { signal: ctx.signal });
    if (!secret) throw new ConfigurationError(`secret ${namespace ?? ''}/${ref.name} (spec.secretRef) not found`);
    return providerFromSecret(secret);
  }
}

function withDot(zone: string): string {
  return zone.endsWith('.') ? zone : `${zone}.`;
}
