/**
 * The provider part of the `local` DNS extension: what publishing and removing a DNSRecord means at a DNS server
 * that takes RFC 2136 updates (BIND9 in the local setup), and how it went, with Gardener's error codes. The generic
 * part (finalizer, status, retries) is the extension reconciler's (src/extensions/common/reconciler.ts).
 */
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import type { DNSRecord } from '../../apis/extensions/v1alpha1/dnsrecord.js';
import { Refs } from '../../apis/refs.js';
import { type ResourceClient } from '../../runtime/client.js';
import { isForbidden } from '../../runtime/errors.js';
import type { Logger } from '../../runtime/log.js';
import type { Actuator, ActuatorError, ActuatorOutcome } from '../common/reconciler.js';
import { ConfigurationError, errorCodes } from './errors.js';
import {
  deleteOwned,
  isOwnerRecordName,
  OWNER_LABEL_PREFIX,
  ownerRecordName,
  publishOwned,
  type DNSRecordOwner,
  type OwnedZoneWriter,
} from './ownership.js';
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

export { ConfigurationError, OwnershipError } from './errors.js';

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
  if (isOwnerRecordName(spec.name)) {
    throw new ConfigurationError(`spec.name: labels starting with "${OWNER_LABEL_PREFIX}" are for owner records`);
  }
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
    ['spec.name (with its owner record label)', ownerRecordName(spec.name, type as UpdateRecordType)],
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

/** A DNS name as compared: lower case, without the trailing dot. */
const comparable = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Refuses a name a DNSRecord may not publish (before anything is written; removing what it published stays
 * possible): one outside its zone, or the zone's apex (its SOA and NS records are the zone's own). A DNSRecord in a
 * seed namespace (`shoot--<project>--<shoot>`) publishes its shoot's names only,
 * `<shoot>.<project>.external.<domain>` and `.internal.` (the domain is the provider secret's zone, the gardenlet's
 * base domain), and names below them: another shoot's API server name is not its to take, even while unowned.
 */
export function checkPublishable(namespace: string, rrset: Pick<RRset, 'zone' | 'name'>, domain: string): void {
  const zone = comparable(rrset.zone);
  const name = comparable(rrset.name);
  if (name === zone) throw new ConfigurationError(`spec.name: ${rrset.name} is the apex of zone ${zone}`);
  if (!name.endsWith(`.${zone}`)) throw new ConfigurationError(`spec.name: ${rrset.name} is not in zone ${zone}`);
  if (!namespace.startsWith('shoot--')) return;
  // shoot--<project>--<shoot>; names with `--` (refused by admission, possible without it) split more than one way.
  const rest = namespace.slice('shoot--'.length);
  const splits: [string, string][] = [];
  for (let i = rest.indexOf('--'); i > 0; i = rest.indexOf('--', i + 1))
    splits.push([rest.slice(0, i), rest.slice(i + 2)]);
  if (splits.length === 0) return;
  const base = comparable(domain);
  const allowed = splits.flatMap(([project, shoot]) =>
    ['external', 'internal'].map((visibility) => `${shoot}.${project}.${visibility}.${base}`),
  );
  if (!allowed.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) {
    const [project, shoot] = splits[0]!;
    throw new ConfigurationError(
      `spec.name: ${rrset.name} is not a name of shoot ${project}/${shoot}: a DNSRecord in its seed namespace ` +
        `publishes names in ${allowed.join(' or ')} only`,
    );
  }
}

/** What the actuator needs from a DNS client; {@link DNSUpdateClient} in production, fakes in unit tests. */
export type RRsetPublisher = OwnedZoneWriter;

export type PublisherFactory = (provider: LocalDNSProvider) => RRsetPublisher;

export interface ActuatorContext {
  readonly signal: AbortSignal;
  readonly logger?: Logger;
}

/**
 * The namespace of the secret a DNSRecord may use: its own. A secret of another namespace would let one shoot's
 * DNSRecord publish with another's credentials (validation refuses it too; this holds without the webhook).
 */
export function checkSecretNamespace(record: DNSRecord): void {
  const own = record.metadata.namespace ?? '';
  const wanted = record.spec.secretRef?.namespace;
  if (wanted && wanted !== own) {
    throw new ConfigurationError(
      `spec.secretRef.namespace: secret ${wanted}/${record.spec.secretRef?.name ?? ''} is not in the DNSRecord's ` +
        `namespace ${JSON.stringify(own)}; a DNSRecord may only use a secret of its own namespace`,
    );
  }
}

/** The DNSRecord as the owner of what it publishes. */
export const dnsRecordRef = Refs.dnsRecord;

export function recordOwner(record: DNSRecord): DNSRecordOwner {
  const { namespace, name, uid } = record.metadata;
  if (!namespace || !name || !uid) throw new ConfigurationError('metadata.namespace, name and uid must be set');
  return { namespace, name, uid };
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
  return comparable(a.zone) === comparable(b.zone) && comparable(a.name) === comparable(b.name) && a.type === b.type;
}

export interface Published {
  /** With trailing dot. */
  readonly zone: string;
  readonly server: string;
  readonly providerStatus: LocalDNSRecordStatus;
}

/** Gardener's split: the actuator does the provider work, the reconciler the bookkeeping. */
export type DNSRecordActuator = Actuator<DNSRecord, Published>;

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

  /** Publishes the record (and removes an RRset it published before under another name or type). */
  async reconcile(ctx: ActuatorContext, record: DNSRecord): Promise<ActuatorOutcome<Published>> {
    try {
      const published = await this.publish(record, ctx);
      const { recordType, name } = record.spec;
      return {
        state: 'Succeeded',
        description: `${recordType} ${name} published at ${published.server}`,
        result: published,
      };
    } catch (e) {
      return failed(e);
    }
  }

  /** Removes the record's RRset; succeeds when it is already gone. */
  async delete(ctx: ActuatorContext, record: DNSRecord): Promise<ActuatorOutcome<Published>> {
    try {
      await this.unpublish(record, ctx);
      return { state: 'Succeeded', description: 'DNS record removed' };
    } catch (e) {
      // The record may still be published: the finalizer stays, the controller retries with backoff.
      return failed(e);
    }
  }

  /** `status.zone` and `status.providerStatus` of a published record. */
  statusFields(_record: DNSRecord, outcome: ActuatorOutcome<Published>): Record<string, unknown> {
    if (outcome.state !== 'Succeeded' || !outcome.result) return {};
    return { zone: outcome.result.zone, providerStatus: outcome.result.providerStatus };
  }

  private async publish(record: DNSRecord, ctx: ActuatorContext): Promise<Published> {
    const owner = recordOwner(record);
    const provider = await this.provider(record, ctx);
    const rrset = desiredRRset(record, provider);
    checkPublishable(record.metadata.namespace ?? '', rrset, provider.zone ?? DEFAULT_ZONE);
    const publisher = this.publisherFor(provider);
    await publishOwned(publisher, rrset, owner, {
      signal: ctx.signal,
      ownerExists: (other) => this.ownerExists(other, ctx),
    });
    // The new RRset first, then the old one goes: the name never resolves to nothing in between.
    const previous = publishedRRset(record);
    if (previous && !sameRRset(previous, rrset)) await this.remove(publisher, previous, owner, ctx);
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

  private async unpublish(record: DNSRecord, ctx: ActuatorContext): Promise<void> {
    try {
      checkSecretNamespace(record);
    } catch (e) {
      // Never published with a secret it may not read: nothing of it can be in DNS, and the finalizer must go.
      ctx.logger?.info({ reason: (e as Error).message }, 'DNSRecord deleted without touching DNS');
      return;
    }
    const owner = recordOwner(record);
    const provider = await this.provider(record, ctx);
    const { zone, name, type } = desiredRRset(record, provider);
    const publisher = this.publisherFor(provider);
    await this.remove(publisher, { zone, name, type }, owner, ctx);
    const previous = publishedRRset(record);
    if (previous && !sameRRset(previous, { zone, name, type })) await this.remove(publisher, previous, owner, ctx);
  }

  /**
   * Whether the DNSRecord an owner record names exists, read from the API server: a cache may not have seen one
   * created a moment ago, whose name would then be taken from it. Unreadable (forbidden) counts as existing.
   */
  private async ownerExists(owner: DNSRecordOwner, ctx: ActuatorContext): Promise<boolean> {
    try {
      const current = await this.client.get<KubernetesObject>(dnsRecordRef, owner.name, owner.namespace, {
        signal: ctx.signal,
      });
      return current?.metadata?.uid === owner.uid;
    } catch (e) {
      if (isForbidden(e)) return true;
      throw e;
    }
  }

  /** Removes an RRset of `owner`'s; another DNSRecord's stays (this one never owned it). */
  private async remove(
    publisher: RRsetPublisher,
    ref: RRsetRef,
    owner: DNSRecordOwner,
    ctx: ActuatorContext,
  ): Promise<void> {
    const { keptFor } = await deleteOwned(publisher, ref, owner, { signal: ctx.signal });
    if (keptFor) ctx.logger?.info({ rrset: `${ref.type} ${ref.name}`, owner: keptFor }, 'RRset of another owner kept');
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
    checkSecretNamespace(record);
    const namespace = record.metadata.namespace;
    let secret: V1Secret | undefined;
    try {
      secret = await this.client.get<V1Secret>(Refs.secret, ref.name, namespace, { signal: ctx.signal });
    } catch (e) {
      // The chart lets the extension read the provider secrets the gardenlet writes, by name, and nothing else.
      if (!isForbidden(e)) throw e;
      throw new ConfigurationError(
        `secret ${namespace ?? ''}/${ref.name} (spec.secretRef) may not be read by the DNS extension: ` +
          `${(e as Error).message}`,
      );
    }
    if (!secret) throw new ConfigurationError(`secret ${namespace ?? ''}/${ref.name} (spec.secretRef) not found`);
    return providerFromSecret(secret);
  }
}

/** A failed publish or removal: its message, its error codes, and the error to retry with. */
function failed(e: unknown): ActuatorError {
  return { state: 'Error', description: e instanceof Error ? e.message : String(e), codes: errorCodes(e), error: e };
}

function withDot(zone: string): string {
  return zone.endsWith('.') ? zone : `${zone}.`;
}
