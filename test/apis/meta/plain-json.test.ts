import { describe, expect, it } from 'vitest';
import { admit } from '../../../src/apis/admission.js';
import { markPlainJSON, isPlainJSON } from '../../../src/apis/meta/plain-json.js';
import { withoutNulls } from '../../../src/apis/meta/nulls.js';
import { gateSets, ipv6ShootObject, seedObject } from '../../fixtures/objects.js';

describe('decoded JSON marked plain', () => {
  it('is decoded as it is without the mark', () => {
    for (const object of [ipv6ShootObject(), seedObject()]) {
      const unmarked = admit({ object: structuredClone(object), gates: gateSets.all });
      const marked = structuredClone(object) as object;
      markPlainJSON(marked);
      expect(isPlainJSON(marked)).toBe(true);
      expect(admit({ object: marked, gates: gateSets.all })).toEqual(unmarked);
    }
  });

  it('is left as it is by withoutNulls, unmarked values are walked', () => {
    const marked = { a: 1 };
    markPlainJSON(marked);
    expect(withoutNulls(marked)).toBe(marked);
    expect(withoutNulls({ a: null, b: 1 })).toEqual({ b: 1 });
    expect(isPlainJSON({ a: 1 })).toBe(false);
    expect(isPlainJSON(null)).toBe(false);
  });
});
