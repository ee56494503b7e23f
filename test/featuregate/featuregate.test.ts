import { describe, expect, it } from 'vitest';
import {
  defaultFeatureGates,
  FeatureGateError,
  featureGates,
  formatFeatureGates,
  parseFeatureGates,
} from '../../src/featuregate/featuregate.js';

describe('feature gates', () => {
  it('are all off by default (both gates are alpha)', () => {
    expect(defaultFeatureGates).toEqual({ IPv6SingleStack: false, DualStack: false });
    expect(featureGates()).toEqual({ IPv6SingleStack: false, DualStack: false });
    expect(parseFeatureGates(undefined)).toEqual({ IPv6SingleStack: false, DualStack: false });
    expect(parseFeatureGates('')).toEqual({ IPv6SingleStack: false, DualStack: false });
    expect(parseFeatureGates('   ')).toEqual({ IPv6SingleStack: false, DualStack: false });
  });

  it('featureGates() overrides single gates', () => {
    expect(featureGates({ DualStack: true })).toEqual({ IPv6SingleStack: false, DualStack: true });
  });

  it.each([
    ['IPv6SingleStack=true,DualStack=true', { IPv6SingleStack: true, DualStack: true }],
    ['IPv6SingleStack=true', { IPv6SingleStack: true, DualStack: false }],
    ['DualStack=true', { IPv6SingleStack: false, DualStack: true }],
    ['DualStack=false', { IPv6SingleStack: false, DualStack: false }],
    ['DualStack=true,DualStack=false', { IPv6SingleStack: false, DualStack: false }],
    [' IPv6SingleStack = true , DualStack=TRUE ,', { IPv6SingleStack: true, DualStack: true }],
    ['IPv6SingleStack=True', { IPv6SingleStack: true, DualStack: false }],
  ])('parses %j', (text, expected) => {
    expect(parseFeatureGates(text)).toEqual(expected);
  });

  it('rejects unknown gates, naming the gate and the known ones', () => {
    expect(() => parseFeatureGates('IPv6DualStack=true')).toThrow(FeatureGateError);
    expect(() => parseFeatureGates('DualStack=true,Foo=true')).toThrow(
      'unrecognized feature gate: Foo (known gates: DualStack, IPv6SingleStack)',
    );
    // gate names are case-sensitive, as in Kubernetes
    expect(() => parseFeatureGates('dualstack=true')).toThrow(/unrecognized feature gate: dualstack/);
  });

  it.each(['DualStack=yes', 'DualStack=', 'DualStack=truee', 'IPv6SingleStack=on'])(
    'rejects the bad value in %j',
    (text) => {
      expect(() => parseFeatureGates(text)).toThrow(FeatureGateError);
      expect(() => parseFeatureGates(text)).toThrow(
        /invalid value of (DualStack|IPv6SingleStack)=.*expected true or false/,
      );
    },
  );

  it('rejects a gate without a value', () => {
    expect(() => parseFeatureGates('DualStack')).toThrow('missing bool value for feature gate "DualStack"');
  });

  it('formats gates sorted, in the flag syntax it parses', () => {
    const gates = featureGates({ IPv6SingleStack: true });
    expect(formatFeatureGates(gates)).toBe('DualStack=false,IPv6SingleStack=true');
    expect(parseFeatureGates(formatFeatureGates(gates))).toEqual(gates);
  });
});
