import { describe, expect, it } from 'vitest';
import {
  MACHINE_USER_DATA_API_VERSION,
  parseMachineUserData,
} from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';

const valid = {
  apiVersion: MACHINE_USER_DATA_API_VERSION,
  kind: 'MachineUserData',
  apiServer: { url: 'https://[fd00:ff::2]:443', caPEM: '-----BEGIN CERTIFICATE-----\n...' },
  bootstrapToken: 'abcdef.0123456789abcdef',
  families: ['IPv6'],
  clusterDNS: ['fd00:10:4::a'],
  podCIDRs: ['fd00:10:3::/56'],
  serviceCIDRs: ['fd00:10:4::/112'],
};

describe('machine user data', () => {
  it('parses with defaults for the optional parts', () => {
    const parsed = parseMachineUserData(JSON.stringify(valid));
    expect(parsed.clusterDomain).toBe('cluster.local');
    expect(parsed.files).toEqual([]);
    expect(parsed.sysctls).toEqual({});
  });

  it.each([
    ['a malformed token', { bootstrapToken: 'abc.def' }, 'bootstrapToken: a bootstrap token'],
    ['no family', { families: [] }, 'families:'],
    ['an unknown family', { families: ['IPv5'] }, 'families.0:'],
    ['a URL that is none', { apiServer: { url: 'fd00::1', caPEM: 'x' } }, 'apiServer.url:'],
  ])('names the field of %s', (_, change, message) => {
    expect(() => parseMachineUserData(JSON.stringify({ ...valid, ...change }))).toThrow(message);
  });

  it('says when the text is not JSON', () => {
    expect(() => parseMachineUserData('{')).toThrow(/^user data: not JSON/);
  });
});
