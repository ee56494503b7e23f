import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../../../src/extensions/provider-local/machine/api-client.js';
import {
  ResourceChanges,
  relevantNode,
  relevantPeerLease,
  watchPath,
  type Watch,
} from '../../../../src/extensions/provider-local/machine/resource-changes.js';
import { waitFor } from '../../../support/wait.js';

interface Item {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** A watch whose events the test sends, and which it can fail. */
function scriptedWatch() {
  const opened: string[] = [];
  let emit: ((e: WatchEvent<Item>) => void) | undefined;
  let fail: ((e: Error) => void) | undefined;
  const watch: Watch<Item> = (resourceVersion, onEvent, signal) => {
    opened.push(resourceVersion);
    emit = onEvent;
    return new Promise((resolve, reject) => {
      fail = reject;
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };
  return {
    watch,
    opened,
    send: (type: WatchEvent<Item>['type'], obj: Item) => emit!({ type, object: obj }),
    fail: (e: Error) => fail!(e),
  };
}

const item = (name: string, rv: string, annotations: Record<string, string> = {}, beat = '0'): Item => ({
  metadata: { name, resourceVersion: rv, annotations },
  data: { beat },
});
// As the node sync's views: annotations count, the "heartbeat" in data does not.
const relevant = (o: Item) => JSON.stringify(o.metadata.annotations ?? {});

describe('ResourceChanges: what counts as a change since the last list', () => {
  it('watches from the first list, ignores what is not relevant, and reports additions, changes and deletions', () => {
    const w = scriptedWatch();
    const changes = new ResourceChanges<Item>('things', relevant, w.watch, () => {});
    expect(changes.hasChanged).toBe(true);
    changes.listing();
    changes.listed([item('a', '5')], '7');
    expect(w.opened).toEqual(['7']);
    expect(watchPath('/api/v1/things?labelSelector=a', '7')).toBe(
      '/api/v1/things?labelSelector=a&watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=7',
    );
    expect(changes.hasChanged).toBe(false);

    w.send('MODIFIED', item('a', '8', {}, '1'));
    w.send('BOOKMARK', { metadata: { name: '', resourceVersion: '9' } });
    expect(changes.hasChanged).toBe(false);
    w.send('MODIFIED', item('a', '10', { overlay: 'fd00::1' }));
    expect(changes.hasChanged).toBe(true);

    changes.listing();
    changes.listed([item('a', '10', { overlay: 'fd00::1' })], '10');
    expect(w.opened).toHaveLength(1);
    expect(changes.hasChanged).toBe(false);
    w.send('ADDED', item('b', '11'));
    expect(changes.hasChanged).toBe(true);
    changes.listed([item('a', '10', { overlay: 'fd00::1' }), item('b', '11')], '11');
    w.send('DELETED', item('b', '12'));
    expect(changes.hasChanged).toBe(true);
    changes.stop();
  });

  it('an event that arrived while the list was read and differs from it still counts', () => {
    const w = scriptedWatch();
    const changes = new ResourceChanges<Item>('things', relevant, w.watch, () => {});
    changes.listed([item('a', '1')], '1');
    changes.listing();
    w.send('MODIFIED', item('a', '3', { new: 'yes' }));
    // The list was served before the change.
    changes.listed([item('a', '2')], '2');
    expect(changes.hasChanged).toBe(true);
    // The same event, and the list already has it: nothing left to read.
    changes.listing();
    w.send('MODIFIED', item('a', '3', { new: 'yes' }));
    changes.listed([item('a', '3', { new: 'yes' })], '3');
    expect(changes.hasChanged).toBe(false);
    changes.stop();
  });

  it('a failed watch counts as a change; the next list starts a new watch from its own resourceVersion', async () => {
    const w = scriptedWatch();
    const lines: string[] = [];
    const changes = new ResourceChanges<Item>('things', relevant, w.watch, (l) => lines.push(l));
    changes.listed([item('a', '1')], '1');
    w.send('MODIFIED', item('a', '4', {}, '2'));
    w.fail(new Error('GET /x: too old resource version: 1 (4)'));
    await waitFor(() => changes.hasChanged, { message: 'the failed watch to count as a change' });
    expect(lines.join('\n')).toMatch(/too old resource version/);
    changes.listed([item('a', '20')], '20');
    expect(w.opened.at(-1)).toBe('20');
    expect(changes.hasChanged).toBe(false);
    changes.stop();
  });

  it('list() reads and records in one step; a failed read is rethrown and leaves the list changed', async () => {
    const w = scriptedWatch();
    const changes = new ResourceChanges<Item>('things', relevant, w.watch, () => {});
    await expect(changes.list(async () => Promise.reject(new Error('HTTP 503')))).rejects.toThrow('HTTP 503');
    expect(changes.hasChanged).toBe(true);
    expect(w.opened).toEqual([]);
    expect(await changes.list(async () => ({ items: [item('a', '3')], resourceVersion: '3' }))).toEqual([
      item('a', '3'),
    ]);
    expect(w.opened).toEqual(['3']);
    expect(changes.hasChanged).toBe(false);
    changes.stop();
  });

  it("the node sync's views leave heartbeats and renewals out", () => {
    const node = (beat: string, ready = 'True') => ({
      metadata: { name: 'm-0', annotations: { a: '1' } },
      spec: { podCIDRs: ['fd00:10::/64'] },
      status: {
        addresses: [{ type: 'InternalIP', address: 'fd00::10' }],
        conditions: [{ type: 'Ready', status: ready, reason: 'KubeletReady', lastHeartbeatTime: beat }],
      },
    });
    expect(relevantNode(node('2026-12-03T10:00:00Z'))).toBe(relevantNode(node('2026-12-03T10:01:00Z')));
    expect(relevantNode(node('2026-12-03T10:00:00Z'))).not.toBe(relevantNode(node('x', 'False')));
    const lease = (renewTime: string, holder = 'vpn-0') => ({
      metadata: { name: 'overlay-peer-vpn-0', annotations: { u: 'fd00::2' } },
      spec: { holderIdentity: holder, renewTime, leaseDurationSeconds: 40 },
    });
    expect(relevantPeerLease(lease('t1'))).toBe(relevantPeerLease(lease('t2')));
    expect(relevantPeerLease(lease('t1'))).not.toBe(relevantPeerLease(lease('t1', 'vpn-1')));
  });
});
