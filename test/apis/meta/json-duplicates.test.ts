import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../../src/apis/meta/json-duplicates.js';

describe('duplicate keys in JSON', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"metadata":{"name":"x","labels":{},"name":"y"}}', 'metadata.name'],
    [
      '{"spec":{"networking":{"ipFamilies":["IPv6"],"nodes":"fd00::/64","ipFamilies":["IPv4"]}}}',
      'spec.networking.ipFamilies',
    ],
    ['{"items":[{"a":1},{"b":{"c":1,"c":2}}]}', 'items[1].b.c'],
    ['[{"x":1},[{"y":1,"y":1}]]', '[1][0].y'],
    // Keys equal once decoded, spelt differently.
    ['{"n\\u0061me":1,"name":2}', 'name'],
    ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
  ])('finds %s', (text, path) => {
    expect(() => JSON.parse(text) as unknown).not.toThrow();
    expect(firstDuplicateKey(text)).toBe(path);
  });

  it.each([
    '{"a":{"x":1},"b":{"x":1}}',
    '[{"a":1},{"a":1}]',
    '{"s":"a:b,{c}[d]\\"","t":"\\\\","u":{"s":1}}',
    '{"a":"\\\\\\"x\\\\","b":1}',
    '"just a string"',
    '{}',
  ])('finds none in %s', (text) => {
    expect(() => JSON.parse(text) as unknown).not.toThrow();
    expect(firstDuplicateKey(text)).toBeUndefined();
  });
});
