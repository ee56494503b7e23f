import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';

const EXAMPLES = join(import.meta.dirname, '..', 'examples');

/** The gates and seed each example needs; every file under examples/ must be listed. */
const CASES: Record<string, { gates: string; seed?: string; rejectedWithout?: boolean }> = {
  'seed-ipv4.yaml': { gates: '' },
  'shoot-ipv4.yaml': { gates: '', seed: 'seed-ipv4.yaml' },
  'seed-ipv6.yaml': { gates: 'IPv6SingleStack=true', rejectedWithout: true },
  'shoot-ipv6.yaml': { gates: 'IPv6SingleStack=true', seed: 'seed-ipv6.yaml', rejectedWithout: true },
  'seed-dual-stack.yaml': { gates: 'DualStack=true', rejectedWithout: true },
  'shoot-dual-stack.yaml': { gates: 'DualStack=true', seed: 'seed-dual-stack.yaml', rejectedWithout: true },
  'network-ipv6.yaml': { gates: '' },
  'dnsrecord-aaaa.yaml': { gates: '' },
  'worker-local.yaml': { gates: '' },
};

describe('examples', () => {
  it('are all covered here', () => {
    expect(
      readdirSync(EXAMPLES)
        .filter((f) => f.endsWith('.yaml'))
        .sort(),
    ).toEqual(Object.keys(CASES).sort());
  });

  it.each(Object.entries(CASES))('%s is accepted with its gates', async (file, { gates, seed }) => {
    const args = ['validate', '-f', join(EXAMPLES, file), '--feature-gates', gates];
    if (seed) args.push('--seed', join(EXAMPLES, seed));
    expect(await cli(args)).toMatchObject({ code: 0, stderr: '' });
  });

  it.each(Object.entries(CASES).filter(([, c]) => c.rejectedWithout))(
    '%s is rejected without its gate',
    async (file) => {
      expect((await cli(['validate', '-f', join(EXAMPLES, file)])).code).toBe(1);
    },
  );
});
