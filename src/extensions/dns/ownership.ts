/**
 * Owner records, as external-dns's TXT registry keeps them: every RRset the extension publishes has a TXT record
 * beside it that names the DNSRecord it belongs to, and every write checks that record in the same RFC 2136 UPDATE
 * (a prerequisite), so that no DNSRecord can overwrite or delete what another one published, however the two race.
 *
 * The owner record of (name, type) lives at `_owner-<type>.<name>` (e.g. `_owner-aaaa.api.shoot.project.…`): one
 * per record type, because the A and AAAA records of a dual-stack shoot's name are two DNSRecords, and in a label
 * of its own below the name, because a CNAME cannot share its name with a TXT record. DNSRecord names are RFC 1123
 * names, so no DNSRecord can name an owner record (validation, and {@link isOwnerRecordName} in the extension).
 */
import { OwnershipError } from './errors.js';
import { DNSUpdateError, type Prerequisite, type RRset, type RRsetChange, type RRsetRef } from './rfc2136.js';
import { RECORD_TYPE_CODES, type UpdateRecordType } from './rfc2136.js';

export const OWNER_HERITAGE = 'gardener-ipv6';
export const OWNER_LABEL_PREFIX = '_owner-';
/** How often a write is tried again when the owner record changed between our attempts. */
const MAX_ATTEMPTS = 3;

/** The DNSRecord that owns an RRset: its identity, name and UID (a recreated object is another owner). */
export interface DNSRecordOwner {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** `_owner-aaaa.<name>`. */
export function ownerRecordName(name: string, type: UpdateRecordType): string {
  return `${OWNER_LABEL_PREFIX}${type.toLowerCase()}.${name}`;
}

/** True when any label of `name` is an owner record's label: such a name is not for DNSRecords. */
export function isOwnerRecordName(name: string): boolean {
  return name.split('.').some((label) => label.toLowerCase().startsWith(OWNER_LABEL_PREFIX));
}

/**
 * The owner record's text, in external-dns's format:
 * `heritage=gardener-ipv6,gardener-ipv6/owner=<uid>,gardener-ipv6/resource=dnsrecord/<namespace>/<name>`.
 */
export function ownerText(owner: DNSRecordOwner): string {
  return (
    `heritage=${OWNER_HERITAGE},${OWNER_HERITAGE}/owner=${owner.uid},` +
    `${OWNER_HERITAGE}/resource=dnsrecord/${owner.namespace}/${owner.name}`
  );
}

/** The owner in an owner record's text; undefined when the text is not one of ours. */
export function parseOwnerText(text: string): DNSRecordOwner | undefined {
  const fields = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  if (fields.get('heritage') !== OWNER_HERITAGE) return undefined;
  const uid = fields.get(`${OWNER_HERITAGE}/owner`);
  const resource = /^dnsrecord\/([^/]+)\/([^/]+)$/.exec(fields.get(`${OWNER_HERITAGE}/resource`) ?? '');
  if (!uid || !resource) return undefined;
  return { namespace: resource[1] ?? '', name: resource[2] ?? '', uid };
}

/** `DNSRecord ns/name (uid …)`, or the raw text of a TXT record that is not ours. */
export function describeOwner(texts: readonly string[]): string {
  const owner = texts.length === 1 ? parseOwnerText(texts[0] ?? '') : undefined;
  if (owner) return `DNSRecord ${owner.namespace}/${owner.name} (uid ${owner.uid})`;
  return `an unknown owner (TXT ${texts.map((t) => JSON.stringify(t)).join(' ')})`;
}

/** What the ownership rules need from a DNS server: atomic updates with prerequisites, and a TXT read. */
export interface OwnedZoneWriter {
  update(change: RRsetChange, opts?: { signal?: AbortSignal }): Promise<void>;
  readTXT(name: string, opts?: { signal?: AbortSignal }): Promise<string[]>;
}

interface Options {
  readonly signal?: AbortSignal;
  /**
   * Whether the DNSRecord an owner record names still exists (the same namespace, name and UID). A name whose owner
   * is gone is adopted: its DNSRecord was deleted while no extension removed its records. It must ask the API
   * server, not a cache that may not have seen a new object yet. @default every owner exists (nothing is adopted)
   */
  readonly ownerExists?: (owner: DNSRecordOwner) => Promise<boolean>;
}

/**
 * Publishes `rrset` with its owner record in one UPDATE, when the name and type are `owner`'s: already (the usual
 * case), free (a new name, or one published before owner records existed: adopted), held by an earlier object
 * of the same namespace and name (names are unique, so that object is gone), or by a DNSRecord that no longer
 * exists (`ownerExists`). Throws {@link OwnershipError} naming the owner otherwise, with nothing changed.
 */
export async function publishOwned(
  writer: OwnedZoneWriter,
  rrset: RRset,
  owner: DNSRecordOwner,
  opts: Options = {},
): Promise<void> {
  const ownerName = ownerRecordName(rrset.name, rrset.type);
  const ownerRRset = { name: ownerName, type: 'TXT' as const, ttl: rrset.ttl, values: [ownerText(owner)] };
  const outcome = await withOwnership(
    writer,
    rrset,
    owner,
    opts,
    (prerequisite) =>
      writer.update({ zone: rrset.zone, prerequisites: [prerequisite], replace: [rrset, ownerRRset] }, opts),
    () => otherNamespaceAtName(writer, rrset, owner, opts),
  );
  if (outcome.owner) {
    throw new OwnershipError(
      `${rrset.type} ${displayName(rrset.name)} is owned by ${outcome.owner} (owner record TXT ` +
        `${displayName(ownerName)}); a DNSRecord may not overwrite another's records`,
      outcome.owner,
    );
  }
  if (outcome.sibling) {
    const { type, owner: other } = outcome.sibling;
    throw new OwnershipError(
      `${displayName(rrset.name)} belongs to another namespace: its ${type} records are owned by ${other} (owner ` +
        `record TXT ${displayName(ownerRecordName(rrset.name, type))}); a DNSRecord may not add records to it`,
      other,
    );
  }
}

/**
 * The owner of another record type at the name when it is a DNSRecord of another namespace (or not ours at all):
 * a name is one shoot's, so another shoot may not add, say, an A record beside its AAAA record. Read before
 * claiming a free (name, type) only; unlike the owner record of the type itself, this is not part of the UPDATE's
 * prerequisites (they cannot say "absent or of this namespace"), so two namespaces claiming different types of one
 * new name at the same moment could both succeed. The records of an owner that is gone are removed (with their
 * owner record, under the prerequisite that it is still that owner's): they would resolve the name to an address
 * that is no longer the shoot's.
 */
async function otherNamespaceAtName(
  writer: OwnedZoneWriter,
  ref: RRsetRef,
  owner: DNSRecordOwner,
  opts: Options,
): Promise<{ readonly type: UpdateRecordType; readonly owner: string } | undefined> {
  for (const type of Object.keys(RECORD_TYPE_CODES) as UpdateRecordType[]) {
    if (type === ref.type) continue;
    const ownerName = ownerRecordName(ref.name, type);
    const texts = await writer.readTXT(ownerName, opts);
    if (texts.length === 0) continue;
    const other = texts.length === 1 ? parseOwnerText(texts[0] ?? '') : undefined;
    if (other?.namespace === owner.namespace) continue;
    if (other && !(await exists(other, opts))) {
      const gone = await succeeds(() =>
        writer.update(
          {
            zone: ref.zone,
            prerequisites: [{ kind: 'rrset-equals', name: ownerName, type: 'TXT', values: texts }],
            delete: [
              { name: ref.name, type },
              { name: ownerName, type: 'TXT' },
            ],
          },
          opts,
        ),
      );
      if (gone) continue;
    }
    return { type, owner: describeOwner(texts) };
  }
  return undefined;
}

function exists(owner: DNSRecordOwner, opts: Options): Promise<boolean> {
  return opts.ownerExists ? opts.ownerExists(owner) : Promise.resolve(true);
}

/**
 * Removes the RRset and its owner record in one UPDATE when they are `owner`'s or nobody's. Leaves another
 * DNSRecord's RRset alone and returns its owner's description: deleting a DNSRecord that never owned its name
 * succeeds without touching DNS.
 */
export async function deleteOwned(
  writer: OwnedZoneWriter,
  ref: RRsetRef,
  owner: DNSRecordOwner,
  opts: Options = {},
): Promise<{ readonly keptFor?: string }> {
  const ownerRef = { name: ownerRecordName(ref.name, ref.type), type: 'TXT' as const };
  const outcome = await withOwnership(writer, ref, owner, opts, (prerequisite) =>
    writer.update({ zone: ref.zone, prerequisites: [prerequisite], delete: [ref, ownerRef] }, opts),
  );
  return outcome.owner ? { keptFor: outcome.owner } : {};
}

/**
 * Runs `write` under the prerequisite that the owner record is ours, absent, or stale; else returns the owner.
 * `mayClaim` is asked before claiming a (name, type) whose owner record is not ours; what it returns stops it.
 */
async function withOwnership<T>(
  writer: OwnedZoneWriter,
  ref: RRsetRef,
  owner: DNSRecordOwner,
  opts: Options,
  write: (prerequisite: Prerequisite) => Promise<void>,
  mayClaim: () => Promise<T | undefined> = async () => undefined,
): Promise<{ readonly owner?: string; readonly sibling?: T }> {
  const ownerName = ownerRecordName(ref.name, ref.type);
  const ownedBy = (values: readonly string[]): Prerequisite => ({
    kind: 'rrset-equals',
    name: ownerName,
    type: 'TXT',
    values,
  });
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (await succeeds(() => write(ownedBy([ownerText(owner)])))) return {};
    const refusal = await mayClaim();
    if (refusal !== undefined) return { sibling: refusal };
    if (await succeeds(() => write({ kind: 'rrset-absent', name: ownerName, type: 'TXT' }))) return {};
    const current = await writer.readTXT(ownerName, opts);
    if (current.length === 0) continue; // removed since: try again
    const previous = current.length === 1 ? parseOwnerText(current[0] ?? '') : undefined;
    const sameObject = previous?.namespace === owner.namespace && previous.name === owner.name;
    // Taken over only under the prerequisite that the owner record is still the gone owner's.
    const adoptable = sameObject || (previous !== undefined && !(await exists(previous, opts)));
    if (!adoptable) return { owner: describeOwner(current) };
    if (await succeeds(() => write(ownedBy(current)))) return {};
  }
  throw new Error(
    `the owner record TXT ${displayName(ownerName)} changed during ${MAX_ATTEMPTS} attempts to write ` +
      `${ref.type} ${displayName(ref.name)}; trying again later`,
  );
}

/** False when the UPDATE was refused for a prerequisite (NXRRSET, YXRRSET); other errors are thrown. */
async function succeeds(write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (e) {
    if (e instanceof DNSUpdateError && e.reason === 'rcode' && (e.rcode === 'NXRRSET' || e.rcode === 'YXRRSET')) {
      return false;
    }
    throw e;
  }
}

function displayName(name: string): string {
  return name.replace(/\.$/, '');
}
