import { describe, expect, it } from 'vitest';
import { desiredPodRoutes, diffRoutes } from '../../../../src/extensions/provider-local/machine/routes.js';
import type { NodeInfo } from '../../../../src/extensions/provider-local/machine/api-client.js';

const node = (name: string, podCIDRs: string[], ips: string[]): NodeInfo => ({
  metadata: { name },
  spec: { podCIDRs },
  status: {
    addresses: [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: name }],
  },
});

describe('pod routes between machines', () => {
  const nodes = [
    node('a', ['fd00:10:3::/64', '10.3.0.0/24'], ['fd00:10:1::a', '10.10.0.10']),
    node('b', ['fd00:10:3:1::/64', '10.3.1.0/24'], ['fd00:10:1::b', '10.10.0.11']),
    node('c', [], ['fd00:10:1::c']),
  ];

  it('routes every other Node podCIDR via its InternalIP of the same family', () => {
    expect(desiredPodRoutes('a', nodes)).toEqual([
      { cidr: '10.3.1.0/24', via: '10.10.0.11', node: 'b' },
      { cidr: 'fd00:10:3:1::/64', via: 'fd00:10:1::b', node: 'b' },
    ]);
  });

  it('skips a family the Node has no InternalIP of', () => {
    expect(desiredPodRoutes('b', [node('a', ['fd00:10:3::/64', '10.3.0.0/24'], ['fd00:10:1::a'])])).toEqual([
      { cidr: 'fd00:10:3::/64', via: 'fd00:10:1::a', node: 'a' },
    ]);
  });

  it('diffs programmed against desired routes: new, changed next hop, vanished', () => {
    const current = new Map([
      ['fd00:10:3:1::/64', { cidr: 'fd00:10:3:1::/64', via: 'fd00:10:1::9', node: 'b' }],
      ['fd00:10:3:7::/64', { cidr: 'fd00:10:3:7::/64', via: 'fd00:10:1::7', node: 'gone' }],
    ]);
    const { add, remove } = diffRoutes(current, desiredPodRoutes('a', nodes));
    expect(add.map((r) => r.cidr)).toEqual(['10.3.1.0/24', 'fd00:10:3:1::/64']);
    expect(remove.map((r) => r.cidr)).toEqual(['fd00:10:3:7::/64']);
  });
});
