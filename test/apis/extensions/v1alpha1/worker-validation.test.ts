import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import { validateWorker, validateWorkerUpdate } from '../../../../src/apis/extensions/v1alpha1/validation/worker.js';
import { WorkerSchema, type Worker, type WorkerPool } from '../../../../src/apis/extensions/v1alpha1/worker.js';
import { errorString, type ErrorList } from '../../../../src/apis/field/index.js';
import { lookupKind, Workers } from '../../../../src/apis/registry.js';
import { featureGates } from '../../../../src/featuregate/featuregate.js';
import { Refs } from '../../../../src/apis/refs.js';
import { workerObject, workerPool } from '../../../fixtures/objects.js';

const OFF = featureGates();
const messages = (errors: ErrorList) => errors.map(errorString);
const validate = (worker: Worker) => messages(validateWorker(worker));
const fields = (worker: Worker) => validateWorker(worker).map((e) => [e.type, e.field]);
const update = (next: Worker, prev: Worker) => messages(validateWorkerUpdate(next, prev));
const withPools = (...pools: WorkerPool[]) => workerObject({ pools });

describe('Worker schema', () => {
  it('decodes Gardener wire format, keeping fields it does not model', () => {
    const wire = {
      ...workerObject({
        providerConfig: { apiVersion: 'local.provider.extensions.gardener.cloud/v1alpha1', kind: 'WorkerConfig' },
        infrastructureProviderStatus: { kind: 'InfrastructureStatus', vpc: { id: 'vpc-1' } },
        sshPublicKey: Buffer.from('ssh-ed25519 AAAA').toString('base64'),
        pools: [
          workerPool({
            maxSurge: '25%',
            taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
            volume: { size: '20Gi', type: 'ssd' },
            dataVolumes: [{ name: 'kubelet', size: '50Gi' }],
            kubeletDataVolumeName: 'kubelet',
            nodeTemplate: { capacity: { cpu: 2, memory: '8Gi', 'nvidia.com/gpu': '1' } },
            machineControllerManager: { machineDrainTimeout: '2h', maxEvictRetries: 30 },
            architecture: 'arm64',
            updateStrategy: 'AutoRollingUpdate',
          } as WorkerPool),
        ],
      }),
      status: {
        lastOperation: {
          type: 'Reconcile',
          state: 'Succeeded',
          progress: 100,
          description: 'ok',
          lastUpdateTime: '2025-01-01T00:00:00Z',
        },
        machineDeployments: [{ name: 'shoot--dev--a-worker-z0', minimum: 1, maximum: 2 }],
        machineDeploymentsLastUpdateTime: '2025-01-01T00:00:00Z',
      },
    };
    const json = JSON.parse(JSON.stringify(wire)) as unknown;
    const decoded = WorkerSchema.parse(json);
    expect(decoded).toEqual(json);
    expect((decoded.spec.pools![0] as Record<string, unknown>).updateStrategy).toBe('AutoRollingUpdate');
    expect(validateWorker(decoded)).toEqual([]);
  });

  it('takes maxSurge and maxUnavailable as a number or a string', () => {
    for (const value of [0, 3, '0%', '100%']) {
      expect(WorkerSchema.safeParse(withPools(workerPool({ maxSurge: value, maxUnavailable: value }))).success).toBe(
        true,
      );
    }
    expect(WorkerSchema.safeParse(withPools(workerPool({ maxSurge: 1.5 }))).success).toBe(false);
  });

  it('is served: admit finds the kind, and Refs.worker addresses it', () => {
    expect(lookupKind(workerObject())).toBe(Workers);
    expect(Refs.worker).toEqual({
      group: 'extensions.gardener.cloud',
      version: 'v1alpha1',
      plural: 'workers',
      kind: 'Worker',
      namespaced: true,
    });
  });

  it('reports a wrong type with the field path', () => {
    const object = workerObject();
    (object.spec.pools![0] as Record<string, unknown>).minimum = 'one';
    const result = admit({ object, gates: OFF });
    expect(result.object).toBeUndefined();
    expect(result.errors.map((e) => e.field)).toEqual(['spec.pools[0].minimum']);
  });
});

describe('Worker validation', () => {
  it('accepts the fixture, a Worker without pools and a pool without userDataSecretRef', () => {
    expect(validate(workerObject())).toEqual([]);
    expect(validate(workerObject({ pools: undefined }))).toEqual([]);
    expect(validate(withPools(workerPool({ userDataSecretRef: undefined })))).toEqual([]);
  });

  describe('required fields', () => {
    it.each(['type', 'region'] as const)('spec.%s', (name) => {
      expect(fields(workerObject({ [name]: undefined }))).toEqual([['FieldValueRequired', `spec.${name}`]]);
      expect(fields(workerObject({ [name]: '' }))).toEqual([['FieldValueRequired', `spec.${name}`]]);
    });

    it('spec.secretRef.name', () => {
      expect(fields(workerObject({ secretRef: undefined }))).toEqual([['FieldValueRequired', 'spec.secretRef.name']]);
      expect(fields(workerObject({ secretRef: { namespace: 'shoot--dev--a' } }))).toEqual([
        ['FieldValueRequired', 'spec.secretRef.name'],
      ]);
    });

    it('name, machineType and machineImage of each pool', () => {
      const pool = workerPool({ name: undefined, machineType: '', machineImage: { name: 'local' } });
      expect(validate(withPools(workerPool(), pool))).toEqual([
        'spec.pools[1].name: Required value: field is required',
        'spec.pools[1].machineType: Required value: field is required',
        'spec.pools[1].machineImage.version: Required value: field is required',
      ]);
      expect(fields(withPools(workerPool({ machineImage: undefined })))).toEqual([
        ['FieldValueRequired', 'spec.pools[0].machineImage.name'],
        ['FieldValueRequired', 'spec.pools[0].machineImage.version'],
      ]);
    });

    it('name and key of a userDataSecretRef that is there', () => {
      expect(validate(withPools(workerPool({ userDataSecretRef: {} })))).toEqual([
        'spec.pools[0].userDataSecretRef.name: Required value: field is required',
        'spec.pools[0].userDataSecretRef.key: Required value: field is required',
      ]);
      expect(fields(withPools(workerPool({ userDataSecretRef: { name: 'worker-a1b2c', key: '' } })))).toEqual([
        ['FieldValueRequired', 'spec.pools[0].userDataSecretRef.key'],
      ]);
    });

    it('reports every missing field at once', () => {
      const worker = workerObject({ type: undefined, region: undefined, secretRef: undefined, pools: [{}] });
      expect(fields(worker)).toEqual([
        ['FieldValueRequired', 'spec.type'],
        ['FieldValueRequired', 'spec.region'],
        ['FieldValueRequired', 'spec.secretRef.name'],
        ['FieldValueRequired', 'spec.pools[0].name'],
        ['FieldValueRequired', 'spec.pools[0].machineType'],
        ['FieldValueRequired', 'spec.pools[0].machineImage.name'],
        ['FieldValueRequired', 'spec.pools[0].machineImage.version'],
      ]);
    });
  });

  describe('pool names', () => {
    it.each(['worker', 'a', 'pool-1', 'x'.repeat(63)])('accepts %j', (name) => {
      expect(validate(withPools(workerPool({ name })))).toEqual([]);
    });

    it.each(['Worker', 'pool_1', '-pool', 'pool-', 'a.b', 'x'.repeat(64)])('refuses %j: not a DNS label', (name) => {
      expect(fields(withPools(workerPool({ name })))).toContainEqual(['FieldValueInvalid', 'spec.pools[0].name']);
    });

    it('must be unique', () => {
      const pools = [workerPool(), workerPool({ name: 'other' }), workerPool()];
      expect(validate(withPools(...pools))).toEqual(['spec.pools[2].name: Duplicate value: "worker"']);
    });
  });

  describe('pool sizes', () => {
    it('minimum ≥ 0 and maximum ≥ minimum', () => {
      expect(validate(withPools(workerPool({ minimum: 0, maximum: 0 })))).toEqual([]);
      expect(validate(withPools(workerPool({ minimum: 3, maximum: 3 })))).toEqual([]);
      expect(validate(withPools(workerPool({ minimum: -1, maximum: 2 })))).toEqual([
        'spec.pools[0].minimum: Invalid value: -1: must be greater than or equal to 0',
      ]);
      expect(validate(withPools(workerPool({ minimum: 3, maximum: 2 })))).toEqual([
        'spec.pools[0].maximum: Forbidden: maximum value must not be less than minimum value',
      ]);
      expect(validate(withPools(workerPool({ minimum: 2, maximum: undefined })))).toEqual([
        'spec.pools[0].maximum: Forbidden: maximum value must not be less than minimum value',
      ]);
    });

    it.each(['maxSurge', 'maxUnavailable'] as const)('%s is a non-negative integer or a percentage', (name) => {
      for (const value of [0, 1, '0%', '25%', '100%']) {
        expect(validate(withPools(workerPool({ [name]: value })))).toEqual([]);
      }
      expect(validate(withPools(workerPool({ [name]: -1 })))).toEqual([
        `spec.pools[0].${name}: Invalid value: -1: must be greater than or equal to 0`,
      ]);
      for (const value of ['25', '%', '-5%', 'a lot']) {
        expect(validate(withPools(workerPool({ [name]: value })))).toEqual([
          `spec.pools[0].${name}: Invalid value: ${JSON.stringify(value)}: must be an integer or percentage (e.g '5%')`,
        ]);
      }
    });
  });

  it('architecture is one Gardener knows', () => {
    expect(validate(withPools(workerPool({ architecture: 'amd64' })))).toEqual([]);
    expect(validate(withPools(workerPool({ architecture: 'x86_64' })))).toEqual([
      'spec.pools[0].architecture: Unsupported value: "x86_64": supported values: "amd64", "arm64"',
    ]);
  });

  it('nodeTemplate capacities are quantities ≥ 0', () => {
    const capacity = { cpu: '2', memory: '8Gi', gpu: 0, pods: '-1', disk: 'lots' };
    expect(validate(withPools(workerPool({ nodeTemplate: { capacity } })))).toEqual([
      'spec.pools[0].nodeTemplate.capacity.pods: Invalid value: "-1": must be greater than or equal to 0',
      'spec.pools[0].nodeTemplate.capacity.disk: Invalid value: "lots": quantities must match the regular ' +
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ]);
  });

  it('sshPublicKey and userData are base64', () => {
    const key = Buffer.from('ssh-ed25519 AAAAC3Nza').toString('base64');
    expect(validate(workerObject({ sshPublicKey: key }))).toEqual([]);
    expect(validate(withPools(workerPool({ userData: Buffer.from('#!/bin/sh\n').toString('base64') })))).toEqual([]);
    expect(validate(workerObject({ sshPublicKey: 'ssh-ed25519 AAAA' }))).toEqual([
      'spec.sshPublicKey: Invalid value: "ssh-ed25519 AAAA": must be base64-encoded',
    ]);
    expect(fields(withPools(workerPool({ userData: '#!/bin/sh' })))).toEqual([
      ['FieldValueInvalid', 'spec.pools[0].userData'],
    ]);
  });

  describe('update', () => {
    it('pools, secretRef and providerConfig may change', () => {
      const changed = workerObject({
        secretRef: { name: 'cloudprovider-2' },
        providerConfig: { a: 1 },
        pools: [workerPool({ maximum: 5 }), workerPool({ name: 'second' })],
      });
      expect(update(changed, workerObject())).toEqual([]);
    });

    it.each([
      ['type', 'aws'],
      ['region', 'eu-west-1'],
    ] as const)('%s is immutable', (name, value) => {
      expect(update(workerObject({ [name]: value }), workerObject())).toEqual([
        `spec.${name}: Invalid value: "${value}": field is immutable`,
      ]);
    });

    it('also validates the new object', () => {
      expect(update(withPools(workerPool({ minimum: -1 })), workerObject())).toEqual([
        'spec.pools[0].minimum: Invalid value: -1: must be greater than or equal to 0',
      ]);
    });

    it('forbids any spec change once the deletion timestamp is set', () => {
      const deleting = (spec: Parameters<typeof workerObject>[0] = {}) =>
        workerObject(spec, { deletionTimestamp: '2025-01-01T00:00:00Z' });
      expect(update(deleting(), deleting())).toEqual([]);
      expect(validateWorkerUpdate(deleting({ pools: [] }), deleting())).toEqual([
        expect.objectContaining({ type: 'FieldValueForbidden', field: 'spec' }),
      ]);
    });

    it('runs through admit', () => {
      const result = admit({ object: workerObject({ region: 'elsewhere' }), oldObject: workerObject(), gates: OFF });
      expect(messages(result.errors)).toEqual(['spec.region: Invalid value: "elsewhere": field is immutable']);
    });
  });

  describe('admission', () => {
    it('does not default anything', () => {
      const result = admit({ object: workerObject(), gates: OFF });
      expect(result.errors).toEqual([]);
      expect(result.object).toEqual(workerObject());
      expect(result.id).toEqual({ group: 'extensions.gardener.cloud', kind: 'Worker', name: 'shoot--dev--a' });
    });

    it('checks metadata as for any custom resource', () => {
      const result = admit({ object: workerObject({}, { name: 'Not_A_Name' }), gates: OFF });
      expect(result.errors.map((e) => e.field)).toEqual(['metadata.name']);
    });
  });
});
