import { describe, expect, it, vi } from 'vitest';
import {
  deployWebhookConfigurations,
  desiredWebhookConfigurations,
  destroyWebhookConfigurations,
  webhookBaseURL,
  WebhookConfigurationRefs,
} from '../../src/admission/webhook-configurations.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
const CA_BASE64 = Buffer.from(CA).toString('base64');

const RULES = [
  {
    apiGroups: ['core.gardener.cloud'],
    apiVersions: ['v1beta1'],
    resources: ['shoots', 'seeds', 'cloudprofiles'],
    operations: ['CREATE', 'UPDATE'],
    scope: '*',
  },
  {
    apiGroups: ['extensions.gardener.cloud'],
    apiVersions: ['v1alpha1'],
    resources: ['networks', 'dnsrecords'],
    operations: ['CREATE', 'UPDATE'],
    scope: '*',
  },
];

describe('desiredWebhookConfigurations', () => {
  it('points both webhooks at a URL, with the IPv6 host bracketed', () => {
    const configs = desiredWebhookConfigurations({ caBundle: CA, url: webhookBaseURL('::1', 9443) });
    const common = {
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      rules: RULES,
      sideEffects: 'None',
      timeoutSeconds: 10,
    };
    const metadata = {
      name: 'gardener-ipv6',
      labels: { 'app.kubernetes.io/name': 'gardener-ipv6', 'app.kubernetes.io/component': 'admission' },
    };
    expect(configs).toEqual({
      validating: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata,
        webhooks: [
          {
            name: 'validate.gardener-ipv6.gardener.cloud',
            clientConfig: { caBundle: CA_BASE64, url: 'https://[::1]:9443/validate' },
            ...common,
            // Updates that leave the spec alone are admitted without a review: the API server need not call it.
            matchConditions: [
              {
                name: 'spec-changed',
                expression:
                  "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || " +
                  'object.spec != oldObject.spec',
              },
            ],
          },
          {
            name: 'seed-restriction.gardener-ipv6.gardener.cloud',
            clientConfig: { caBundle: CA_BASE64, url: 'https://[::1]:9443/seed-restriction' },
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Fail',
            matchPolicy: 'Equivalent',
            matchConditions: [
              {
                name: 'gardenlets-only',
                expression: "request.userInfo.groups.exists(g, g == 'gardener.cloud:system:seeds')",
              },
            ],
            rules: [
              {
                apiGroups: ['core.gardener.cloud'],
                apiVersions: ['v1beta1'],
                resources: ['shoots', 'shoots/*', 'seeds', 'seeds/*', 'internalsecrets'],
                operations: ['CREATE', 'UPDATE', 'DELETE'],
                scope: '*',
              },
              {
                apiGroups: ['coordination.k8s.io'],
                apiVersions: ['v1'],
                resources: ['leases'],
                operations: ['CREATE', 'UPDATE', 'DELETE'],
                scope: 'Namespaced',
              },
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                resources: ['secrets', 'configmaps'],
                operations: ['CREATE', 'UPDATE', 'DELETE'],
                scope: 'Namespaced',
              },
            ],
            sideEffects: 'None',
            timeoutSeconds: 10,
          },
        ],
      },
      mutating: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata,
        webhooks: [
          {
            name: 'default.gardener-ipv6.gardener.cloud',
            clientConfig: { caBundle: CA_BASE64, url: 'https://[::1]:9443/mutate' },
            ...common,
            reinvocationPolicy: 'IfNeeded',
          },
        ],
      },
    });
  });

  it('points both webhooks at a service, with name, selectors and failure policy as given', () => {
    const configs = desiredWebhookConfigurations({
      caBundle: Buffer.from(CA),
      service: { name: 'gardener-ipv6-admission', namespace: 'garden' },
      failurePolicy: 'Ignore',
      name: 'gardener-ipv6-test',
      objectSelector: { matchLabels: { run: 'a' } },
      namespaceSelector: { matchLabels: { ns: 'b' } },
      timeoutSeconds: 5,
    });
    expect(configs.validating.metadata?.name).toBe('gardener-ipv6-test');
    expect(configs.mutating.metadata?.name).toBe('gardener-ipv6-test');
    expect(configs.validating.webhooks?.[0]).toMatchObject({
      clientConfig: {
        caBundle: CA_BASE64,
        service: { name: 'gardener-ipv6-admission', namespace: 'garden', path: '/validate', port: 443 },
      },
      failurePolicy: 'Ignore',
      objectSelector: { matchLabels: { run: 'a' } },
      namespaceSelector: { matchLabels: { ns: 'b' } },
      timeoutSeconds: 5,
    });
    expect(configs.mutating.webhooks?.[0]?.clientConfig.service?.path).toBe('/mutate');
    // The seed restriction is judged for gardenlets everywhere, and refused when it can't be.
    expect(configs.validating.webhooks?.[1]).toMatchObject({
      clientConfig: { service: { path: '/seed-restriction' } },
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
    });
    expect(configs.validating.webhooks?.[1]).not.toHaveProperty('objectSelector');
    expect(configs.mutating.webhooks?.[0]?.clientConfig.url).toBeUndefined();
  });

  it('is deterministic and returns objects that share nothing', () => {
    const opts = { caBundle: CA, url: 'https://[fd00::1]:8443/' };
    const a = desiredWebhookConfigurations(opts);
    expect(desiredWebhookConfigurations(opts)).toEqual(a);
    expect(a.mutating.webhooks?.[0]?.clientConfig.url).toBe('https://[fd00::1]:8443/mutate');
    a.mutating.metadata!.labels!.x = 'y';
    a.mutating.webhooks![0]!.rules![0]!.resources!.push('x');
    expect(a.validating.metadata?.labels?.x).toBeUndefined();
    expect(a.validating.webhooks?.[0]?.rules?.[0]?.resources).toEqual(['shoots', 'seeds', 'cloudprofiles']);
  });

  it.each([
    ['neither service nor url', { caBundle: CA }, /exactly one of service and url/],
    [
      'both service and url',
      { caBundle: CA, url: 'https://[::1]:1', service: { name: 'a', namespace: 'b' } },
      /exactly one/,
    ],
    ['an http url', { caBundle: CA, url: 'http://[::1]:1' }, /must be https/],
    ['a url with a query', { caBundle: CA, url: 'https://[::1]:1/?a=b' }, /must be https/],
    ['an unbracketed IPv6 url', { caBundle: CA, url: 'https://::1:443' }, /is not a URL/],
    ['a caBundle that is not PEM', { caBundle: CA_BASE64, url: 'https://[::1]:1' }, /PEM/],
  ])('refuses %s', (_name, opts, message) => {
    expect(() => desiredWebhookConfigurations(opts)).toThrow(message);
  });
});

describe('webhookBaseURL', () => {
  it.each([
    ['::1', 443, 'https://[::1]:443'],
    ['[::1]', 443, 'https://[::1]:443'],
    ['fd00:10::5', 9443, 'https://[fd00:10::5]:9443'],
    ['127.0.0.1', 9443, 'https://127.0.0.1:9443'],
    ['webhook.garden.svc', 443, 'https://webhook.garden.svc:443'],
  ])('%s:%d → %s', (host, port, url) => {
    expect(webhookBaseURL(host, port)).toBe(url);
  });
});

describe('deploy and destroy', () => {
  it('applies the mutating configuration first, forcing ownership, and deletes both by name', async () => {
    const configs = desiredWebhookConfigurations({ caBundle: CA, url: 'https://[::1]:1' });
    const calls: string[] = [];
    const client = {
      apply: vi.fn(async (ref: { kind: string }, obj: unknown) => {
        calls.push(`apply ${ref.kind}`);
        return obj;
      }),
      delete: vi.fn(async (ref: { kind: string }, name: string) => {
        calls.push(`delete ${ref.kind} ${name}`);
        return true;
      }),
    };
    await deployWebhookConfigurations(client as never, configs);
    expect(client.apply).toHaveBeenCalledWith(WebhookConfigurationRefs.mutating, configs.mutating, {
      fieldManager: 'gardener-ipv6',
      force: true,
    });
    await destroyWebhookConfigurations(client as never, 'gardener-ipv6');
    expect(calls).toEqual([
      'apply MutatingWebhookConfiguration',
      'apply ValidatingWebhookConfiguration',
      'delete ValidatingWebhookConfiguration gardener-ipv6',
      'delete MutatingWebhookConfiguration gardener-ipv6',
    ]);
  });
});
