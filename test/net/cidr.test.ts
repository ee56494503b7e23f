import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  firstServiceIP,
  addressCount,
  canonicalIP,
  contains,
  containsCIDR,
  formatCIDR,
  formatIP,
  isCanonical,
  mustParseCIDR,
  overlaps,
  parseCIDR,
  parseIP,
  type CIDR,
  type IP,
  type IPFamily,
} from '../../src/net/cidr.js';

const BITS = { IPv4: 32, IPv6: 128 } as const;
const MAPPED_PREFIX = 0xffffn << 32n;

describe('parseIP', () => {
  it.each([
    ['10.0.0.1', 'IPv4', '10.0.0.1'],
    ['0.0.0.0', 'IPv4', '0.0.0.0'],
    ['255.255.255.255', 'IPv4', '255.255.255.255'],
    ['2001:0DB8:0:0:0:0:0:1', 'IPv6', '2001:db8::1'],
    ['2001:DB8:0:0::1', 'IPv6', '2001:db8::1'],
    ['2001:db8:0:1:0:0:0:1', 'IPv6', '2001:db8:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', 'IPv6', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:0:1:0:1', 'IPv6', '2001:db8:0:1:0:1:0:1'],
    ['0:0:0:0:0:0:0:0', 'IPv6', '::'],
    ['::1', 'IPv6', '::1'],
    ['fe80::', 'IPv6', 'fe80::'],
    ['0001:0002::', 'IPv6', '1:2::'],
    ['::ffff:192.0.2.1', 'IPv4', '192.0.2.1'],
    ['::FFFF:c000:201', 'IPv4', '192.0.2.1'],
    ['64:ff9b::192.0.2.1', 'IPv6', '64:ff9b::c000:201'],
    ['::192.0.2.1', 'IPv6', '::c000:201'],
  ] as const)('%s is %s %s', (text, family, formatted) => {
    const ip = parseIP(text);
    expect(ip?.family).toBe(family);
    expect(formatIP(ip!)).toBe(formatted);
    expect(canonicalIP(text)).toBe(formatted);
  });

  it.each([
    '',
    '010.0.0.1',
    '10.00.0.1',
    '10.0.0.01',
    '256.0.0.1',
    '10.0.0',
    '10.0.0.1.2',
    '10.0.0.1 ',
    ' 10.0.0.1',
    '0x0a.0.0.1',
    '1e1.0.0.1',
    'fe80::1%eth0',
    'fe80::1%1',
    '2001:db8::g',
    '2001:db8:::1',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '1:2:3:4:5:6:7::8',
    '00001::',
    ':1::',
    '::ffff:010.0.0.1',
    '::ffff:1.2.3',
    '1.2.3.4::',
    '[::1]',
    '10.0.0.0/8',
  ])('rejects %j', (text) => {
    expect(parseIP(text)).toBeUndefined();
  });

  it.each([undefined, null, 42, {}, ['10.0.0.1']])('rejects the non-string %j', (value) => {
    expect(parseIP(value)).toBeUndefined();
  });
});

describe('parseCIDR', () => {
  it.each([
    // host bits may be set: the network is what counts
    ['10.20.30.40/26', 'IPv4', '10.20.30.0/26', false],
    ['10.0.0.0/8', 'IPv4', '10.0.0.0/8', true],
    ['0.0.0.0/0', 'IPv4', '0.0.0.0/0', true],
    ['10.0.0.1/32', 'IPv4', '10.0.0.1/32', true],
    ['10.0.0.1/016', 'IPv4', '10.0.0.0/16', false],
    ['2001:0DB8:0:0:0:0:0:1/128', 'IPv6', '2001:db8::1/128', true],
    ['2001:DB8::1/64', 'IPv6', '2001:db8::/64', false],
    ['2001:db8:1::/48', 'IPv6', '2001:db8:1::/48', true],
    ['fd00:10:1::/56', 'IPv6', 'fd00:10:1::/56', true],
    ['::/0', 'IPv6', '::/0', true],
    // an IPv4-mapped IPv6 address is IPv4, its mask the low 32 bits of the IPv6 mask
    ['::ffff:10.0.0.0/104', 'IPv4', '10.0.0.0/8', true],
    ['::ffff:10.1.2.3/120', 'IPv4', '10.1.2.0/24', false],
    ['::ffff:10.0.0.0/96', 'IPv4', '0.0.0.0/0', false],
    // ... unless the mask cuts into the ::ffff: prefix: then the network is an IPv6 one, as in Go
    ['::ffff:10.0.0.0/64', 'IPv6', '::/64', false],
    ['::ffff:10.0.0.0/95', 'IPv6', '::fffe:0:0/95', false],
    // IPv4-compatible (::a.b.c.d) is plain IPv6
    ['::10.0.0.0/104', 'IPv6', '::a00:0/104', true],
  ] as const)('%s is %s %s (canonical: %s)', (text, family, formatted, canonical) => {
    const cidr = parseCIDR(text);
    expect(cidr).toBeDefined();
    expect(cidr!.input).toBe(text);
    expect(cidr!.family).toBe(family);
    expect(formatCIDR(cidr!)).toBe(formatted);
    expect(isCanonical(cidr!)).toBe(canonical);
  });

  it.each([
    '',
    '10.0.0.0',
    '10.0.0.0/',
    '10.0.0.0/33',
    '10.0.0.0/-1',
    '10.0.0.0/+8',
    '10.0.0.0/8 ',
    ' 10.0.0.0/8',
    '10.0.0.0/8/8',
    '10.0.0.0/0x8',
    '010.0.0.0/8',
    '10.0.0.00/8',
    '2001:db8::/129',
    '2001:db8::%eth0/64',
    'fe80::1%eth0/64',
    '2001:db8:::/64',
    '/8',
    'garbage',
  ])('rejects %j', (text) => {
    expect(parseCIDR(text)).toBeUndefined();
  });

  it.each([undefined, null, 8, { cidr: '10.0.0.0/8' }])('rejects the non-string %j', (value) => {
    expect(parseCIDR(value)).toBeUndefined();
  });

  it('hands out one frozen CIDR per text (admission parses the same ones for every review)', () => {
    const first = parseCIDR('fd00:10:1::/56');
    expect(parseCIDR('fd00:10:1::/56')).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first?.ip) && Object.isFrozen(first?.network)).toBe(true);
    expect(() => ((first as { prefix: number }).prefix = 64)).toThrow(TypeError);
    expect(parseCIDR('fd00:10:1::/129')).toBeUndefined();
    expect(parseCIDR('fd00:10:1::/129')).toBeUndefined();
  });

  it('counts addresses', () => {
    expect(addressCount(mustParseCIDR('10.0.0.0/24'))).toBe(256n);
    expect(addressCount(mustParseCIDR('2001:db8::/64'))).toBe(1n << 64n);
    expect(() => mustParseCIDR('bogus')).toThrow();
  });
});

describe('overlaps, contains, containsCIDR', () => {
  const c = mustParseCIDR;
  it.each([
    ['10.0.0.0/8', '10.1.0.0/16', true],
    ['10.1.0.0/16', '10.0.0.0/8', true],
    ['10.0.0.0/16', '10.1.0.0/16', false],
    ['10.0.0.0/15', '10.1.0.0/16', true],
    ['10.20.30.40/26', '10.20.30.0/26', true],
    ['192.168.123.0/24', '192.168.0.0/16', true],
    ['2001:db8::/32', '2001:db8:1::/48', true],
    ['2001:db8::/48', '2001:db8:1::/48', false],
    ['0.0.0.0/0', '::/0', false],
    ['::ffff:10.0.0.0/104', '10.1.0.0/16', true],
    ['::ffff:10.0.0.0/104', '::a00:0/104', false],
  ] as const)('%s and %s overlap: %s', (a, b, expected) => {
    expect(overlaps(c(a), c(b))).toBe(expected);
    expect(overlaps(c(b), c(a))).toBe(expected);
  });

  it('contains addresses of its own family only', () => {
    expect(contains(c('10.0.0.0/8'), parseIP('10.255.255.255')!)).toBe(true);
    expect(contains(c('10.0.0.0/8'), parseIP('11.0.0.0')!)).toBe(false);
    expect(contains(c('::/0'), parseIP('10.0.0.1')!)).toBe(false);
    expect(contains(c('0.0.0.0/0'), parseIP('::1')!)).toBe(false);
  });

  it('containsCIDR needs the inner range to be inside', () => {
    expect(containsCIDR(c('10.0.0.0/8'), c('10.1.0.0/16'))).toBe(true);
    expect(containsCIDR(c('10.1.0.0/16'), c('10.0.0.0/8'))).toBe(false);
    expect(containsCIDR(c('10.0.0.0/8'), c('10.0.0.0/8'))).toBe(true);
    expect(containsCIDR(c('0.0.0.0/0'), c('::/0'))).toBe(false);
  });
});

// ---- properties ------------------------------------------------------------------------------------------------

const family = fc.constantFrom<IPFamily>('IPv4', 'IPv6');
const ipOf = (f: IPFamily) =>
  fc.bigInt({ min: 0n, max: (1n << BigInt(BITS[f])) - 1n }).map((value): IP => ({ family: f, value }));
/** An address of the family that parseIP can produce (an IPv6 value in ::ffff:0:0/96 is an IPv4 address). */
const addressOf = (f: IPFamily) => ipOf(f).filter((ip) => ip.family === 'IPv4' || ip.value >> 32n !== 0xffffn);
const ipArb = family.chain(addressOf);
/** CIDR text written with an arbitrary address (host bits set or not) and prefix. */
const cidrTextOf = (f: IPFamily) =>
  fc.tuple(addressOf(f), fc.integer({ min: 0, max: BITS[f] })).map(([ip, prefix]) => `${formatIP(ip)}/${prefix}`);
const cidrArb = family.chain((f) => cidrTextOf(f).map(mustParseCIDR));
const cidrPairOfOneFamily = family.chain((f) =>
  fc.tuple(cidrTextOf(f), cidrTextOf(f)).map(([a, b]) => [mustParseCIDR(a), mustParseCIDR(b)] as const),
);

/** An address inside the CIDR: its network address with random host bits. */
const addressIn = (cidr: CIDR) =>
  fc
    .bigInt({ min: 0n, max: (1n << BigInt(BITS[cidr.family] - cidr.prefix)) - 1n })
    .map((host): IP => ({ family: cidr.family, value: cidr.network.value | host }));

describe('properties', () => {
  it('formatIP output parses back to the same address (32- and 128-bit values)', () => {
    fc.assert(
      fc.property(ipArb, (ip) => {
        expect(parseIP(formatIP(ip))).toEqual(ip);
      }),
      { numRuns: 500 },
    );
  });

  it('an IPv4-mapped IPv6 value prints as text that parses to the IPv4 address', () => {
    fc.assert(
      fc.property(ipOf('IPv4'), (v4) => {
        expect(parseIP(formatIP({ family: 'IPv6', value: MAPPED_PREFIX | v4.value }))).toEqual(v4);
      }),
      { numRuns: 100 },
    );
  });

  it('formatCIDR is a fixed point: formatCIDR(parseCIDR(formatCIDR(x))) === formatCIDR(x)', () => {
    fc.assert(
      fc.property(cidrArb, (cidr) => {
        const text = formatCIDR(cidr);
        const reparsed = parseCIDR(text);
        expect(reparsed).toBeDefined();
        expect(formatCIDR(reparsed!)).toBe(text);
        expect(isCanonical(reparsed!)).toBe(true);
        expect(reparsed!.family).toBe(cidr.family);
        expect(reparsed!.prefix).toBe(cidr.prefix);
      }),
      { numRuns: 500 },
    );
  });

  it('overlap is symmetric and reflexive', () => {
    fc.assert(
      fc.property(cidrArb, cidrArb, (a, b) => {
        expect(overlaps(a, b)).toBe(overlaps(b, a));
        expect(overlaps(a, a)).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(cidrPairOfOneFamily, ([a, b]) => {
        expect(overlaps(a, b)).toBe(overlaps(b, a));
        // within a family, two CIDRs overlap exactly when one contains the other
        expect(overlaps(a, b)).toBe(containsCIDR(a, b) || containsCIDR(b, a));
      }),
      { numRuns: 500 },
    );
  });

  it('a CIDR contains every address within it, and no address just outside it', () => {
    fc.assert(
      fc.property(
        cidrArb.chain((cidr) => fc.tuple(fc.constant(cidr), addressIn(cidr))),
        ([cidr, ip]) => {
          expect(contains(cidr, ip)).toBe(true);
          const size = addressCount(cidr);
          const after = cidr.network.value + size;
          if (after < 1n << BigInt(BITS[cidr.family]))
            expect(contains(cidr, { family: cidr.family, value: after })).toBe(false);
          if (cidr.network.value > 0n)
            expect(contains(cidr, { family: cidr.family, value: cidr.network.value - 1n })).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('containsCIDR implies overlaps, and a CIDR contains its own subnets', () => {
    fc.assert(
      fc.property(cidrPairOfOneFamily, ([a, b]) => {
        if (containsCIDR(a, b)) expect(overlaps(a, b)).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        cidrArb.chain((outer) =>
          fc.tuple(fc.constant(outer), addressIn(outer), fc.integer({ min: outer.prefix, max: BITS[outer.family] })),
        ),
        ([outer, ip, prefix]) => {
          // an IPv6 value in ::ffff:0:0/96 written with a long prefix is an IPv4 range, not a subnet of `outer`
          fc.pre(ip.family === 'IPv4' || ip.value >> 32n !== 0xffffn);
          const inner = mustParseCIDR(`${formatIP(ip)}/${prefix}`);
          expect(containsCIDR(outer, inner)).toBe(true);
          expect(overlaps(outer, inner)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('CIDRs of different families never overlap', () => {
    fc.assert(
      fc.property(cidrTextOf('IPv4'), cidrTextOf('IPv6'), (v4, v6) => {
        const a = mustParseCIDR(v4);
        const b = mustParseCIDR(v6);
        expect(overlaps(a, b)).toBe(false);
        expect(overlaps(b, a)).toBe(false);
        expect(containsCIDR(a, b) || containsCIDR(b, a)).toBe(false);
        expect(contains(a, b.network) || contains(b, a.network)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('firstServiceIP', () => {
  it('is the first address of the service range', () => {
    expect(firstServiceIP('fd00:10:2::/112')).toBe('fd00:10:2::1');
    expect(firstServiceIP('fd00:10:2::ff:ffff/112')).toBe('fd00:10:2::ff:1');
    expect(firstServiceIP('fd00:10:2:0:0:0:ff:ff00/120')).toBe('fd00:10:2::ff:ff01');
  });
});
