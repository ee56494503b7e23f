import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCRDFiles } from '../../src/apis/crd-files.js';
import { allCRDs, structuralViolations, toStructural, type JSONSchemaProps } from '../../src/apis/crds.js';

const CRD_DIR = join(import.meta.dirname, '..', '..', 'charts', 'gardener-ipv6', 'crds');

describe('generated CRDs', () => {
  it('match the committed files (run `npm run generate` after changing a schema)', () => {
    const generated = renderCRDFiles();
    const committed = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));
    expect(committed.sort()).toEqual([...generated.keys()].sort());
    for (const [name, text] of generated) {
      expect(readFileSync(join(CRD_DIR, name), 'utf8'), name).toBe(text);
    }
  });

  it("are the kinds docs/architecture.md lists as the chart's CRDs, all of them", () => {
    const kinds = readdirSync(CRD_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map(
        (f) => (parse(readFileSync(join(CRD_DIR, f), 'utf8')) as { spec: { names: { kind: string } } }).spec.names.kind,
      )
      .sort();
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'architecture.md'), 'utf8');
    const sentence = /The CRDs \(`charts\/gardener-ipv6\/crds\/`[^:]*:([^.]*)\./.exec(doc)?.[1];
    expect(sentence, 'the sentence on the CRDs in docs/architecture.md').toBeDefined();
    const listed = sentence!
      .split(/,|\band\b/)
      .map((k) => k.trim())
      .filter((k) => k !== '');
    expect(listed).toEqual(kinds);
  });

  it.each(allCRDs().map(({ fileName, crd }) => [fileName, crd] as const))('%s is a structural schema', (_, crd) => {
    const schema = (crd as { spec: { versions: { schema: { openAPIV3Schema: JSONSchemaProps } }[] } }).spec.versions[0]!
      .schema.openAPIV3Schema;
    expect(structuralViolations(schema)).toEqual([]);
  });

  /** Where a CRD's schema keeps unknown fields (`x-kubernetes-preserve-unknown-fields`), as JSON paths. */
  function openPaths(fileName: string): string[] {
    const crd = parse(readFileSync(join(CRD_DIR, fileName), 'utf8'));
    const paths: string[] = [];
    const walk = (node: JSONSchemaProps, path: string) => {
      if (node['x-kubernetes-preserve-unknown-fields'] === true) paths.push(path);
      for (const [name, child] of Object.entries((node.properties as Record<string, JSONSchemaProps>) ?? {})) {
        walk(child, path ? `${path}.${name}` : name);
      }
      if (node.items) walk(node.items as JSONSchemaProps, `${path}[*]`);
      if (typeof node.additionalProperties === 'object')
        walk(node.additionalProperties as JSONSchemaProps, `${path}{*}`);
    };
    walk(crd.spec.versions[0].schema.openAPIV3Schema, '');
    return paths.sort();
  }

  it('keeps unknown fields of Shoots and Seeds in their raw extensions only', () => {
    expect(openPaths('core.gardener.cloud_shoots.yaml')).toEqual([
      'spec.extensions[*].providerConfig',
      'spec.kubernetes.kubeAPIServer.admissionPlugins[*].config',
      'spec.networking.providerConfig',
      'spec.provider.controlPlaneConfig',
      'spec.provider.infrastructureConfig',
      'spec.provider.workers[*].controlPlane.backup.providerConfig',
      'spec.provider.workers[*].controlPlane.exposure.extension.providerConfig',
      'spec.provider.workers[*].cri.containerRuntimes[*].providerConfig',
      'spec.provider.workers[*].machine.image.providerConfig',
      'spec.provider.workers[*].providerConfig',
    ]);
    expect(openPaths('core.gardener.cloud_seeds.yaml')).toEqual([
      'spec.backup.providerConfig',
      'spec.extensions[*].providerConfig',
      'spec.ingress.controller.providerConfig',
      'spec.provider.providerConfig',
    ]);
    const shoot = parse(readFileSync(join(CRD_DIR, 'core.gardener.cloud_shoots.yaml'), 'utf8'));
    const spec = shoot.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.networking.properties.providerConfig).toEqual({
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(spec.properties.networking.properties.ipFamilies).toEqual({ type: 'array', items: { type: 'string' } });
  });

  it('keeps unknown fields of the extension kinds in raw extensions and status only', () => {
    const status = ['status', 'status.providerStatus', 'status.state'];
    expect(openPaths('extensions.gardener.cloud_networks.yaml')).toEqual(['spec.providerConfig', ...status]);
    expect(openPaths('extensions.gardener.cloud_dnsrecords.yaml')).toEqual(['spec.providerConfig', ...status]);
    expect(openPaths('extensions.gardener.cloud_operatingsystemconfigs.yaml')).toEqual([
      'spec.criConfig',
      'spec.inPlaceUpdates',
      'spec.providerConfig',
      ...status,
    ]);
    expect(openPaths('extensions.gardener.cloud_workers.yaml')).toEqual([
      'spec.infrastructureProviderStatus',
      'spec.pools[*].providerConfig',
      'spec.providerConfig',
      'status',
      'status.machineDeployments[*]',
      'status.providerStatus',
      'status.state',
    ]);
    expect(openPaths('extensions.gardener.cloud_clusters.yaml')).toEqual([
      'spec.cloudProfile',
      'spec.seed',
      'spec.shoot',
    ]);
  });

  it('models the JSON names and types Gardener uses for the extension fields', () => {
    const network = allCRDs().find((c) => c.fileName === 'extensions.gardener.cloud_networks.yaml')!.crd as {
      spec: { scope: string; versions: { subresources: unknown; schema: { openAPIV3Schema: JSONSchemaProps } }[] };
    };
    const version = network.spec.versions[0]!;
    const spec = (version.schema.openAPIV3Schema.properties as Record<string, JSONSchemaProps>).spec!;
    const props = spec.properties as Record<string, JSONSchemaProps>;
    expect(network.spec.scope).toBe('Namespaced');
    expect(version.subresources).toEqual({ status: {} });
    expect(props.podCIDR).toEqual({ type: 'string' });
    expect(props.serviceCIDR).toEqual({ type: 'string' });
    const seed = allCRDs().find((c) => c.fileName === 'core.gardener.cloud_seeds.yaml')!.crd as {
      spec: { scope: string };
    };
    expect(seed.spec.scope).toBe('Cluster');
  });

  it('has the Worker with its status subresource, int-or-strings and byte fields as Gardener has them', () => {
    const worker = allCRDs().find((c) => c.fileName === 'extensions.gardener.cloud_workers.yaml')!.crd as {
      metadata: { name: string };
      spec: {
        scope: string;
        names: { kind: string; plural: string };
        versions: { subresources: unknown; schema: { openAPIV3Schema: JSONSchemaProps } }[];
      };
    };
    const version = worker.spec.versions[0]!;
    expect(worker.metadata.name).toBe('workers.extensions.gardener.cloud');
    expect(worker.spec.names).toMatchObject({ kind: 'Worker', plural: 'workers' });
    expect(worker.spec.scope).toBe('Namespaced');
    expect(version.subresources).toEqual({ status: {} });
    const root = version.schema.openAPIV3Schema.properties as Record<string, JSONSchemaProps>;
    const spec = root.spec!.properties as Record<string, JSONSchemaProps>;
    expect(spec.sshPublicKey).toEqual({ type: 'string', format: 'byte' });
    expect(spec.infrastructureProviderStatus).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    const pool = (spec.pools!.items as JSONSchemaProps).properties as Record<string, JSONSchemaProps>;
    expect(pool.maxSurge).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(pool.maxUnavailable).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(pool.minimum).toEqual({ type: 'integer', format: 'int32' });
    const status = root.status!.properties as Record<string, JSONSchemaProps>;
    expect((status.machineDeployments!.items as JSONSchemaProps).required).toEqual(['name', 'minimum', 'maximum']);
  });
});

describe('structuralViolations', () => {
  it('reports what the API server rejects', () => {
    const bad: JSONSchemaProps = {
      type: 'object',
      properties: {
        a: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        b: { type: 'string', pattern: '^(?!x)' },
        c: {},
        d: { type: 'object', additionalProperties: false },
      },
    };
    expect(structuralViolations(bad)).toEqual([
      '$.a: anyOf is not allowed',
      '$.a: type is required',
      "$.b: pattern uses a lookaround, which Go's regexp engine lacks",
      '$.c: type is required',
      '$.d: additionalProperties: false is not allowed',
    ]);
  });

  it('turns an int-or-string union into the marker alone', () => {
    expect(
      toStructural({
        anyOf: [{ type: 'integer', minimum: -2147483648, maximum: 2147483647 }, { type: 'string' }],
        'x-kubernetes-int-or-string': true,
      }),
    ).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  it('turns loose objects into preserve-unknown-fields and drops safe-integer bounds', () => {
    expect(
      toStructural({
        type: 'object',
        properties: { n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 } },
        additionalProperties: {},
      }),
    ).toEqual({
      type: 'object',
      properties: { n: { type: 'integer', format: 'int64' } },
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });
});
