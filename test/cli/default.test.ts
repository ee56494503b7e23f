import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cli, tempFile } from '../support/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('gardener-ipv6 default', () => {
  it('prints the defaulted objects as a YAML stream, keeping unknown fields', async () => {
    const file = tempFile(
      'in.yaml',
      `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: a, namespace: garden-x}
spec:
  maintenance: {timeWindow: {begin: 220000+0100}}
  provider: {type: local, workers: [{name: w, kubernetes: {kubelet: {maxPods: 250}}}]}
  networking: {type: calico}
---
apiVersion: extensions.gardener.cloud/v1alpha1
kind: DNSRecord
metadata: {name: r}
spec: {type: local, secretRef: {name: s}, name: api.example.com, recordType: A, values: [1.2.3.4]}
`,
    );
    const run = await cli(['default', '-f', file]);
    expect(run.code).toBe(0);
    const [shoot, record] = parseAllDocuments(run.stdout).map((d) => d.toJS());
    expect(shoot.spec.networking.ipFamilies).toEqual(['IPv4']);
    expect(shoot.spec.kubernetes.kubeControllerManager).toEqual({ nodeCIDRMaskSize: 23 });
    expect(shoot.spec.maintenance).toEqual({ timeWindow: { begin: '220000+0100' } });
    expect(record.spec.ttl).toBe(120);
  });

  it('defaults an IPv6 shoot to one /64 per node', async () => {
    const run = await cli(['default', '-f', join(ROOT, 'examples', 'shoot-ipv6.yaml')]);
    expect(run.code).toBe(0);
    const [shoot] = parseAllDocuments(run.stdout).map((d) => d.toJS());
    expect(shoot.spec.kubernetes.kubeControllerManager).toEqual({ nodeCIDRMaskSize: 64 });
  });

  it('exits 1 with field errors when an object cannot be decoded', async () => {
    const file = tempFile(
      'bad.yaml',
      'apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: a}\nspec: {networking: {ipFamilies: IPv6}}\n',
    );
    const run = await cli(['default', '-f', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('spec.networking.ipFamilies: Invalid value: "IPv6": expected array, received string');
  });
});
