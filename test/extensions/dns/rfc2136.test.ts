import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import {
  canonicalValue,
  DNSUpdateClient,
  DNSUpdateError,
  encodeDeleteRRset,
  encodeReplaceRRset,
  encodeUpdate,
  OPCODE_UPDATE,
} from '../../../src/extensions/dns/rfc2136.js';
import { DEFAULT_DNS_TIMEOUT_MS, parseServer } from '../../../src/extensions/dns/transport.js';
import { signMessage, splitTSIG, tsigKey } from '../../../src/extensions/dns/tsig.js';
import { answerTo, startFakeDNSServer, type FakeDNSServer, type Handler } from './fake-dns-server.js';
import { parseMessage } from './wire.js';

const ZONE = 'local.gardener.cloud.';
const NAME = 'api.s.p.external.local.gardener.cloud';
const CLASS_IN = 1;
const CLASS_ANY = 255;
const TYPE_AAAA = 28;

/** `nsupdate`'s message for delete + add of the same RRset (see tsig.test.ts), without its TSIG. */
const NSUPDATE_UNSIGNED = Buffer.from(
  '114e28000001000000020000056c6f63616c0867617264656e657205636c6f7564000006000103617069017301700865787465726e616c05' +
    '6c6f63616c0867617264656e657205636c6f756400001c00ff000000000000c026001c000100000078001020010db8000000000000000000' +
    '000001',
  'hex',
);

describe('UPDATE messages', () => {
  it('replace = delete the RRset, then add one RR per value, in the layout nsupdate uses', () => {
    const ours = parseMessage(
      encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'AAAA', ttl: 120, values: ['2001:db8::1'] }, 0x114e),
    );
    const theirs = parseMessage(NSUPDATE_UNSIGNED);
    expect(ours).toEqual(theirs);
    expect(ours).toEqual({
      id: 0x114e,
      flags: OPCODE_UPDATE << 11,
      opcode: OPCODE_UPDATE,
      rcode: 0,
      zone: [{ name: 'local.gardener.cloud', type: 6, class: CLASS_IN }],
      prerequisites: [],
      updates: [
        { name: NAME, type: TYPE_AAAA, class: CLASS_ANY, ttl: 0, rdata: '' },
        { name: NAME, type: TYPE_AAAA, class: CLASS_IN, ttl: 120, rdata: '20010db8000000000000000000000001' },
      ],
      additionals: [],
    });
  });

  it('writes prerequisites as RFC 2136 §2.4 says: "RRset absent" class NONE, "RRset equals" class IN with TTL 0', () => {
    const owner = `_owner-aaaa.${NAME}`;
    const msg = parseMessage(
      encodeUpdate(
        {
          zone: ZONE,
          prerequisites: [
            { kind: 'rrset-absent', name: owner, type: 'TXT' },
            { kind: 'rrset-equals', name: owner, type: 'TXT', values: ['me', 'me'] },
          ],
          delete: [{ name: NAME, type: 'AAAA' }],
          replace: [{ name: owner, type: 'TXT', ttl: 60, values: ['me'] }],
        },
        7,
      ),
    );
    expect(msg.prerequisites).toEqual([
      { name: owner, type: 16, class: 254, ttl: 0, rdata: '' },
      { name: owner, type: 16, class: CLASS_IN, ttl: 0, rdata: '026d65' },
    ]);
    expect(msg.updates).toEqual([
      { name: NAME, type: TYPE_AAAA, class: CLASS_ANY, ttl: 0, rdata: '' },
      { name: owner, type: 16, class: CLASS_ANY, ttl: 0, rdata: '' },
      { name: owner, type: 16, class: CLASS_IN, ttl: 60, rdata: '026d65' },
    ]);
  });

  it('writes AAAA values canonically and once', () => {
    const msg = parseMessage(
      encodeReplaceRRset(
        {
          zone: ZONE,
          name: NAME,
          type: 'AAAA',
          ttl: 60,
          values: ['2001:DB8:0:0:0:0:0:2', '2001:db8::2', '::ffff:192.0.2.1'],
        },
        1,
      ),
    );
    expect(msg.updates.map((u) => u.rdata)).toEqual([
      '',
      '20010db8000000000000000000000002',
      '00000000000000000000ffffc0000201',
    ]);
    expect(canonicalValue('AAAA', '2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(canonicalValue('AAAA', '::FFFF:192.0.2.1')).toBe('::ffff:192.0.2.1');
  });

  it('writes A, CNAME and TXT records', () => {
    const a = parseMessage(encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'A', ttl: 5, values: ['192.0.2.7'] }, 1));
    expect(a.updates).toEqual([
      { name: NAME, type: 1, class: CLASS_ANY, ttl: 0, rdata: '' },
      { name: NAME, type: 1, class: CLASS_IN, ttl: 5, rdata: 'c0000207' },
    ]);
    const cname = parseMessage(
      encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'CNAME', ttl: 5, values: ['x.example'] }, 1),
    );
    expect(cname.updates[1]?.rdata).toBe('0178076578616d706c6500');
    const txt = parseMessage(
      encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'TXT', ttl: 5, values: ['a'.repeat(300)] }, 1),
    );
    const rdata = Buffer.from(txt.updates[1]?.rdata ?? '', 'hex');
    expect([rdata[0], rdata[256], rdata.length]).toEqual([255, 45, 302]);
  });

  it('refuses values that do not fit the type', () => {
    expect(() => canonicalValue('AAAA', '192.0.2.1')).toThrow('"192.0.2.1" is not an IPv6 address');
    expect(() => canonicalValue('AAAA', 'fe80::1%eth0')).toThrow('is not an IPv6 address');
    expect(() => canonicalValue('A', '::1')).toThrow('"::1" is not an IPv4 address');
    expect(() => canonicalValue('A', '::ffff:192.0.2.1')).toThrow('is not an IPv4 address');
    expect(() =>
      encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'CNAME', ttl: 5, values: ['a.example', 'b.example'] }, 1),
    ).toThrow('a CNAME RRset has a single value');
    expect(() => encodeReplaceRRset({ zone: ZONE, name: NAME, type: 'A', ttl: -1, values: [] }, 1)).toThrow(
      'invalid TTL -1',
    );
  });

  it('delete is the RRset delete alone', () => {
    const msg = parseMessage(encodeDeleteRRset({ zone: ZONE, name: NAME, type: 'AAAA' }, 7));
    expect(msg.updates).toEqual([{ name: NAME, type: TYPE_AAAA, class: CLASS_ANY, ttl: 0, rdata: '' }]);
    expect(msg.zone).toEqual([{ name: 'local.gardener.cloud', type: 6, class: CLASS_IN }]);
  });
});

describe('server addresses', () => {
  it('parses bracketed IPv6, bare IPv6, IPv4 and names; port 53 by default', () => {
    expect(parseServer('[::1]:5353')).toEqual({ host: '::1', port: 5353, display: '[::1]:5353' });
    expect(parseServer('[2001:db8::53]')).toEqual({ host: '2001:db8::53', port: 53, display: '[2001:db8::53]:53' });
    expect(parseServer('fd00::53')).toEqual({ host: 'fd00::53', port: 53, display: '[fd00::53]:53' });
    expect(parseServer('192.0.2.53:8053')).toEqual({ host: '192.0.2.53', port: 8053, display: '192.0.2.53:8053' });
    expect(parseServer('ns.example')).toEqual({ host: 'ns.example', port: 53, display: 'ns.example:53' });
  });

  it('refuses what it cannot use', () => {
    expect(() => parseServer('[::1]:0')).toThrow('bad port');
    expect(() => parseServer('[::1]:65536')).toThrow('bad port');
    expect(() => parseServer('[ns.example]:53')).toThrow('is not an IPv6 address');
    expect(() => parseServer('::1:53:x')).toThrow('invalid DNS server');
  });
});

describe('DNSUpdateClient against a scripted server', () => {
  let fake: FakeDNSServer | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });
  const start = async (handler: Handler) => (fake = await startFakeDNSServer(handler));
  const rrset = { zone: ZONE, name: NAME, type: 'AAAA', ttl: 120, values: ['2001:db8::1'] } as const;

  it('succeeds on NOERROR and sends one UPDATE over UDP', async () => {
    const server = await start((req) => answerTo(req, 0));
    await new DNSUpdateClient({ server: server.server }).replaceRRset(rrset);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.transport).toBe('udp');
    expect(parseMessage(server.requests[0]!.message).opcode).toBe(OPCODE_UPDATE);
  });

  it.each([
    [5, 'REFUSED'],
    [9, 'NOTAUTH'],
    [10, 'NOTZONE'],
    [2, 'SERVFAIL'],
  ])('maps RCODE %i to %s with what, where and the answer', async (rcode, name) => {
    const server = await start((req) => answerTo(req, rcode));
    const error = await new DNSUpdateClient({ server: server.server }).replaceRRset(rrset).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DNSUpdateError);
    expect(error).toMatchObject({ reason: 'rcode', rcode: name, detail: name });
    expect((error as Error).message).toBe(`update of AAAA ${NAME} at ${server.server} failed: ${name}`);
  });

  it('says which operation failed on delete', async () => {
    const server = await start((req) => answerTo(req, 5));
    await expect(
      new DNSUpdateClient({ server: server.server }).deleteRRset({ zone: ZONE, name: NAME, type: 'AAAA' }),
    ).rejects.toThrow(`delete of AAAA ${NAME} at ${server.server} failed: REFUSED`);
  });

  it('times out with a clear message when nobody answers', async () => {
    const server = await start(() => undefined);
    const error = await new DNSUpdateClient({ server: server.server, timeoutMs: 200 })
      .replaceRRset(rrset)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'timeout', detail: `no answer from ${server.server} within 0.2s` });
    expect(DEFAULT_DNS_TIMEOUT_MS).toBe(2000);
  });

  it('ignores answers with another ID, and non-answers', async () => {
    const server = await start((req) => {
      const wrong = answerTo(req, 0);
      wrong.writeUInt16BE((wrong.readUInt16BE(0) + 1) & 0xffff, 0);
      return wrong;
    });
    await expect(
      new DNSUpdateClient({ server: server.server, timeoutMs: 200 }).replaceRRset(rrset),
    ).rejects.toMatchObject({ reason: 'timeout' });
  });

  it('reports a refused connection (nothing listens on the port)', async () => {
    const socket = dgram.createSocket('udp6');
    await new Promise<void>((resolve) => socket.bind(0, '::1', resolve));
    const port = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    for (const transport of ['udp', 'tcp'] as const) {
      const error = await new DNSUpdateClient({ server: `[::1]:${port}`, transport, timeoutMs: 1000 })
        .replaceRRset(rrset)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        reason: 'unreachable',
        message: `update of AAAA ${NAME} at [::1]:${port} failed: connection refused by [::1]:${port} (no DNS server there?)`,
      });
    }
  });

  it('repeats a truncated UDP answer over TCP', async () => {
    const server = await start((req, transport) => answerTo(req, 0, transport === 'udp' ? 0x0200 : 0));
    await new DNSUpdateClient({ server: server.server }).replaceRRset(rrset);
    expect(server.requests.map((r) => r.transport)).toEqual(['udp', 'tcp']);
    expect(server.requests[0]?.message).toEqual(server.requests[1]?.message);
  });

  it('uses TCP only when told to', async () => {
    const server = await start((req) => answerTo(req, 0));
    await new DNSUpdateClient({ server: server.server, transport: 'tcp' }).replaceRRset(rrset);
    expect(server.requests.map((r) => r.transport)).toEqual(['tcp']);
  });

  it('stops waiting when the signal aborts', async () => {
    const server = await start(() => undefined);
    const abort = new AbortController();
    const pending = new DNSUpdateClient({ server: server.server, timeoutMs: 10_000 }).replaceRRset(rrset, {
      signal: abort.signal,
    });
    abort.abort(new Error('reconcile timed out'));
    await expect(pending).rejects.toThrow('reconcile timed out');
  });

  describe('with TSIG', () => {
    const key = tsigKey('gardener-ipv6', 'hmac-sha256', Buffer.alloc(32, 7).toString('base64'));
    const now = () => 1_800_000_000;
    /** Answers like BIND: signed over the request MAC with the same key, or a TSIG error. */
    const signedAnswer =
      (rcode: number, opts: { tsigError?: number; signWith?: typeof key } = {}): Handler =>
      (req) => {
        const request = splitTSIG(req);
        if (!request) return answerTo(req, 5);
        return signMessage(answerTo(request.unsigned, rcode), opts.signWith ?? key, now(), {
          requestMac: opts.tsigError ? Buffer.alloc(0) : request.tsig.mac,
          ...(opts.tsigError ? { error: opts.tsigError } : {}),
        }).message;
      };

    it('signs the request and checks the signed answer', async () => {
      const server = await start(signedAnswer(0));
      await new DNSUpdateClient({ server: server.server, tsig: key, now }).replaceRRset(rrset);
      const { tsig } = splitTSIG(server.requests[0]!.message)!;
      expect(tsig).toMatchObject({ keyName: 'gardener-ipv6', algorithm: 'hmac-sha256', timeSigned: now(), fudge: 300 });
    });

    it("surfaces the server's BADKEY and BADSIG", async () => {
      for (const [code, name] of [
        [17, 'BADKEY'],
        [16, 'BADSIG'],
      ] as const) {
        const server = await start(signedAnswer(9, { tsigError: code }));
        const error = await new DNSUpdateClient({ server: server.server, tsig: key, now })
          .replaceRRset(rrset)
          .catch((e: unknown) => e);
        expect(error).toMatchObject({ reason: 'tsig', rcode: 'NOTAUTH', tsigError: name });
        expect((error as Error).message).toBe(
          `update of AAAA ${NAME} at ${server.server} failed: NOTAUTH (TSIG error ${name} for key "gardener-ipv6")`,
        );
        await server.close();
        fake = undefined;
      }
    });

    it('rejects an answer whose MAC does not verify', async () => {
      const other = tsigKey('gardener-ipv6', 'hmac-sha256', Buffer.alloc(32, 8).toString('base64'));
      const server = await start(signedAnswer(0, { signWith: other }));
      await expect(
        new DNSUpdateClient({ server: server.server, tsig: key, now }).replaceRRset(rrset),
      ).rejects.toMatchObject({ reason: 'tsig', detail: "the answer's TSIG MAC does not verify" });
    });

    it('rejects an unsigned NOERROR, and reports the RCODE of an unsigned error answer', async () => {
      let rcode = 0;
      const server = await start((req) => answerTo(splitTSIG(req)!.unsigned, rcode));
      const client = new DNSUpdateClient({ server: server.server, tsig: key, now });
      await expect(client.replaceRRset(rrset)).rejects.toMatchObject({
        reason: 'tsig',
        detail: 'the answer is not signed',
      });
      rcode = 1;
      await expect(client.replaceRRset(rrset)).rejects.toMatchObject({ reason: 'rcode', rcode: 'FORMERR' });
    });
  });
});
