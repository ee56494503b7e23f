import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A review must build its objects in shapes V8 has seen before. An object that gets a new map on every review (a
 * spread's copy with a key added) leaves maps behind that only a full collection frees, and every minor collection
 * copies and promotes what they hold: that was most of the webhook's GC work per review, and it made every property
 * access that sees those objects megamorphic.
 */
describe('review shapes', () => {
  it('answers reviews of every kind with objects of the same maps, review after review', { timeout: 60_000 }, () => {
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', join(import.meta.dirname, 'shapes-probe.ts')],
      { cwd: join(import.meta.dirname, '../..'), encoding: 'utf8' },
    );
    const results = JSON.parse(out) as Record<string, string[]>;
    // The probe tells maps apart (else an empty list below would prove nothing).
    expect(results.control).toEqual(['$.x']);
    delete results.control;
    expect(Object.keys(results).length).toBe(12 * 2 * 2);
    const changing = Object.fromEntries(Object.entries(results).filter(([, paths]) => paths.length > 0));
    expect(changing).toEqual({});
  });
});
