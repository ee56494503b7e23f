import { describe, expect, it } from 'vitest';
import { quantitySign, quantityValue } from '../../../src/apis/validation/quantity.js';

describe('Kubernetes quantities', () => {
  it('have the value of their number times their suffix, binary or decimal', () => {
    expect(quantityValue('1')).toBe(1);
    expect(quantityValue('100m')).toBeCloseTo(0.1);
    expect(quantityValue('8Gi')).toBe(8 * 2 ** 30);
    expect(quantityValue('1.5Mi')).toBe(1.5 * 2 ** 20);
    expect(quantityValue('3G')).toBe(3e9);
    expect(quantityValue('2k')).toBe(2000);
    expect(quantityValue('5e3')).toBe(5000);
    expect(quantityValue('250u')).toBeCloseTo(0.00025);
    expect(quantityValue(4)).toBe(4);
  });

  it('have none when they are not quantities', () => {
    for (const bad of ['', 'lots', '1Gb', '1 Gi', 'Gi', '--1']) expect(quantityValue(bad), bad).toBeUndefined();
    expect(quantityValue(Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it('have a sign', () => {
    expect(quantitySign('-1Gi')).toBe(-1);
    expect(quantitySign('0')).toBe(0);
    expect(quantitySign('x')).toBeUndefined();
  });
});
