import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  AddressPool,
  gatewayCIDR,
  parseLoadBalancerNetworks,
  type LoadBalancerNetworks,
} from '../../../../src/extensions/provider-local/loadbalancer/pool.js';
import {
  ADDRESS_CONDITION,
  ROUTE_RETRY_MS,
  ServiceLoadBalancerReconciler,
} from '../../../../src/extensions/provider-local/loadbalancer/service-controller.js';
import { HostRoutesToNodes, NoRouteYetError } from '../../../../src/extensions/provider-local/loadbalancer/routes.js';
import type { ResourceClient } from '../../../../src/runtime/client.js';
import { silentLogger } from '../../../../src/runtime/log.js';

describe('AddressPool', () => {
  it('hands out the lowest free address after the gateway, per family', () => {
    const pool = new AddressPool({ IPv6: 'fd00:ff::/64', IPv4: '172.18.255.0/24' });
    expect(pool.allocate('IPv6', new Set())).toBe('fd00:ff::2');
    expect(pool.allocate('IPv6', new Set(['fd00:ff::2', 'fd00:ff::3']))).toBe('fd00:ff::4');
    expect(pool.allocate('IPv4', new Set(['172.18.255.2']))).toBe('172.18.255.3');
  });

  it('never hands out the IPv4 broadcast address and says when it is exhausted', () => {
    const pool = new AddressPool({ IPv4: '10.9.0.0/30' });
    expect(pool.allocate('IPv4', new Set())).toBe('10.9.0.2');
    expect(() => pool.allocate('IPv4', new Set(['10.9.0.2']))).toThrow(/10\.9\.0\.0\/30 has no free address left/);
    expect(() => pool.allocate('IPv6', new Set())).toThrow(/no IPv6 load-balancer network/);
  });

  it('knows its own addresses (not the network address, not the gateway, not another family)', () => {
    const pool = new AddressPool({ IPv6: 'fd00:ff::/64', IPv4: '172.18.255.0/24' });
    expect(pool.owns('IPv6', 'fd00:ff::2')).toBe(true);
    expect(pool.owns('IPv6', 'fd00:ff:0:0::ab')).toBe(true);
    expect(pool.owns('IPv6', 'fd00:ff::1')).toBe(false);
    expect(pool.owns('IPv6', 'fd00:fe::2')).toBe(false);
    expect(pool.owns('IPv4', '172.18.255.255')).toBe(false);
    expect(pool.owns('IPv4', 'fd00:ff::2')).toBe(false);
    expect(pool.owns('IPv6', 'not an ip')).toBe(false);
  });

  it('rejects networks of the wrong family or too small, and gives the gateway with its prefix', () => {
    expect(() => parseLoadBalancerNetworks({ IPv6: '10.0.0.0/24' })).toThrow(/not an IPv6 network/);
    expect(() => parseLoadBalancerNetworks({ IPv4: '10.0.0.0/31' })).toThrow(/too small/);
    expect(() => parseLoadBalancerNetworks({ IPv4: 'nope' })).toThrow(/not a CIDR/);
    expect(gatewayCIDR('fd00:ff::/64')).toBe('fd00:ff::1/64');
    expect(gatewayCIDR('172.18.255.0/24')).toBe('172.18.255.1/24');
  });
});

function lbService(name: string, families: string[], ingress: string[] = []): V1Service {
  return {
    metadata: { name: 'kube-apiserver', namespace: `shoot--p--${name}` },
    spec: { type: 'LoadBalancer', ipFamilies: families },
    status: { loadBalancer: { ingress: ingress.map((ip) => ({ ip, ipMode: 'VIP' })) } },
  };
}

/** The reconciler against an in-memory service list; patches land in the list as the informer would see them. */
function harness(
  services: V1Service[],
  networks: LoadBalancerNetworks = { IPv6: 'fd00:ff::/64', IPv4: '172.18.255.0/24' },
) {
  const patches: { namespace?: string; ingress: unknown }[] = [];
  const client = {
    mergePatch: async (
      _ref: unknown,
      name: string,
      namespace: string | undefined,
      body: { status: { loadBalancer?: { ingress: { ip: string }[] }; conditions?: unknown } },
    ) => {
      const s = services.find((x) => x.metadata?.name === name && x.metadata?.namespace === namespace)!;
      // A merge patch: what it names replaces, null removes, the rest stays.
      const status = { ...s.status, ...body.status } as Record<string, unknown>;
      for (const [k, v] of Object.entries(status)) if (v === null) delete status[k];
      if (body.status.loadBalancer) patches.push({ namespace, ingress: body.status.loadBalancer.ingress });
      s.status = status as V1Service['status'];
      return s;
    },
  } as unknown as ResourceClient;
  const reconciler = new ServiceLoadBalancerReconciler({
    client,
    addresses: { pool: new AddressPool(networks) },
    get: (name, namespace) => services.find((s) => s.metadata?.name === name && s.metadata?.namespace === namespace),
    list: () => services,
  });
  const reconcile = (shoot: string) =>
    reconciler.reconcile(
      { namespace: `shoot--p--${shoot}`, name: 'kube-apiserver' },
      { signal: new AbortController().signal, logger: silentLogger() },
    );
  return { patches, reconcile };
}

describe('ServiceLoadBalancerReconciler with pools', () => {
  it('says on the Service why it has no address when the pool is exhausted, and clears it once it has one', async () => {
    // 10.9.0.0/30: the gateway .1 and one address, .2.
    const services = [lbService('a', ['IPv4'], ['10.9.0.2']), lbService('b', ['IPv4'])];
    const { patches, reconcile } = harness(services, { IPv4: '10.9.0.0/30' });
    await expect(reconcile('b')).rejects.toThrow('the IPv4 load-balancer network 10.9.0.0/30 has no free address left');
    expect(services[1]!.status?.conditions).toEqual([
      expect.objectContaining({
        type: ADDRESS_CONDITION,
        status: 'False',
        reason: 'AddressPoolExhausted',
        message: 'the IPv4 load-balancer network 10.9.0.0/30 has no free address left',
      }),
    ]);
    // Retried: the same reason is not written again.
    await expect(reconcile('b')).rejects.toThrow('no free address left');
    expect(patches).toEqual([]);
    // a's shoot goes: b gets the address, and the condition goes with the failure.
    services.splice(0, 1);
    await reconcile('b');
    expect(services[0]!.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual(['10.9.0.2']);
    expect(services[0]!.status?.conditions).toBeUndefined();
  });

  it('gives each service its own address per family, in the order of its families, and keeps it', async () => {
    const services = [lbService('a', ['IPv6']), lbService('b', ['IPv4', 'IPv6']), lbService('c', ['IPv6'])];
    const { patches, reconcile } = harness(services);
    await reconcile('a');
    await reconcile('b');
    await reconcile('c');
    expect(services.map((s) => s.status?.loadBalancer?.ingress?.map((i) => i.ip))).toEqual([
      ['fd00:ff::2'],
      ['172.18.255.2', 'fd00:ff::3'],
      ['fd00:ff::4'],
    ]);
    await reconcile('b');
    expect(patches).toHaveLength(3);
  });

  it('hands out a deleted service address again, and never one another service holds', async () => {
    const services = [lbService('a', ['IPv6'], ['fd00:ff::2']), lbService('b', ['IPv6'], ['fd00:ff::2'])];
    const { reconcile } = harness(services);
    // b claims a's address (say, restored from a backup): it gets a fresh one, a keeps its own.
    await reconcile('b');
    expect(services[1]!.status?.loadBalancer?.ingress?.[0]?.ip).toBe('fd00:ff::3');
    services.splice(0, 1);
    await reconcile('a');
    services.push(lbService('d', ['IPv6']));
    await reconcile('d');
    expect(services[1]!.status?.loadBalancer?.ingress?.[0]?.ip).toBe('fd00:ff::2');
  });

  it('replaces an address outside the pool (the host IP of objects-only mode)', async () => {
    const services = [lbService('a', ['IPv6'], ['::1'])];
    const { reconcile } = harness(services);
    await reconcile('a');
    expect(services[0]!.status?.loadBalancer?.ingress).toEqual([{ ip: 'fd00:ff::2', ipMode: 'VIP' }]);
  });
});

describe('ServiceLoadBalancerReconciler with routes to the seed', () => {
  it('never gives two Services reconciled at once the same address (their routes awaited meanwhile)', async () => {
    const services = [lbService('a', ['IPv4']), lbService('b', ['IPv4'])];
    const routed = new Map<string, string[]>();
    const client = {
      mergePatch: async (_r: unknown, name: string, namespace: string, body: { status: V1Service['status'] }) => {
        const s = services.find((x) => x.metadata?.name === name && x.metadata?.namespace === namespace)!;
        s.status = body.status;
        return s;
      },
    } as unknown as ResourceClient;
    const reconciler = new ServiceLoadBalancerReconciler({
      client,
      addresses: { pool: new AddressPool({ IPv4: '10.19.0.0/24' }) },
      get: (name, namespace) => services.find((s) => s.metadata?.name === name && s.metadata?.namespace === namespace),
      list: () => services,
      routes: {
        // As `ip route` through a child process: the other reconcile runs while this one waits.
        ensure: async (key, addresses) => {
          await new Promise((r) => setTimeout(r, 10));
          routed.set(key, [...addresses]);
        },
        remove: () => {},
        removeAll: () => {},
      },
    });
    const ctx = { signal: new AbortController().signal, logger: silentLogger() };
    await Promise.all(
      ['a', 'b'].map((shoot) => reconciler.reconcile({ namespace: `shoot--p--${shoot}`, name: 'kube-apiserver' }, ctx)),
    );
    const ips = services.map((s) => s.status?.loadBalancer?.ingress?.[0]?.ip);
    expect(new Set(ips).size).toBe(2);
    expect([...routed.values()].flat().sort()).toEqual([...ips].sort());
  });

  it('hands out the address while no seed Node is Ready, then routes it once one is, without an error', async () => {
    const services = [lbService('a', ['IPv6'])];
    const seed: { node?: string } = {};
    const routed: string[] = [];
    // Without a Ready Node the host routes say so with NoRouteYetError (before touching any route).
    await expect(new HostRoutesToNodes(async () => undefined).ensure('k', ['fd00:ff::2'])).rejects.toBeInstanceOf(
      NoRouteYetError,
    );
    const client = {
      mergePatch: async (_r: unknown, _n: string, _ns: string, body: { status: V1Service['status'] }) => {
        services[0]!.status = body.status;
        return services[0];
      },
    } as unknown as ResourceClient;
    const reconciler = new ServiceLoadBalancerReconciler({
      client,
      addresses: { pool: new AddressPool({ IPv6: 'fd00:ff::/64' }) },
      get: () => services[0],
      list: () => services,
      routes: {
        ensure: async (_key, addresses) => {
          if (seed.node === undefined)
            throw new NoRouteYetError(`no Ready seed Node of IPv6 to route ${addresses[0]} to`);
          routed.push(...addresses);
        },
        remove: () => {},
        removeAll: () => {},
      },
    });
    const ctx = { signal: new AbortController().signal, logger: silentLogger() };
    const req = { namespace: 'shoot--p--a', name: 'kube-apiserver' };
    expect(await reconciler.reconcile(req, ctx)).toEqual({ requeueAfter: ROUTE_RETRY_MS });
    expect(services[0]!.status?.loadBalancer?.ingress?.[0]?.ip).toBe('fd00:ff::2');
    expect(routed).toEqual([]);
    seed.node = 'fd00:10::a';
    expect(await reconciler.reconcile(req, ctx)).toBeUndefined();
    expect(routed).toEqual(['fd00:ff::2']);
  });
});
