import { describe, expect, it } from 'vitest';
import { machinePodAddresses } from '../../../../src/extensions/provider-local/machine/pod-agent.js';

describe('machine pod addresses', () => {
  it('takes the pod address of each shoot family, primary first, as host prefixes', () => {
    expect(machinePodAddresses(['IPv6', 'IPv4'], ['10.1.0.5', 'fd00:10:1::5'])).toEqual({
      families: ['IPv6', 'IPv4'],
      addresses: ['fd00:10:1::5/128', '10.1.0.5/32'],
    });
  });

  it('leaves out a secondary family the seed pod network lacks', () => {
    expect(machinePodAddresses(['IPv6', 'IPv4'], ['fd00:10:1::5'])).toEqual({
      families: ['IPv6'],
      addresses: ['fd00:10:1::5/128'],
    });
  });

  it('refuses a pod without the primary family, and a malformed address', () => {
    expect(() => machinePodAddresses(['IPv4', 'IPv6'], ['fd00:10:1::5'])).toThrow(/no IPv4 address/);
    expect(() => machinePodAddresses(['IPv6'], ['fd00::zz'])).toThrow(/POD_IPS: "fd00::zz" is not an IP address/);
  });
});
