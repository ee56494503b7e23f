/**
 * The admissionregistration.k8s.io/v1 objects that make an API server call this webhook for Shoots, Seeds,
 * CloudProfiles, Networks and DNSRecords, and how to put them into (and take them out of) a cluster.
 */
import { isIPv6 } from 'node:net';
import type {
  V1LabelSelector,
  V1MutatingWebhookConfiguration,
  V1RuleWithOperations,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { CloudProfiles, DNSRecords, Networks, Seeds, Shoots } from '../apis/registry.js';
import type { ResourceClient } from '../runtime/client.js';
import { Refs, type ResourceRef } from '../apis/refs.js';

/** Name of both configurations, unless the caller picks another (tests give each run its own). */
export const WEBHOOK_CONFIGURATION_NAME = 'gardener-ipv6';
export const VALIDATING_WEBHOOK_NAME = 'validate.gardener-ipv6.gardener.cloud';
export const MUTATING_WEBHOOK_NAME = 'default.gardener-ipv6.gardener.cloud';
/** Paths the webhook server serves. */
export const WEBHOOK_PATHS = {
  validate: '/validate',
  mutate: '/mutate',
  seedRestriction: '/seed-restriction',
} as const;
export const SEED_RESTRICTION_WEBHOOK_NAME = 'seed-restriction.gardener-ipv6.gardener.cloud';
/** The API server waits this long for an answer (its maximum is 30). */
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** Field manager of server-side apply. */
export const FIELD_MANAGER = 'gardener-ipv6';

export const WebhookConfigurationRefs = {
  validating: Refs.validatingWebhookConfiguration,
  mutating: Refs.mutatingWebhookConfiguration,
} as const satisfies Record<string, ResourceRef>;

export interface WebhookServiceReference {
  readonly name: string;
  readonly namespace: string;
  /** @default 443 */
  readonly port?: number;
}

export interface WebhookConfigurationOptions {
  /** PEM of the CA that signed the webhook server's certificate (base64-encoded into `caBundle` here). */
  readonly caBundle: string | Buffer;
  /** Reach the webhook through a Service (in-cluster deployment). Exactly one of `service` and `url`. */
  readonly service?: WebhookServiceReference;
  /**
   * Reach the webhook at this base URL, e.g. `https://[::1]:8443` (see {@link webhookBaseURL}); the paths
   * `/validate` and `/mutate` are appended. Exactly one of `service` and `url`.
   */
  readonly url?: string;
  /** @default 'Fail' */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** @default {@link WEBHOOK_CONFIGURATION_NAME} */
  readonly name?: string;
  /** Only objects in matching namespaces (cluster-scoped Seeds are always sent). */
  readonly namespaceSelector?: V1LabelSelector;
  /** Only objects with matching labels. */
  readonly objectSelector?: V1LabelSelector;
  /** @default {@link DEFAULT_TIMEOUT_SECONDS} */
  readonly timeoutSeconds?: number;
}

export interface WebhookConfigurations {
  readonly validating: V1ValidatingWebhookConfiguration;
  readonly mutating: V1MutatingWebhookConfiguration;
}

/** `https://host:port`, with an IPv6 host in brackets (`https://[::1]:8443`). */
export function webhookBaseURL(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return `https://${isIPv6(bare) ? `[${bare}]` : bare}:${port}`;
}

/** Main resources only: status updates are not ours to judge. */
function rules(): V1RuleWithOperations[] {
  const operations = ['CREATE', 'UPDATE'];
  return [
    {
      apiGroups: [Shoots.group],
      apiVersions: [Shoots.version],
      resources: [Shoots.plural, Seeds.plural, CloudProfiles.plural],
      operations,
      scope: '*',
    },
    {
      apiGroups: [Networks.group],
      apiVersions: [Networks.version],
      resources: [Networks.plural, DNSRecords.plural],
      operations,
      scope: '*',
    },
  ];
}

/** What a gardenlet writes in the garden: the seed restriction judges these for gardenlets' credentials. */
function seedRestrictionRules(): V1RuleWithOperations[] {
  const operations = ['CREATE', 'UPDATE', 'DELETE'];
  return [
    {
      apiGroups: [Shoots.group],
      apiVersions: [Shoots.version],
      resources: [Shoots.plural, `${Shoots.plural}/*`, Seeds.plural, `${Seeds.plural}/*`, 'internalsecrets'],
      operations,
      scope: '*',
    },
    { apiGroups: ['coordination.k8s.io'], apiVersions: ['v1'], resources: ['leases'], operations, scope: 'Namespaced' },
    { apiGroups: [''], apiVersions: ['v1'], resources: ['secrets', 'configmaps'], operations, scope: 'Namespaced' },
  ];
}

/**
 * The API server calls the validating webhook for creates and for updates that change the spec only: it admits every
 * update that leaves the spec alone (review.ts: an object that became invalid under newer rules must still lose its
 * finalizer), so the gardenlet's finalizer, label and annotation writes need no review. Where CEL can't tell the two
 * specs equal (a null beside an absent field, no spec), the webhook is called and decides as before.
 */
export const SPEC_CHANGED_MATCH_CONDITION = {
  name: 'spec-changed',
  expression:
    "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
} as const;

/** The API server calls the seed restriction for gardenlets' garden credentials only. */
export const SEED_RESTRICTION_MATCH_CONDITION = {
  name: 'gardenlets-only',
  expression: "request.userInfo.groups.exists(g, g == 'gardener.cloud:system:seeds')",
} as const;

function clientConfig(opts: WebhookConfigurationOptions, path: string) {
  const caBundle = Buffer.from(opts.caBundle).toString('base64');
  if (opts.service) {
    const { name, namespace, port = 443 } = opts.service;
    return { caBundle, service: { name, namespace, path, port } };
  }
  return { caBundle, url: `${opts.url!.replace(/\/+$/, '')}${path}` };
}

function checkOptions(opts: WebhookConfigurationOptions): void {
  if ((opts.service === undefined) === (opts.url === undefined)) {
    throw new Error('webhook configuration: exactly one of service and url must be given');
  }
  if (opts.url !== undefined) {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      throw new Error(`webhook configuration: url ${JSON.stringify(opts.url)} is not a URL`);
    }
    // The API server's own rules for clientConfig.url.
    if (url.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '') {
      throw new Error(`webhook configuration: url ${JSON.stringify(opts.url)} must be https without query or user`);
    }
  }
  if (Buffer.from(opts.caBundle).toString().includes('-----BEGIN CERTIFICATE-----') === false) {
    throw new Error('webhook configuration: caBundle must be a PEM certificate');
  }
}

/**
 * The validating and the mutating configuration of the webhook, named alike. Deterministic: the same options give
 * the same objects. Throws when the options can't make a valid configuration.
 */
export function desiredWebhookConfigurations(opts: WebhookConfigurationOptions): WebhookConfigurations {
  checkOptions(opts);
  const name = opts.name ?? WEBHOOK_CONFIGURATION_NAME;
  const metadata = {
    name,
    labels: { 'app.kubernetes.io/name': 'gardener-ipv6', 'app.kubernetes.io/component': 'admission' },
  };
  const common = {
    admissionReviewVersions: ['v1'],
    failurePolicy: opts.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    ...(opts.namespaceSelector ? { namespaceSelector: opts.namespaceSelector } : {}),
    ...(opts.objectSelector ? { objectSelector: opts.objectSelector } : {}),
    rules: rules(),
    sideEffects: 'None',
    timeoutSeconds: opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
  };
  return {
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata,
      webhooks: [
        {
          name: VALIDATING_WEBHOOK_NAME,
          clientConfig: clientConfig(opts, WEBHOOK_PATHS.validate),
          ...common,
          matchConditions: [{ ...SPEC_CHANGED_MATCH_CONDITION }],
        },
        {
          name: SEED_RESTRICTION_WEBHOOK_NAME,
          clientConfig: clientConfig(opts, WEBHOOK_PATHS.seedRestriction),
          admissionReviewVersions: ['v1'],
          // Whatever the other webhooks' policy: a gardenlet's write the check can't judge is refused.
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          matchConditions: [{ ...SEED_RESTRICTION_MATCH_CONDITION }],
          rules: seedRestrictionRules(),
          sideEffects: 'None',
          timeoutSeconds: opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
        },
      ],
    },
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: structuredClone(metadata),
      webhooks: [
        {
          name: MUTATING_WEBHOOK_NAME,
          clientConfig: clientConfig(opts, WEBHOOK_PATHS.mutate),
          ...structuredClone(common),
          // Defaulting is idempotent: run again when a later webhook changed the object.
          reinvocationPolicy: 'IfNeeded',
        },
      ],
    },
  };
}

/**
 * Creates or updates both configurations by server-side apply (forcing ownership: these objects are ours alone).
 * The mutating one goes first, so that no object is validated without having been defaulted.
 */
export async function deployWebhookConfigurations(
  client: Pick<ResourceClient, 'apply'>,
  configs: WebhookConfigurations,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const call = { fieldManager: FIELD_MANAGER, force: true, ...(opts.signal ? { signal: opts.signal } : {}) };
  await client.apply(WebhookConfigurationRefs.mutating, withName(configs.mutating), call);
  await client.apply(WebhookConfigurationRefs.validating, withName(configs.validating), call);
}

/** Deletes both configurations of that name; missing ones are fine. Validating first, the mirror of deploy. */
export async function destroyWebhookConfigurations(
  client: Pick<ResourceClient, 'delete'>,
  name: string = WEBHOOK_CONFIGURATION_NAME,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const call = opts.signal ? { signal: opts.signal } : {};
  await client.delete(WebhookConfigurationRefs.validating, name, undefined, call);
  await client.delete(WebhookConfigurationRefs.mutating, name, undefined, call);
}

function withName<T extends { metadata?: { name?: string } }>(obj: T): T & { metadata: { name: string } } {
  if (!obj.metadata?.name) throw new Error('webhook configuration without metadata.name');
  return obj as T & { metadata: { name: string } };
}
