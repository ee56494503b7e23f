import { describe, expect, it } from 'vitest';
import { coreDNSObjects, corefile } from '../../../../src/gardenlet/shoot/components/coredns.js';

describe('CoreDNS of a shoot', () => {
  it('serves the cluster domain and reverse zones; forwards only when upstreams are given', () => {
    const plain = corefile({});
    expect(plain).toContain('kubernetes cluster.local in-addr.arpa ip6.arpa {');
    expect(plain).not.toContain('forward');
    const forwarding = corefile({ upstreams: ['fd00::53'] });
    expect(forwarding).toContain('forward . fd00::53');
    expect(forwarding).toContain('fallthrough in-addr.arpa ip6.arpa');
    expect(forwarding).not.toContain('template');
  });

  it('without upstreams, answers every name outside the cluster zones NXDOMAIN from a server of its own', () => {
    const plain = corefile({});
    expect(plain).toMatch(/^cluster\.local:53 in-addr\.arpa:53 ip6\.arpa:53 \{$/m);
    expect(plain).toContain('.:53 {\n    template ANY ANY {\n        rcode NXDOMAIN\n    }\n}');
    // Nothing to fall through to.
    expect(plain).not.toContain('fallthrough');
  });

  it('the kube-dns Service has the cluster DNS address and the shoot families', () => {
    const single = coreDNSObjects({ clusterIPs: ['fd00:10:2::a'], families: ['IPv6'] });
    const service = single.find((o) => o.ref.kind === 'Service')!.object as unknown as {
      metadata: { name: string };
      spec: Record<string, unknown>;
    };
    expect(service.metadata.name).toBe('kube-dns');
    expect(service.spec).toMatchObject({
      clusterIP: 'fd00:10:2::a',
      ipFamilies: ['IPv6'],
      ipFamilyPolicy: 'SingleStack',
    });
    const dual = coreDNSObjects({ clusterIPs: ['fd00:10:2::a', '10.2.0.10'], families: ['IPv6', 'IPv4'] });
    const dualService = dual.find((o) => o.ref.kind === 'Service')!.object as unknown as {
      spec: Record<string, unknown>;
    };
    expect(dualService.spec).toMatchObject({
      clusterIPs: ['fd00:10:2::a', '10.2.0.10'],
      ipFamilyPolicy: 'RequireDualStack',
    });
  });

  it('the Deployment runs the CoreDNS image with the Corefile and does not resolve through itself', () => {
    const deployment = coreDNSObjects({ clusterIPs: ['fd00:10:2::a'], families: ['IPv6'] }).find(
      (o) => o.ref.kind === 'Deployment',
    )!.object as unknown as {
      spec: { template: { spec: { dnsPolicy: string; containers: { image: string; args: string[] }[] } } };
    };
    expect(deployment.spec.template.spec.dnsPolicy).toBe('Default');
    expect(deployment.spec.template.spec.containers[0]).toMatchObject({
      image: 'local.gardener.cloud/coredns:1',
      args: ['-conf', '/etc/coredns/Corefile'],
    });
  });
});
