/**
 * charts/gardener-ipv6 through the real helm: the NetworkPolicies of the release's pods (default deny; the webhook
 * from where the API server calls it, metrics from monitoring, the DNS server from the DNS extension and those who
 * query it) and the webhook's PodDisruptionBudget.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHART_DIR,
  helm,
  helmBinary,
  ofKind,
  parseObjects,
  PRESETS,
  renderChart,
  type K8sObject,
  type Preset,
} from './helm.js';

const RELEASE = 'gardener-ipv6';
const NAMESPACE = 'garden-ipv6';
const nameOf = (component: string) => `${RELEASE}-${component}`;

beforeAll(async () => {
  await helmBinary();
}, 20 * 60_000);

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface Rule {
  from?: Peer[];
  ports?: { port: number | string; protocol?: string }[];
}
interface NetworkPolicy {
  spec: { podSelector: LabelSelector; policyTypes: string[]; ingress?: Rule[]; egress?: Rule[] };
}
interface Deployment {
  spec: { replicas: number; template: { metadata: { labels: Record<string, string> } } };
}
interface PodDisruptionBudget {
  spec: { minAvailable?: number; maxUnavailable?: number; selector: LabelSelector };
}

/** Whether a label selector selects these labels (the API server's semantics; `{}` selects everything). */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const labelsMatch = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const expressionsMatch = (selector.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In':
        return has && (e.values ?? []).includes(labels[e.key]!);
      case 'NotIn':
        return !has || !(e.values ?? []).includes(labels[e.key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
  });
  return labelsMatch && expressionsMatch;
}

const policiesOf = (objects: K8sObject[]) => ofKind<NetworkPolicy>(objects, 'NetworkPolicy');
const podLabels = (objects: K8sObject[], component: string) =>
  ofKind<Deployment>(objects, 'Deployment').find((d) => d.metadata.name === nameOf(component))!.spec.template.metadata
    .labels;

/** The ingress rules that apply to a component's pods. */
function rulesFor(objects: K8sObject[], component: string): Rule[] {
  const labels = podLabels(objects, component);
  return policiesOf(objects)
    .filter((p) => selects(p.spec.podSelector, labels))
    .flatMap((p) => p.spec.ingress ?? []);
}

const portsOf = (rules: Rule[]) =>
  rules.flatMap((r) => (r.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`)).sort();

/** What each component's pods accept with the default values: nothing else. */
const EXPECTED_PORTS: Record<string, string[]> = {
  admission: ['8080/TCP', '9443/TCP'],
  gardenlet: ['8080/TCP'],
  scheduler: ['8080/TCP'],
  'network-calico': ['8080/TCP'],
  'dns-local': ['8080/TCP'],
  'dns-server': ['5353/TCP', '5353/UDP'],
};

describe.each(Object.keys(PRESETS) as Preset[])('the %s values', (preset) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = renderChart(preset, { release: RELEASE, namespace: NAMESPACE });
  });

  it("deny every ingress to the release's pods but their own ports, and leave egress open", () => {
    const deployments = ofKind<Deployment>(objects, 'Deployment');
    expect(deployments.map((d) => d.metadata.name.slice(RELEASE.length + 1)).sort()).toEqual(
      Object.keys(EXPECTED_PORTS).sort(),
    );
    for (const d of deployments) {
      const component = d.metadata.name.slice(RELEASE.length + 1);
      const selecting = policiesOf(objects).filter((p) => selects(p.spec.podSelector, d.spec.template.metadata.labels));
      // An Ingress policy without rules selects it: whatever no other policy allows is refused.
      expect(
        selecting.some((p) => p.spec.ingress === undefined),
        component,
      ).toBe(true);
      for (const p of selecting) expect(p.spec.policyTypes, p.metadata.name).toEqual(['Ingress']);
      expect(portsOf(rulesFor(objects, component)), component).toEqual(EXPECTED_PORTS[component]);
      // No rule without ports: that would open every port.
      for (const r of rulesFor(objects, component)) expect(r.ports?.length, component).toBeGreaterThan(0);
    }
    // Every policy selects some pod of the release (a misspelt component label would protect nothing).
    for (const p of policiesOf(objects)) {
      expect(
        deployments.some((d) => selects(p.spec.podSelector, d.spec.template.metadata.labels)),
        p.metadata.name,
      ).toBe(true);
      expect(p.metadata.namespace).toBe(NAMESPACE);
    }
  });

  it('let monitoring scrape the health port, and nobody else', () => {
    for (const component of ['admission', 'gardenlet', 'scheduler', 'network-calico', 'dns-local']) {
      const metrics = rulesFor(objects, component).filter((r) => r.ports?.some((p) => p.port === 8080));
      expect(
        metrics.flatMap((r) => r.from ?? [{}]),
        component,
      ).toEqual([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: {} },
      ]);
    }
  });

  it('let only the DNS extension reach the DNS server by default', () => {
    const from = rulesFor(objects, 'dns-server').flatMap((r) => r.from ?? [{}]);
    expect(from).toEqual([{ podSelector: { matchLabels: podSelectorLabels('dns-local') } }]);
    expect(selects(from[0]!.podSelector!, podLabels(objects, 'dns-local'))).toBe(true);
    expect(selects(from[0]!.podSelector!, podLabels(objects, 'gardenlet'))).toBe(false);
  });

  it('keep one webhook pod through voluntary disruptions (PodDisruptionBudget, minAvailable 1)', () => {
    const pdbs = ofKind<PodDisruptionBudget>(objects, 'PodDisruptionBudget');
    expect(pdbs.map((p) => p.metadata.name)).toEqual([nameOf('admission')]);
    expect(pdbs[0]!.spec.minAvailable).toBe(1);
    expect(pdbs[0]!.spec.maxUnavailable).toBeUndefined();
    const admission = ofKind<Deployment>(objects, 'Deployment').find((d) => d.metadata.name === nameOf('admission'))!;
    expect(admission.spec.replicas).toBeGreaterThan(1);
    for (const d of ofKind<Deployment>(objects, 'Deployment')) {
      expect(selects(pdbs[0]!.spec.selector, d.spec.template.metadata.labels), d.metadata.name).toBe(
        d.metadata.name === nameOf('admission'),
      );
    }
  });
});

function podSelectorLabels(component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'gardener-ipv6',
    'app.kubernetes.io/instance': RELEASE,
    'app.kubernetes.io/component': component,
  };
}

describe('NetworkPolicy values', () => {
  it('admit the webhook from the API server only: its CIDRs (IPv6 and IPv4) and peers', () => {
    const objects = renderChart('dual', {
      release: RELEASE,
      namespace: NAMESPACE,
      set: {
        'networkPolicy.apiServer.cidrs': '{fd00:10:0:1::/64,172.18.0.0/16}',
        'networkPolicy.apiServer.peers[0].namespaceSelector.matchLabels.gardener\\.cloud/role': 'garden',
      },
    });
    const webhook = rulesFor(objects, 'admission').filter((r) => r.ports?.some((p) => p.port === 9443));
    expect(webhook).toHaveLength(1);
    expect(webhook[0]!.from).toEqual([
      { ipBlock: { cidr: 'fd00:10:0:1::/64' } },
      { ipBlock: { cidr: '172.18.0.0/16' } },
      { namespaceSelector: { matchLabels: { 'gardener.cloud/role': 'garden' } } },
    ]);
  });

  it("admit the webhook by default from the kind nodes' network only, where a host-network API server calls from", () => {
    for (const preset of Object.keys(PRESETS) as Preset[]) {
      const objects = renderChart(preset, { release: RELEASE, namespace: NAMESPACE });
      const webhook = rulesFor(objects, 'admission').filter((r) => r.ports?.some((p) => p.port === 9443));
      expect(webhook, preset).toEqual([
        {
          ports: [{ port: 9443, protocol: 'TCP' }],
          from: [{ ipBlock: { cidr: 'fd00:10::/64' } }, { ipBlock: { cidr: '172.18.0.0/16' } }],
        },
      ]);
    }
  });

  it('admit the webhook from anywhere, on its port only, when both CIDRs and peers are set empty', () => {
    const result = helm([
      'template',
      RELEASE,
      CHART_DIR,
      '--set-json',
      'networkPolicy.apiServer={"cidrs":[],"peers":[]}',
    ]);
    expect(result.stderr).toBe('');
    const webhook = rulesFor(parseObjects(result.stdout), 'admission').filter((r) =>
      r.ports?.some((p) => p.port === 9443),
    );
    expect(webhook).toEqual([{ ports: [{ port: 9443, protocol: 'TCP' }] }]);
  });

  it('take the monitoring selectors from the values', () => {
    const objects = renderChart('ipv6', {
      release: RELEASE,
      namespace: NAMESPACE,
      set: {
        'networkPolicy.monitoring.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name': 'observability',
        'networkPolicy.monitoring.podSelector.matchLabels.app': 'prometheus',
      },
    });
    expect(rulesFor(objects, 'gardenlet')).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } },
            podSelector: { matchLabels: { app: 'prometheus' } },
          },
        ],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it('let the peers of dnsQueriesFrom query the DNS server too', () => {
    const result = helm([
      'template',
      RELEASE,
      CHART_DIR,
      '--set-json',
      'networkPolicy.dnsQueriesFrom=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"kube-system"}}}]',
    ]);
    expect(result.stderr).toBe('');
    expect(rulesFor(parseObjects(result.stdout), 'dns-server').flatMap((r) => r.from ?? [{}])).toEqual([
      { podSelector: { matchLabels: podSelectorLabels('dns-local') } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
    ]);
  });

  it('are left out with networkPolicy.enabled=false, and with the components they protect', () => {
    expect(policiesOf(renderChart('ipv6', { set: { 'networkPolicy.enabled': 'false' } }))).toEqual([]);
    const without = renderChart('ipv6', {
      set: { 'admission.enabled': 'false', 'dnsServer.enabled': 'false', 'dns.server': '[fd00::53]:53' },
    });
    expect(
      policiesOf(without)
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['default-deny', 'metrics'].map(nameOf));
  });

  it('give no PodDisruptionBudget to a single webhook replica (it would block every drain)', () => {
    expect(ofKind(renderChart('ipv6', { set: { 'admission.replicas': '1' } }), 'PodDisruptionBudget')).toEqual([]);
    expect(ofKind(renderChart('ipv6', { set: { 'admission.enabled': 'false' } }), 'PodDisruptionBudget')).toEqual([]);
  });
});
