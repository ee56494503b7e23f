/**
 * RFC 2136 updates against a real BIND9 (Debian's `named`), answered by a real resolver: node:dns (c-ares) and dig.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnershipError } from '../../../src/extensions/dns/errors.js';
import { deleteOwned, publishOwned } from '../../../src/extensions/dns/ownership.js';
import { DNSUpdateClient, DNSUpdateError } from '../../../src/extensions/dns/rfc2136.js';
import { tsigKey } from '../../../src/extensions/dns/tsig.js';
import { answersSOA, startBind9, type Bind9 } from '../../../src/localenv/bind9.js';

const NAME = 'api.shoot.project.external.local.gardener.cloud';

/** A fresh resolver per query: c-ares caches answers per channel, and the records change under it. */
async function aaaa(server: string, name = NAME): Promise<string[] | string> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([server]);
  try {
    return (await resolver.resolve6(name)).sort();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

function dig(bind: Bind9, type: string, name: string): string {
  return execFileSync('dig', ['@::1', '-p', String(bind.port), type, name, '+short', '+time=1', '+tries=1'], {
    encoding: 'utf8',
  }).trim();
}

/** `dig AXFR` of the zone: what a stranger gets when asking for every name in it. */
function axfr(bind: Bind9): string {
  return execFileSync('dig', ['@::1', '-p', String(bind.port), 'AXFR', bind.zone, '+time=2', '+tries=1'], {
    encoding: 'utf8',
  });
}

describe('BIND9', () => {
  let bind: Bind9;
  let client: DNSUpdateClient;
  const key = () => tsigKey(bind.tsigKeyName, bind.tsigAlgorithm, bind.tsigSecret);

  beforeAll(async () => {
    bind = await startBind9();
    client = new DNSUpdateClient({ server: bind.server, tsig: key() });
  });
  afterAll(async () => {
    await bind?.stop();
  });

  it('listens on [::1] only, with the zone and a generated key', async () => {
    expect(bind.server).toBe(`[::1]:${bind.port}`);
    expect(bind.zone).toBe('local.gardener.cloud.');
    expect(bind.tsigKeyName).toBe('gardener-ipv6');
    expect(Buffer.from(bind.tsigSecret, 'base64')).toHaveLength(32);
    const conf = readFileSync(join(bind.dir, 'named.conf'), 'utf8');
    expect(conf).toContain('listen-on { none; };');
    expect(conf).toContain(`listen-on-v6 port ${bind.port} { ::1; };`);
    expect(await answersSOA(bind.server, bind.zone)).toBe(true);
    expect(dig(bind, 'SOA', 'local.gardener.cloud')).toMatch(/^ns\.local\.gardener\.cloud\. /);
  });

  it('publishes an AAAA RRset, replaces it, and deletes it', async () => {
    await client.replaceRRset({ zone: bind.zone, name: NAME, type: 'AAAA', ttl: 120, values: ['2001:DB8::1', '::1'] });
    expect(await aaaa(bind.server)).toEqual(['2001:db8::1', '::1']);
    expect(dig(bind, 'AAAA', NAME).split('\n').sort()).toEqual(['2001:db8::1', '::1']);

    await client.replaceRRset({ zone: bind.zone, name: NAME, type: 'AAAA', ttl: 60, values: ['2001:db8::2'] });
    expect(await aaaa(bind.server)).toEqual(['2001:db8::2']);

    await client.deleteRRset({ zone: bind.zone, name: NAME, type: 'AAAA' });
    expect(await aaaa(bind.server)).toBe('ENOTFOUND'); // NXDOMAIN: nothing is left at the name
    await client.deleteRRset({ zone: bind.zone, name: NAME, type: 'AAAA' }); // already gone: fine
  });

  it('keeps the A and AAAA RRsets of one name apart (dual-stack)', async () => {
    const name = 'api.dual.project.external.local.gardener.cloud';
    await client.replaceRRset({ zone: bind.zone, name, type: 'A', ttl: 60, values: ['127.0.0.1'] });
    await client.replaceRRset({ zone: bind.zone, name, type: 'AAAA', ttl: 60, values: ['::1'] });
    await client.deleteRRset({ zone: bind.zone, name, type: 'AAAA' });
    expect(await aaaa(bind.server, name)).toBe('ENODATA'); // the name exists, with no AAAA
    expect(dig(bind, 'A', name)).toBe('127.0.0.1');
  });

  it('refuses zone transfers, to strangers and to the update key alike', async () => {
    await client.replaceRRset({ zone: bind.zone, name: NAME, type: 'AAAA', ttl: 60, values: ['2001:db8::5'] });
    const stranger = axfr(bind);
    expect(stranger).toContain('; Transfer failed.');
    expect(stranger).not.toContain(NAME);
    const signed = execFileSync(
      'dig',
      ['@::1', '-p', String(bind.port), '-y', `hmac-sha256:${bind.tsigKeyName}:${bind.tsigSecret}`, 'AXFR', bind.zone],
      { encoding: 'utf8' },
    );
    expect(signed).toContain('; Transfer failed.');
    expect(signed).not.toContain(NAME);
    expect(readFileSync(join(bind.dir, 'named.conf'), 'utf8')).toContain('allow-transfer { none; };');
  });

  it('applies an update only when its prerequisites hold (RRset absent, RRset equal to values)', async () => {
    const name = 'pre.shoot.project.external.local.gardener.cloud';
    const txt = { name: `_owner-aaaa.${name}`, type: 'TXT' as const };
    const write = (prerequisite: Parameters<DNSUpdateClient['update']>[0]['prerequisites']) =>
      client.update({
        zone: bind.zone,
        prerequisites: prerequisite ?? [],
        replace: [
          { name, type: 'AAAA', ttl: 60, values: ['2001:db8::a'] },
          { ...txt, ttl: 60, values: ['mine'] },
        ],
      });
    await write([{ kind: 'rrset-absent', ...txt }]);
    expect(dig(bind, 'TXT', txt.name)).toBe('"mine"');
    await expect(write([{ kind: 'rrset-absent', ...txt }])).rejects.toMatchObject({ rcode: 'YXRRSET' });
    await expect(write([{ kind: 'rrset-equals', ...txt, values: ['theirs'] }])).rejects.toMatchObject({
      rcode: 'NXRRSET',
    });
    await write([{ kind: 'rrset-equals', ...txt, values: ['mine'] }]);
    expect(await client.readTXT(txt.name)).toEqual(['mine']);
    expect(await client.readTXT(`nothing.${bind.zone}`)).toEqual([]);
  });

  it('keeps owner records: a second owner can neither overwrite nor delete, the owner removes both', async () => {
    const name = 'api.owned.project.external.local.gardener.cloud';
    const rrset = { zone: bind.zone, name, type: 'AAAA', ttl: 60 } as const;
    const alpha = { namespace: 'shoot--project--owned', name: 'owned-external-v6', uid: 'uid-alpha' };
    const intruder = { namespace: 'shoot--evil--intruder', name: 'intruder', uid: 'uid-intruder' };
    const ownerTXT = `_owner-aaaa.${name}`;

    await publishOwned(client, { ...rrset, values: ['2001:db8::a1'] }, alpha);
    expect(await aaaa(bind.server, name)).toEqual(['2001:db8::a1']);
    expect(dig(bind, 'TXT', ownerTXT)).toBe(
      '"heritage=gardener-ipv6,gardener-ipv6/owner=uid-alpha,' +
        'gardener-ipv6/resource=dnsrecord/shoot--project--owned/owned-external-v6"',
    );

    const refused = await publishOwned(client, { ...rrset, values: ['2001:db8::666'] }, intruder).catch((e) => e);
    expect(refused).toBeInstanceOf(OwnershipError);
    expect((refused as Error).message).toBe(
      `AAAA ${name} is owned by DNSRecord shoot--project--owned/owned-external-v6 (uid uid-alpha) ` +
        `(owner record TXT ${ownerTXT}); a DNSRecord may not overwrite another's records`,
    );
    expect(await deleteOwned(client, rrset, intruder)).toEqual({
      keptFor: 'DNSRecord shoot--project--owned/owned-external-v6 (uid uid-alpha)',
    });
    expect(await aaaa(bind.server, name)).toEqual(['2001:db8::a1']);

    await publishOwned(client, { ...rrset, values: ['2001:db8::a2'] }, alpha); // the owner may change it
    expect(await aaaa(bind.server, name)).toEqual(['2001:db8::a2']);
    expect(await deleteOwned(client, rrset, alpha)).toEqual({});
    expect(await aaaa(bind.server, name)).toBe('ENOTFOUND');
    expect(dig(bind, 'TXT', ownerTXT)).toBe('');
  });

  it('keeps the owner record of a CNAME beside it, and adopts a record published without one', async () => {
    const name = 'www.owned.project.external.local.gardener.cloud';
    const owner = { namespace: 'shoot--project--owned', name: 'www', uid: 'uid-www' };
    await client.replaceRRset({ zone: bind.zone, name, type: 'CNAME', ttl: 60, values: ['old.example.org'] });
    await publishOwned(client, { zone: bind.zone, name, type: 'CNAME', ttl: 60, values: ['lb.example.org'] }, owner);
    expect(dig(bind, 'CNAME', name)).toBe('lb.example.org.');
    expect(dig(bind, 'TXT', `_owner-cname.${name}`)).toContain('gardener-ipv6/owner=uid-www');
  });

  it('keeps the owner record of a wildcard name below it, without breaking the wildcard', async () => {
    const name = '*.ingress.owned.project.external.local.gardener.cloud';
    const owner = { namespace: 'shoot--project--owned', name: 'ingress', uid: 'uid-ingress' };
    const rrset = { zone: bind.zone, name, type: 'AAAA', ttl: 60 } as const;
    await publishOwned(client, { ...rrset, values: ['2001:db8::1e'] }, owner);
    expect(await aaaa(bind.server, 'shop.ingress.owned.project.external.local.gardener.cloud')).toEqual([
      '2001:db8::1e',
    ]);
    expect(await client.readTXT(`_owner-aaaa.${name}`)).toEqual([
      'heritage=gardener-ipv6,gardener-ipv6/owner=uid-ingress,gardener-ipv6/resource=dnsrecord/shoot--project--owned/ingress',
    ]);
    expect(await deleteOwned(client, rrset, owner)).toEqual({});
    expect(await client.readTXT(`_owner-aaaa.${name}`)).toEqual([]);
  });

  it('works over TCP too', async () => {
    const tcp = new DNSUpdateClient({ server: bind.server, tsig: key(), transport: 'tcp' });
    await tcp.replaceRRset({ zone: bind.zone, name: NAME, type: 'AAAA', ttl: 60, values: ['2001:db8::3'] });
    expect(await aaaa(bind.server)).toEqual(['2001:db8::3']);
  });

  it('surfaces BADKEY for an unknown key and BADSIG for a wrong secret', async () => {
    const rrset = { zone: bind.zone, name: NAME, type: 'AAAA', ttl: 60, values: ['2001:db8::dead'] } as const;
    const unknownKey = new DNSUpdateClient({
      server: bind.server,
      tsig: tsigKey('someone-else', 'hmac-sha256', bind.tsigSecret),
    });
    await expect(unknownKey.replaceRRset(rrset)).rejects.toThrow(
      `update of AAAA ${NAME} at ${bind.server} failed: NOTAUTH (TSIG error BADKEY for key "someone-else")`,
    );
    const wrongSecret = new DNSUpdateClient({
      server: bind.server,
      tsig: tsigKey(bind.tsigKeyName, 'hmac-sha256', Buffer.alloc(32, 1).toString('base64')),
    });
    await expect(wrongSecret.replaceRRset(rrset)).rejects.toMatchObject({ reason: 'tsig', tsigError: 'BADSIG' });
    expect(await aaaa(bind.server)).toEqual(['2001:db8::3']);
  });

  it('answers REFUSED without a key and NOTZONE for names outside the zone', async () => {
    await expect(
      new DNSUpdateClient({ server: bind.server }).replaceRRset({
        zone: bind.zone,
        name: NAME,
        type: 'AAAA',
        ttl: 60,
        values: ['::1'],
      }),
    ).rejects.toThrow(`update of AAAA ${NAME} at ${bind.server} failed: REFUSED`);
    await expect(
      client.replaceRRset({ zone: bind.zone, name: 'api.example.com', type: 'AAAA', ttl: 60, values: ['::1'] }),
    ).rejects.toMatchObject({ reason: 'rcode', rcode: 'NOTZONE' });
  });
});

describe('BIND9 stopped and started again', () => {
  it('fails with connection refused while down, works on the same port after a restart', async () => {
    const first = await startBind9();
    const { port, tsigSecret, dir } = first;
    const update = (c: DNSUpdateClient) =>
      c.replaceRRset({ zone: first.zone, name: NAME, type: 'AAAA', ttl: 60, values: ['2001:db8::7'] });
    const client = new DNSUpdateClient({
      server: first.server,
      tsig: tsigKey(first.tsigKeyName, 'hmac-sha256', tsigSecret),
      timeoutMs: 500,
    });
    await update(client);
    await first.stop();
    expect(existsSync(dir)).toBe(false);

    const error = await update(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DNSUpdateError);
    expect(error).toMatchObject({ reason: 'unreachable' });
    expect((error as Error).message).toBe(
      `update of AAAA ${NAME} at [::1]:${port} failed: connection refused by [::1]:${port} (no DNS server there?)`,
    );

    const second = await startBind9({ port, tsigSecret });
    try {
      expect(await aaaa(second.server)).toBe('ENOTFOUND'); // a fresh zone
      await update(client);
      expect(await aaaa(second.server)).toEqual(['2001:db8::7']);
    } finally {
      await second.stop();
    }
  });

  it('refuses a port that is in use (named would share it through SO_REUSEPORT)', async () => {
    const blocker = await startBind9();
    try {
      await expect(startBind9({ port: blocker.port })).rejects.toThrow(
        `cannot start named at [::1]:${blocker.port}: the port is in use`,
      );
    } finally {
      await blocker.stop();
    }
  });

  it("reports named's own words when it cannot start", async () => {
    await expect(startBind9({ tsigSecret: 'not base64!' })).rejects.toThrow(
      /^named exited with code 1 while starting:[\s\S]*base64/,
    );
  });
});
