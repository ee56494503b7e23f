import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { localCloudProfile } from '../src/extensions/provider-local/cloudprofile.js';
import { cli } from './support/cli.js';

const EXAMPLES = join(import.meta.dirname, '..', 'examples');
const CLOUD_PROFILE = 'cloudprofile-local.yaml';

/**
 * The gates and seed each example needs, and whether it is a Shoot, judged after the CloudProfile it names as the
 * API server would; every file under examples/ must be listed.
 */
const CASES: Record<string, { gates: string; seed?: string; shoot?: boolean; rejectedWithout?: boolean }> = {
  [CLOUD_PROFILE]: { gates: '' },
  'seed-ipv4.yaml': { gates: '' },
  'shoot-ipv4.yaml': { gates: '', seed: 'seed-ipv4.yaml', shoot: true },
  'seed-ipv6.yaml': { gates: 'IPv6SingleStack=true', rejectedWithout: true },
  'shoot-ipv6.yaml': { gates: 'IPv6SingleStack=true', seed: 'seed-ipv6.yaml', shoot: true, rejectedWithout: true },
  'seed-dual-stack.yaml': { gates: 'DualStack=true', rejectedWithout: true },
  'shoot-dual-stack.yaml': {
    gates: 'DualStack=true',
    seed: 'seed-dual-stack.yaml',
    shoot: true,
    rejectedWithout: true,
  },
  'seed-dual-stack-ipv6.yaml': { gates: 'IPv6SingleStack=true,DualStack=true', rejectedWithout: true },
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

  it.each(Object.entries(CASES))('%s is accepted with its gates', async (file, { gates, seed, shoot }) => {
    const profile = shoot ? ['-f', join(EXAMPLES, CLOUD_PROFILE)] : [];
    const args = ['validate', ...profile, '-f', join(EXAMPLES, file), '--feature-gates', gates];
    if (seed) args.push('--seed', join(EXAMPLES, seed));
    const run = await cli(args);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    if (shoot) expect(run.stdout).toContain('CloudProfile.core.gardener.cloud "local" is valid');
  });

  it.each(Object.entries(CASES).filter(([, c]) => c.rejectedWithout))(
    '%s is rejected without its gate',
    async (file) => {
      expect((await cli(['validate', '-f', join(EXAMPLES, file)])).code).toBe(1);
    },
  );

  it.each(Object.entries(CASES).filter(([, c]) => c.shoot))(
    '%s asks for a Kubernetes version and machine the CloudProfile lists',
    async (file) => {
      const run = await cli(['default', '-f', join(EXAMPLES, CLOUD_PROFILE), '-f', join(EXAMPLES, file)]);
      expect(run.stderr).toBe('');
      const [, shoot] = parseAllDocuments(run.stdout).map((doc) => doc.toJS()) as [
        unknown,
        { spec: { kubernetes: { version: string }; provider: { workers: { machine: unknown }[] } } },
      ];
      const profile = localCloudProfile().spec;
      expect(shoot.spec.kubernetes.version).toBe(profile.kubernetes!.versions![0]!.version);
      for (const worker of shoot.spec.provider.workers) {
        expect(worker.machine).toEqual({
          type: profile.machineTypes![0]!.name,
          image: { name: 'local', version: '1.0.0' },
        });
      }
    },
  );

  it(`${CLOUD_PROFILE} is the CloudProfile up creates, with the pinned Kubernetes version`, () => {
    expect(parse(readFileSync(join(EXAMPLES, CLOUD_PROFILE), 'utf8'))).toEqual(localCloudProfile());
    const pinned = /^KUBERNETES_VERSION=v(\S+)$/m.exec(
      readFileSync(join(import.meta.dirname, '..', 'hack', 'versions.env'), 'utf8'),
    )?.[1];
    expect(localCloudProfile().spec.kubernetes?.versions?.map((v) => v.version)).toEqual([pinned]);
  });
});
