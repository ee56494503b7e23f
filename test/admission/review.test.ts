import jsonpatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it, vi } from 'vitest';
import { admit } from '../../src/apis/admission.js';
import { invalidStatus } from '../../src/apis/field/index.js';
import {
  answerAdmissionReview,
  handleAdmissionReview,
  type AdmissionContext,
  type AdmissionMode,
  type AdmissionRequest,
  type AdmissionReviewResponse,
} from '../../src/admission/review.js';
import { extensionAdmission } from '../../src/app/extension-admission.js';
import { decodeReviewBody } from '../../src/admission/decode.js';
import { isPlainJSON } from '../../src/apis/meta/plain-json.js';
import type { FeatureGates } from '../../src/featuregate/featuregate.js';
import { parseAllDocuments } from 'yaml';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import {
  cloudProfileObject,
  dnsRecordObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  networkObject,
  seedIPv6Networks,
  seedObject,
  shootObject,
} from '../fixtures/objects.js';
import { cli, tempFile } from '../support/cli.js';

type Json = Record<string, unknown>;

const json = (o: unknown): Json => structuredClone(o) as Json;

const SEEDS: Record<string, Json> = {
  'seed-a': json(seedObject()),
  'seed-v6': json(seedObject({}, { name: 'seed-v6', base: seedIPv6Networks })),
  broken: { apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Seed', metadata: { name: 'broken' }, spec: 'nope' },
};

function context(gates: FeatureGates = gateSets.none, seeds: Record<string, unknown> = SEEDS): AdmissionContext {
  return { gates, lookupSeed: vi.fn(async (name: string) => seeds[name]), extensionAdmission: extensionAdmission() };
}

function request(object: unknown, opts: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { uid: 'b7a4c9e2-0000-4000-8000-000000000001', operation: 'CREATE', object, ...opts };
}

function review(
  mode: AdmissionMode,
  req: AdmissionRequest,
  ctx: AdmissionContext = context(),
): Promise<AdmissionReviewResponse> {
  return handleAdmissionReview({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }, ctx, mode);
}

function patchOf(answer: AdmissionReviewResponse): Operation[] {
  const { patch, patchType } = answer.response;
  if (patch === undefined) return [];
  expect(patchType).toBe('JSONPatch');
  return JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[];
}

/** Applies the answer's patch to `object` as the API server would (strictly validated). */
function patched(object: unknown, answer: AdmissionReviewResponse): Json {
  return jsonpatch.applyPatch(structuredClone(object), patchOf(answer), true, false).newDocument as Json;
}

/** `gardener-ipv6 validate -o json` of the object (and old object / seed). */
async function cliStatus(object: unknown, opts: { old?: unknown; seed?: unknown; gates?: string } = {}) {
  const args = ['validate', '-f', tempFile('object.json', JSON.stringify(object)), '-o', 'json'];
  if (opts.old !== undefined) args.push('--old', tempFile('old.json', JSON.stringify(opts.old)));
  if (opts.seed !== undefined) args.push('--seed', tempFile('seed.json', JSON.stringify(opts.seed)));
  if (opts.gates !== undefined) args.push('--feature-gates', opts.gates);
  const run = await cli(args);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as unknown;
}

const VALID: Record<string, () => Json> = {
  Shoot: () => json(ipv4ShootObject()),
  Seed: () => json(seedObject()),
  Network: () => json(networkObject()),
  DNSRecord: () => json(dnsRecordObject()),
};

describe('validating webhook', () => {
  it.each(Object.keys(VALID))('allows a valid %s on create and on an unchanged update', async (kind) => {
    const object = VALID[kind]!();
    const created = await review('validate', request(object));
    expect(created).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'b7a4c9e2-0000-4000-8000-000000000001', allowed: true },
    });
    const updated = await review('validate', request(object, { operation: 'UPDATE', oldObject: object }));
    expect(updated.response.allowed).toBe(true);
  });

  it('rejects an IPv6 shoot with the gate off, with the Status `validate -o json` prints', async () => {
    const shoot = ipv6ShootObject();
    const answer = await review('validate', request(shoot));
    expect(answer.response.allowed).toBe(false);
    const status = answer.response.status!;
    expect(status).toEqual(await cliStatus(shoot));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid', status: 'Failure' });
    expect(status.message).toMatch(/^Shoot\.core\.gardener\.cloud "crazy-botany" is invalid: /);
    expect(status.details?.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'spec.networking.ipFamilies',
      message: 'Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
    });
  });

  it('rejects a calico shoot whose providerConfig does not fit its families, as validate and render do', async () => {
    const shoot = ipv6ShootObject({ providerConfig: { ipam: { type: 'calico-ipam' }, typha: { enabled: 'no' } } });
    const answer = await review('validate', request(shoot), context(gateSets.ipv6));
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status).toEqual(await cliStatus(shoot, { gates: 'IPv6SingleStack=true' }));
    expect(answer.response.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.providerConfig.typha.enabled',
        message: 'Invalid value: "no": must be of type boolean',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.providerConfig.ipam.type',
        message:
          'Invalid value: "calico-ipam": IPAM type "calico-ipam" is only supported for IPv4 single-stack shoots, use "host-local" instead',
      },
    ]);
    const typical = ipv6ShootObject({
      providerConfig: { typha: { enabled: false }, overlay: { enabled: false }, snatToUpstreamDNS: { enabled: true } },
    });
    expect((await review('validate', request(typical), context(gateSets.ipv6))).response.allowed).toBe(true);
  });

  it('allows the IPv6 shoot with the gate on', async () => {
    const answer = await review('validate', request(ipv6ShootObject()), context(gateSets.ipv6));
    expect(answer.response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it.each([
    ['Seed', seedObject({ pods: 'fd00::/56' }), 'spec.networks.pods'],
    ['Network', networkObject({ podCIDR: 'not-a-cidr' }), 'spec.podCIDR'],
    ['DNSRecord', dnsRecordObject({ recordType: 'AAAA', values: ['203.0.113.10'] }), 'spec.values[0]'],
  ])('rejects an invalid %s with the same Status as the CLI', async (_kind, object, field) => {
    const answer = await review('validate', request(object));
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status).toEqual(await cliStatus(object));
    expect(answer.response.status?.details?.causes?.map((c) => c.field)).toContain(field);
  });

  it('validates updates against the old object: pods are immutable', async () => {
    const old = ipv4ShootObject();
    const changed = ipv4ShootObject({ pods: '100.112.0.0/12' });
    const answer = await review('validate', request(changed, { operation: 'UPDATE', oldObject: old }));
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status).toEqual(await cliStatus(changed, { old }));
    expect(answer.response.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.pods',
        message: 'Invalid value: "100.112.0.0/12": field is immutable',
      },
    ]);
  });

  it('judges an update whose stored object no longer decodes by the create rules', async () => {
    const old = { ...ipv4ShootObject(), spec: 'garbage' };
    expect(
      (await review('validate', request(ipv4ShootObject(), { operation: 'UPDATE', oldObject: old }))).response.allowed,
    ).toBe(true);
    const invalidNew = ipv6ShootObject();
    const answer = await review('validate', request(invalidNew, { operation: 'UPDATE', oldObject: old }));
    expect(answer.response.status).toEqual(await cliStatus(invalidNew));
  });

  it('admits an update that leaves the spec alone, even of an object the rules now reject (finalizer removal)', async () => {
    const invalidNow = ipv6ShootObject({ seedName: 'gone' });
    const withFinalizer = { ...invalidNow, metadata: { ...invalidNow.metadata, finalizers: ['gardener'] } };
    const ctx = context(gateSets.none);
    const answer = await review(
      'validate',
      request(invalidNow, { operation: 'UPDATE', oldObject: withFinalizer }),
      ctx,
    );
    expect(answer.response).toEqual({ uid: expect.any(String), allowed: true });
    expect(ctx.lookupSeed).not.toHaveBeenCalled();
    // A spec change is judged as usual.
    const changed = ipv6ShootObject({ seedName: 'gone', nodes: '2001:db8:9::/64' });
    const denied = await review('validate', request(changed, { operation: 'UPDATE', oldObject: withFinalizer }), ctx);
    expect(denied.response.allowed).toBe(false);
  });

  describe('with the seed context', () => {
    it('looks up the seed of spec.seedName and validates the shoot against it', async () => {
      const ctx = context(gateSets.ipv6);
      const shoot = ipv6ShootObject({ seedName: 'seed-a' });
      const answer = await review('validate', request(shoot), ctx);
      expect(ctx.lookupSeed).toHaveBeenCalledWith('seed-a');
      expect(answer.response.status).toEqual(
        await cliStatus(shoot, { seed: SEEDS['seed-a'], gates: 'IPv6SingleStack=true' }),
      );
      expect(answer.response.status?.details?.causes).toContainEqual({
        reason: 'FieldValueForbidden',
        field: 'spec.seedName',
        message: 'Forbidden: seed "seed-a" does not support IP families [IPv6] of the shoot (seed: [IPv4])',
      });
    });

    it('takes missing pods and services from the seed before validating', async () => {
      const shoot = shootObject({ seedName: 'seed-v6', ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' });
      const answer = await review('validate', request(shoot), context(gateSets.ipv6));
      expect(answer.response).toEqual({ uid: expect.any(String), allowed: true });
      // Without a seed, pods and services stay missing.
      const unscheduled = shootObject({ ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' });
      expect((await review('validate', request(unscheduled), context(gateSets.ipv6))).response.allowed).toBe(true);
    });

    it('rejects a shoot on a seed that does not exist, with its other errors', async () => {
      const shoot = ipv6ShootObject({ seedName: 'nope' });
      const answer = await review('validate', request(shoot));
      expect(answer.response.status).toMatchObject({ code: 422, reason: 'Invalid' });
      const causes = answer.response.status?.details?.causes ?? [];
      expect(causes.map((c) => c.field)).toEqual(['spec.networking.ipFamilies', 'spec.seedName']);
      expect(causes[1]).toEqual({
        reason: 'FieldValueInvalid',
        field: 'spec.seedName',
        message: 'Invalid value: "nope": seed "nope" not found',
      });
      const expected = invalidStatus(admit({ object: shoot, gates: gateSets.none }).id, [
        ...admit({ object: shoot, gates: gateSets.none }).errors,
        { type: 'FieldValueInvalid', field: 'spec.seedName', badValue: 'nope', detail: 'seed "nope" not found' },
      ]);
      expect(answer.response.status).toEqual(expected);
    });

    it('rejects a shoot on a seed that is not a usable Seed', async () => {
      const answer = await review('validate', request(ipv4ShootObject({ seedName: 'broken' })));
      expect(answer.response.status?.details?.causes).toEqual([
        expect.objectContaining({
          field: 'spec.seedName',
          message: expect.stringMatching(/^Invalid value: "broken": seed "broken" cannot be used: /),
        }),
      ]);
    });

    it('does not look up a seed for an unscheduled shoot or other kinds', async () => {
      const ctx = context();
      await review('validate', request(ipv4ShootObject()), ctx);
      await review('validate', request(json(seedObject())), ctx);
      await review('mutate', request(dnsRecordObject()), ctx);
      expect(ctx.lookupSeed).not.toHaveBeenCalled();
    });
  });

  it('rejects a malformed object of our kinds with field causes', async () => {
    const object = { ...ipv4ShootObject(), spec: { networking: { ipFamilies: 'IPv4' } } };
    const answer = await review('validate', request(object));
    expect(answer.response.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(answer.response.status?.details?.causes?.[0]?.field).toBe('spec.networking.ipFamilies');
    expect(answer.response.status).toEqual(await cliStatus(object));
  });

  it('rejects a __proto__ label (kept by JSON.parse, dropped by decoding) with a cause naming it', async () => {
    const text = JSON.stringify(ipv4ShootObject()).replace('"metadata":{', '"metadata":{"labels":{"__proto__":"x"},');
    const answer = await review('validate', request(JSON.parse(text)));
    expect(answer.response).toMatchObject({ allowed: false, status: { code: 422, reason: 'Invalid' } });
    expect(answer.response.status?.details?.causes).toContainEqual({
      field: 'metadata.labels.__proto__',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "x": the key "__proto__" is not supported',
    });
  });
});

describe('mutating webhook', () => {
  const cases: [string, () => Json, FeatureGates][] = [
    ['Shoot (ipFamilies, kube-controller-manager)', () => json(shootObject({ pods: '100.96.0.0/11' })), gateSets.none],
    ['IPv6 Shoot', () => json(ipv6ShootObject()), gateSets.ipv6],
    ['dual-stack Shoot', () => json(shootObject({ ipFamilies: ['IPv4', 'IPv6'] })), gateSets.dual],
    ['Seed', () => ({ ...json(seedObject({ ipFamilies: undefined })) }), gateSets.none],
    ['DNSRecord', () => json(dnsRecordObject()), gateSets.none],
  ];

  it.each(cases)(
    'patches a %s into the defaulted object, and nothing more on reinvocation',
    async (_name, make, gates) => {
      const object = make();
      const ctx = context(gates);
      const answer = await review('mutate', request(object), ctx);
      expect(answer.response.allowed).toBe(true);
      expect(patchOf(answer).length).toBeGreaterThan(0);
      const result = patched(object, answer);
      expect(result).toEqual(admit({ object, gates }).object);
      expect(object).toEqual(make()); // the request object is not modified

      const again = await review('mutate', request(result), ctx);
      expect(again.response).toEqual({ uid: expect.any(String), allowed: true });
    },
  );

  it('answers with a minimal patch', async () => {
    const answer = await review('mutate', request(dnsRecordObject()));
    expect(patchOf(answer)).toEqual([{ op: 'add', path: '/spec/ttl', value: 120 }]);

    const shoot = json(ipv4ShootObject({ nodeCIDRMaskSize: 24 }));
    delete (shoot.spec as { networking: Json }).networking.ipFamilies;
    expect(patchOf(await review('mutate', request(shoot)))).toEqual([
      { op: 'add', path: '/spec/networking/ipFamilies', value: ['IPv4'] },
    ]);
  });

  it('does not patch an object that is already defaulted', async () => {
    const network = json(networkObject());
    expect((await review('mutate', request(network))).response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('fills pods and services from the shoot defaults of a known seed', async () => {
    const shoot = json(shootObject({ seedName: 'seed-v6', ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' }));
    const answer = await review('mutate', request(shoot), context(gateSets.ipv6));
    const result = patched(shoot, answer);
    expect(result).toEqual(admit({ object: shoot, seed: SEEDS['seed-v6'], gates: gateSets.ipv6 }).object);
    expect(result.spec).toMatchObject({
      networking: { pods: seedIPv6Networks.shootDefaults!.pods, services: seedIPv6Networks.shootDefaults!.services },
    });
    expect((await review('mutate', request(result), context(gateSets.ipv6))).response.patch).toBeUndefined();
  });

  it('defaults updates too', async () => {
    const old = json(ipv4ShootObject());
    const object = json(dnsRecordObject());
    const answer = await review('mutate', request(object, { operation: 'UPDATE', oldObject: old }));
    expect(patched(object, answer)).toEqual(admit({ object, gates: gateSets.none }).object);
  });

  it('leaves seed defaults out when the seed is missing or unusable', async () => {
    for (const seedName of ['nope', 'broken']) {
      const shoot = json(shootObject({ seedName }));
      const answer = await review('mutate', request(shoot));
      expect(answer.response.allowed).toBe(true);
      const result = patched(shoot, answer);
      expect((result.spec as { networking: Json }).networking.pods).toBeUndefined();
      expect(result).toEqual(admit({ object: shoot, gates: gateSets.none }).object);
    }
  });

  it('never patches metadata, and leaves null-valued keys alone', async () => {
    const shoot = json(shootObject());
    shoot.metadata = { ...(shoot.metadata as Json), creationTimestamp: null, managedFields: [{ manager: 'kubectl' }] };
    (shoot.spec as Json).dns = null;
    (shoot.spec as { kubernetes: Json }).kubernetes.kubeControllerManager = null;
    const answer = await review('mutate', request(shoot));
    const patch = patchOf(answer);
    expect(patch.every((op) => !op.path.startsWith('/metadata'))).toBe(true);
    expect(patch.filter((op) => op.op === 'remove')).toEqual([]);
    const result = patched(shoot, answer);
    expect((result.metadata as Json).creationTimestamp).toBeNull();
    expect((result.spec as Json).dns).toBeNull();
    expect((result.spec as { kubernetes: Json }).kubernetes.kubeControllerManager).toEqual({ nodeCIDRMaskSize: 24 });
    expect((await review('mutate', request(result))).response.patch).toBeUndefined();
  });

  it('replaces a null section that defaulting fills', async () => {
    const shoot = json(shootObject({ workers: 0 }));
    (shoot.spec as Json).networking = null;
    const answer = await review('mutate', request(shoot));
    expect(patchOf(answer)).toEqual([{ op: 'add', path: '/spec/networking', value: { ipFamilies: ['IPv4'] } }]);
    expect((patched(shoot, answer).spec as Json).networking).toEqual({ ipFamilies: ['IPv4'] });
  });

  it('copes with deeply nested unknown fields', async () => {
    let deep: Json = { leaf: true };
    for (let i = 0; i < 20_000; i++) deep = { nested: deep };
    const shoot = json(shootObject());
    (shoot.spec as { networking: Json }).networking.providerConfig = deep;
    const answer = await review('mutate', request(shoot));
    expect(answer.response.allowed).toBe(true);
    expect(
      patchOf(answer)
        .map((op) => op.path)
        .sort(),
    ).toEqual(['/spec/kubernetes/kubeControllerManager', '/spec/networking/ipFamilies']);
  });

  it('lets a malformed object through unchanged', async () => {
    const object = { ...json(ipv4ShootObject()), spec: { networking: { ipFamilies: 'IPv4' } } };
    expect((await review('mutate', request(object))).response).toEqual({ uid: expect.any(String), allowed: true });
  });
});

describe('not ours', () => {
  it.each<[string, AdmissionRequest]>([
    ['a ConfigMap', request({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })],
    [
      'an OperatingSystemConfig',
      request({ apiVersion: 'extensions.gardener.cloud/v1alpha1', kind: 'OperatingSystemConfig', spec: 1 }),
    ],
    ['a Shoot of another version', request({ ...ipv6ShootObject(), apiVersion: 'core.gardener.cloud/v1' })],
    ['a DELETE', request(undefined, { operation: 'DELETE', oldObject: ipv6ShootObject() })],
    ['a CONNECT', request(ipv6ShootObject(), { operation: 'CONNECT' })],
    [
      'a status update',
      request(ipv6ShootObject(), { operation: 'UPDATE', subResource: 'status', oldObject: ipv6ShootObject() }),
    ],
    ['no object', request(undefined)],
  ])('allows %s unchanged', async (_name, req) => {
    for (const mode of ['validate', 'mutate'] as const) {
      expect((await review(mode, req)).response).toEqual({ uid: req.uid, allowed: true });
    }
  });
});

describe('internal errors', () => {
  it('deny with code 500 instead of throwing, and are reported', async () => {
    const onInternalError = vi.fn();
    const ctx: AdmissionContext = {
      gates: gateSets.none,
      lookupSeed: () => Promise.reject(new Error('connection refused')),
      onInternalError,
    };
    for (const mode of ['validate', 'mutate'] as const) {
      const answer = await review(mode, request(ipv4ShootObject({ seedName: 'seed-a' })), ctx);
      expect(answer.response).toEqual({
        uid: 'b7a4c9e2-0000-4000-8000-000000000001',
        allowed: false,
        status: expect.objectContaining({ code: 500, reason: 'InternalError', status: 'Failure' }),
      });
      expect(answer.response.status?.message).toContain('connection refused');
    }
    expect(onInternalError).toHaveBeenCalledTimes(2);
  });

  it('deny a review without a request', async () => {
    const answer = await handleAdmissionReview(
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      context(),
      'validate',
    );
    expect(answer.response).toMatchObject({ uid: '', allowed: false, status: { code: 500 } });
  });
});

describe('answerAdmissionReview: in one go when the seed is at hand', () => {
  const shootOn = (seedName: string, overrides: Json = {}) => {
    const shoot = json(ipv6ShootObject());
    (shoot.spec as Json).seedName = seedName;
    return { ...shoot, ...overrides };
  };
  const reviewOf = (object: unknown) => ({
    apiVersion: 'admission.k8s.io/v1' as const,
    kind: 'AdmissionReview' as const,
    request: request(object),
  });
  const cases = [
    ['a valid shoot on its seed', shootOn('seed-v6')],
    ['a shoot on a seed that does not exist', shootOn('nowhere')],
    ['a shoot on a seed that is no Seed', shootOn('broken')],
    ['a shoot without a seed', json(ipv6ShootObject())],
  ] as const;

  for (const mode of ['validate', 'mutate'] as const) {
    it(`answers a ${mode} review synchronously from a seed lookup that returns a value, as the async path does`, async () => {
      for (const [what, object] of cases) {
        const sync: AdmissionContext = { gates: gateSets.ipv6, lookupSeed: vi.fn((name: string) => SEEDS[name]) };
        const answer = answerAdmissionReview(reviewOf(object), sync, mode);
        expect(answer, what).not.toBeInstanceOf(Promise);
        // A lookup that returns a promise: answered once it settles, with the same answer.
        const viaPromise = answerAdmissionReview(reviewOf(object), context(gateSets.ipv6), mode);
        if (what !== 'a shoot without a seed') expect(viaPromise, what).toBeInstanceOf(Promise);
        expect(answer, what).toEqual(await viaPromise);
        expect(answer, what).toEqual(await handleAdmissionReview(reviewOf(object), context(gateSets.ipv6), mode));
      }
    });
  }

  it('answers through a native promise when the seed lookup returns some other thenable', async () => {
    const thenable = { then: (resolve: (seed: unknown) => void) => setImmediate(() => resolve(SEEDS['seed-v6'])) };
    const answer = answerAdmissionReview(
      reviewOf(shootOn('seed-v6')),
      { gates: gateSets.ipv6, lookupSeed: () => thenable as unknown as Promise<unknown> },
      'validate',
    );
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual(
      await handleAdmissionReview(reviewOf(shootOn('seed-v6')), context(gateSets.ipv6), 'validate'),
    );
  });

  it('turns a seed lookup that throws, or rejects, into a 500 denial naming the error', async () => {
    const boom = new Error('etcdserver: request timed out');
    for (const lookupSeed of [
      () => {
        throw boom;
      },
      () => Promise.reject(boom),
    ]) {
      const onInternalError = vi.fn();
      const answer = await answerAdmissionReview(
        reviewOf(shootOn('seed-v6')),
        { gates: gateSets.ipv6, lookupSeed, onInternalError },
        'validate',
      );
      expect(answer.response).toMatchObject({
        allowed: false,
        status: { code: 500, reason: 'InternalError', message: expect.stringContaining(boom.message) as string },
      });
      expect(onInternalError).toHaveBeenCalledWith(boom, 'b7a4c9e2-0000-4000-8000-000000000001');
    }
  });
});

describe('with the CloudProfile context', () => {
  /** The fixture's CloudProfile without its expired versions, which the API server would not create. */
  const valid = cloudProfileObject();
  valid.spec.kubernetes!.versions = valid.spec.kubernetes!.versions!.filter((v) => v.expirationDate === undefined);
  valid.spec.machineImages![0]!.versions = valid.spec.machineImages![0]!.versions.filter((v) => !v.expirationDate);
  const PROFILES: Record<string, unknown> = { local: json(valid) };
  /** Reads CloudProfiles as the runtime's cache does: a hit is the object itself, a miss (an unknown name) a promise. */
  const withProfiles = (gates: FeatureGates = gateSets.none): AdmissionContext => ({
    ...context(gates),
    lookupCloudProfile: vi.fn((name: string) => PROFILES[name] ?? Promise.resolve(undefined)),
  });
  /** A shoot of the profile without a version and a machine image, on no seed. */
  const profiledShoot = (change: (s: Shoot) => void = () => {}): Json => {
    const shoot = ipv4ShootObject();
    shoot.spec.kubernetes = {};
    change(shoot);
    return json(shoot);
  };

  it('defaults the version and the machine images in the mutating webhook, as validate does from its input', async () => {
    const shoot = profiledShoot();
    const answer = await review('mutate', request(shoot), withProfiles());
    expect(patchOf(answer)).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/spec/provider/workers/0/machine/image', value: { name: 'local', version: '1.0.0' } },
        { op: 'add', path: '/spec/kubernetes/version', value: '1.37.1' },
      ]),
    );
    // The CLI with the CloudProfile before the Shoot in its input defaults the same.
    const run = await cli([
      'default',
      '-f',
      tempFile('profile.json', JSON.stringify(PROFILES.local)),
      '-f',
      tempFile('shoot.json', JSON.stringify(shoot)),
    ]);
    expect(run.stderr).toBe('');
    expect(parseAllDocuments(run.stdout)[1]!.toJS()).toEqual(patched(shoot, answer));
  });

  it('refuses what the CloudProfile does not list, with the Status validate prints', async () => {
    const shoot = profiledShoot((s) => (s.spec.kubernetes = { version: '1.33.0' }));
    const answer = await review('validate', request(shoot), withProfiles());
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.kubernetes.version',
        message: 'Unsupported value: "1.33.0": supported values: "1.38.0 (preview)", "1.37.1"',
      },
    ]);
    const run = await cli([
      'validate',
      '-o',
      'json',
      '-f',
      tempFile('profile.json', JSON.stringify(PROFILES.local)),
      '-f',
      tempFile('shoot.json', JSON.stringify(shoot)),
    ]);
    const [profileStatus, shootStatus] = run.stdout.split(/\n(?=\{)/).map((s) => JSON.parse(s) as unknown);
    expect(profileStatus).toMatchObject({ status: 'Success', details: { kind: 'CloudProfile' } });
    expect(shootStatus).toEqual(answer.response.status);
  });

  it('refuses a Shoot naming a CloudProfile that does not exist, asking the lookup for it', async () => {
    const ctx = withProfiles();
    const shoot = profiledShoot((s) => (s.spec.cloudProfileName = 'gcp'));
    const answer = await review('validate', request(shoot), ctx);
    expect(answer.response.status?.details?.causes).toEqual([
      { reason: 'FieldValueNotFound', field: 'spec.cloudProfileName', message: 'Not found: "gcp"' },
    ]);
    expect(ctx.lookupCloudProfile).toHaveBeenCalledWith('gcp');
  });

  it('answers in one go when the CloudProfile and the seed are at hand', () => {
    const sync: AdmissionContext = {
      gates: gateSets.none,
      lookupSeed: (name) => SEEDS[name],
      lookupCloudProfile: (name) => PROFILES[name],
    };
    const shoot = profiledShoot((s) => (s.spec.seedName = 'seed-a'));
    for (const mode of ['validate', 'mutate'] as const) {
      const answer = answerAdmissionReview(
        { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: request(shoot) },
        sync,
        mode,
      );
      expect(answer).not.toBeInstanceOf(Promise);
      expect((answer as AdmissionReviewResponse).response.allowed).toBe(true);
    }
  });

  it('on an update, keeps the stored image where the new object leaves it out', async () => {
    const old = profiledShoot((s) => {
      s.spec.kubernetes = { version: '1.37.1' };
      s.spec.provider!.workers![0]!.machine = { type: 'm5.large', image: { name: 'gardenlinux', version: '1592.1.0' } };
    });
    const shoot = profiledShoot((s) => (s.spec.kubernetes = { version: '1.37.1' }));
    const answer = await review('mutate', request(shoot, { operation: 'UPDATE', oldObject: old }), withProfiles());
    expect(patched(shoot, answer).spec).toMatchObject({
      provider: { workers: [{ machine: { type: 'm5.large', image: { name: 'gardenlinux', version: '1592.1.0' } } }] },
    });
  });

  it('judges CloudProfiles, and leaves Shoots unchecked when no lookup is given', async () => {
    const profile = json(cloudProfileObject({ type: '' }));
    const answer = await review('validate', request(profile), withProfiles());
    expect(answer.response.status?.details?.causes).toContainEqual({
      reason: 'FieldValueRequired',
      field: 'spec.type',
      message: 'Required value: must provide a provider type',
    });
    const unlisted = profiledShoot((s) => (s.spec.kubernetes = { version: '1.33.0' }));
    expect((await review('validate', request(unlisted))).response.allowed).toBe(true);
  });
});

describe('review objects decoded by the webhook (marked plain, decoded sharing their unchanged parts)', () => {
  /** The object as the server decodes it from a body: marked, its decoded value sharing with it. */
  const decodedByServer = (object: unknown) => {
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: request(object),
    });
    const { request: decoded } = decodeReviewBody([Buffer.from(body)], {
      maxBytes: 1 << 20,
      maxDepth: 100,
      maxValues: 100_000,
    });
    expect(isPlainJSON(decoded!.object)).toBe(!JSON.stringify(object).includes('null'));
    return decoded!;
  };

  it('admits an update that leaves the spec alone, nulls of either side counting as absent', async () => {
    const invalidNow = json(ipv6ShootObject({ seedName: 'gone' }));
    const spec = invalidNow.spec as Json;
    const oldWithNull = { ...invalidNow, spec: { ...spec, purpose: null }, metadata: { name: 'crazy-botany' } };
    const newWithNull = { ...invalidNow, spec: { ...spec, purpose: null } };
    for (const [object, oldObject] of [
      [invalidNow, oldWithNull],
      [newWithNull, invalidNow],
    ]) {
      const decoded = decodedByServer(object);
      const ctx = context(gateSets.none);
      const answer = await review('validate', { ...decoded, operation: 'UPDATE', oldObject }, ctx);
      expect(answer.response.allowed).toBe(true);
      expect(ctx.lookupSeed).not.toHaveBeenCalled();
    }
  });

  it.each([
    ['an IPv4 Shoot', () => json(ipv4ShootObject())],
    ['an IPv6 Shoot on an IPv6 seed', () => json(ipv6ShootObject({ seedName: 'seed-v6' }))],
    ['an invalid IPv6 Shoot', () => json(ipv6ShootObject({ pods: '100.96.0.0/11' }))],
    ['a Seed', () => json(seedObject())],
  ])('answers %s as it answers the same object unmarked', async (_, make) => {
    for (const mode of ['mutate', 'validate'] as const) {
      for (const gates of [gateSets.none, gateSets.all]) {
        const original = make();
        const marked = decodedByServer(make());
        const answer = await review(mode, marked, context(gates));
        expect(answer).toEqual(await review(mode, request(make()), context(gates)));
        // The patch still turns the object into its defaulted self, and the object is left as it was.
        if (mode === 'mutate') expect(patched(marked.object, answer)).toEqual(patched(make(), answer));
        expect(marked.object).toEqual(original);
      }
    }
  });
});
