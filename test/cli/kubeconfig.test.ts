import { describe, expect, it } from 'vitest';
import { parseDuration, parseShootRef } from '../../src/cli/kubeconfig.js';
import { cli } from '../support/cli.js';

describe('gardener-ipv6 kubeconfig', () => {
  it('reads Go-style durations and NAMESPACE/NAME references', () => {
    expect(parseDuration('1h')).toBe(3600);
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('600s')).toBe(600);
    expect(() => parseDuration('1d')).toThrow(/not a duration/);
    expect(() => parseDuration('')).toThrow(/not a duration/);
    expect(parseShootRef('garden-local/local')).toEqual({ namespace: 'garden-local', name: 'local' });
    expect(() => parseShootRef('local')).toThrow(/NAMESPACE\/NAME/);
    expect(() => parseShootRef('a/B')).toThrow(/NAMESPACE\/NAME/);
  });

  it('refuses bad flags with exit code 2 before contacting anything', async () => {
    const tooLong = await cli(['kubeconfig', '--shoot', 'garden-local/local', '--expiration', '48h']);
    expect(tooLong).toMatchObject({ code: 2, stdout: '' });
    expect(tooLong.stderr).toMatch(/between 10m and 24h/);
    const noShoot = await cli(['kubeconfig']);
    expect(noShoot.code).toBe(2);
    expect(noShoot.stderr).toMatch(/--shoot/);
    const unreachable = await cli([
      'kubeconfig',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
      '--shoot',
      'garden-local/local',
    ]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/^error: cannot load the kubeconfig/);
  });
});
