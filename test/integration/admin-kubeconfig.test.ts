/**
 * Gardener's `shoots/adminkubeconfig` against a real kube-apiserver with its aggregation layer: the admission server
 * serves it as an aggregated API. A user with only `create` on `shoots/adminkubeconfig` in the shoot's project
 * namespace (and no access to the shoot's CA, the InternalSecret `<shoot>.ca-client`) gets a working kubeconfig for
 * their own user in `system:masters`, valid exactly as long as asked; a user without it gets 403; the issuer refuses lifetimes out of
 * its bounds with field errors; only the aggregator's front proxy is trusted for the user in the headers.
 *
 * The "shoot API server" here is the garden's own (the shoot's InternalSecret holds the garden's CA), so the kubeconfig is
 * checked for real without running a shoot control plane.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startRuntime, type Runtime } from '../../src/app/runtime.js';
import { AdminKubeconfigShootRef } from '../../src/admission/admin-kubeconfig-api.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { Refs } from '../../src/apis/refs.js';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import { issueClientCertificate } from '../../src/localenv/certs.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { ResourceClient } from '../../src/runtime/client.js';
import type { ApiError } from '../../src/runtime/errors.js';
import { silentLogger } from '../../src/runtime/log.js';
import { ipv6ShootObject } from '../fixtures/objects.js';
import { cli } from '../support/cli.js';
import { run } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'garden-dev';
const SHOOT = 'akc';
const SEED_NAMESPACE = `shoot--dev--${SHOOT}`;
/**
 * Where the admission server listens: the aggregator reaches an aggregated API at an endpoint of a Service, which
 * can't be a loopback address, so the test's namespace gets one more of its own (as `up`'s API server has the seed
 * node network's gateway).
 */
const WEBHOOK_ADDRESS = 'fd00:a6c::1';

let cp: ControlPlane;
let runtime: Runtime;
let runtimeStopped = false;
let admin: ResourceClient;
let kubectl: string;
const kubeconfigs: Record<'alice' | 'bob', string> = { alice: '', bob: '' };

/** A kubeconfig of the garden for a user with a client certificate of the garden's CA. */
async function userKubeconfig(user: string, group: string): Promise<string> {
  const { certPEM, keyPEM } = await issueClientCertificate(cp.certs, {
    file: user,
    commonName: user,
    organizations: [group],
  });
  const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
  const path = join(cp.dir, `${user}.kubeconfig`);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'garden',
          cluster: { server: cp.server, 'certificate-authority-data': b64(readFileSync(cp.certs.caCert)) },
        },
      ],
      users: [{ name: user, user: { 'client-certificate-data': b64(certPEM), 'client-key-data': b64(keyPEM) } }],
      contexts: [{ name: 'garden', context: { cluster: 'garden', user } }],
      'current-context': 'garden',
    }),
    { mode: 0o600 },
  );
  return path;
}

function clientOf(path: string): ResourceClient {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return new ResourceClient(kc);
}

function requestAdminKubeconfig(client: ResourceClient, body: unknown) {
  return client.createSubresource<{ status?: { kubeconfig?: string; expirationTimestamp?: string } }>(
    AdminKubeconfigShootRef,
    SHOOT,
    NAMESPACE,
    'adminkubeconfig',
    body,
  );
}

/** The client certificate of a kubeconfig. */
function certificateOf(kubeconfig: string): X509Certificate {
  const config = parse(kubeconfig) as { users: { user: Record<string, string> }[] };
  return new X509Certificate(Buffer.from(config.users[0]!.user['client-certificate-data']!, 'base64'));
}

/** A request straight to the admission server, as the aggregator would send it (or pretend to). */
function direct(
  headers: Record<string, string>,
  credentials: { cert: string; key: string } | undefined,
  body = '{}',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${runtime.webhook!.url}/apis/core.gardener.cloud/v1alpha1/namespaces/${NAMESPACE}/shoots/${SHOOT}/adminkubeconfig`,
      {
        method: 'POST',
        rejectUnauthorized: false,
        headers: { 'Content-Type': 'application/json', ...headers },
        ...(credentials ? { cert: readFileSync(credentials.cert), key: readFileSync(credentials.key) } : {}),
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.sequential('shoots/adminkubeconfig (aggregated API of the admission server)', () => {
  beforeAll(async () => {
    execFileSync('ip', ['-6', 'address', 'replace', `${WEBHOOK_ADDRESS}/128`, 'dev', 'lo', 'nodad']);
    cp = await startControlPlane();
    admin = new ResourceClient(cp.kubeConfig());
    kubectl = (await ensureBinaries({ names: ['kubectl'] })).kubectl;
    // The shoot and its client CA as the gardenlet leaves them (the <shoot>.ca-client InternalSecret of the project
    // namespace), written before the webhook runs (it would want a Seed and a CloudProfile for the Shoot).
    await admin.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const shoot = await admin.create(Refs.shoot, ipv6ShootObject({ name: SHOOT }) as unknown as KubernetesObject);
    await admin.mergePatch(
      Refs.shoot,
      SHOOT,
      NAMESPACE,
      { status: { advertisedAddresses: [{ name: 'external', url: cp.server }] } },
      { subresource: 'status' },
    );
    await admin.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SEED_NAMESPACE } });
    await admin.create(Refs.internalSecret, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'InternalSecret',
      metadata: {
        name: `${SHOOT}.ca-client`,
        namespace: NAMESPACE,
        labels: { 'shoot.gardener.cloud/uid': shoot.metadata!.uid! },
      },
      data: {
        'ca.crt': readFileSync(cp.certs.caCert).toString('base64'),
        'ca.key': readFileSync(cp.certs.caKey).toString('base64'),
      },
    } as KubernetesObject);
    // Alice may create shoots/adminkubeconfig in the project namespace (Gardener's rule), nothing else; Bob nothing.
    await admin.create(
      { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'adminkubeconfig', namespace: NAMESPACE },
        rules: [{ apiGroups: ['core.gardener.cloud'], resources: ['shoots/adminkubeconfig'], verbs: ['create'] }],
      } as KubernetesObject,
    );
    await admin.create(
      {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        plural: 'rolebindings',
        kind: 'RoleBinding',
        namespaced: true,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'alice', namespace: NAMESPACE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'adminkubeconfig' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      } as KubernetesObject,
    );
    kubeconfigs.alice = await userKubeconfig('alice', 'team-a');
    kubeconfigs.bob = await userKubeconfig('bob', 'team-b');

    runtime = await startRuntime({
      kubeConfig: cp.kubeConfig(),
      gates: featureGates({ IPv6SingleStack: true }),
      logger: silentLogger(),
      components: ['admission'],
      webhook: { host: WEBHOOK_ADDRESS, port: 0, advertiseHost: WEBHOOK_ADDRESS },
      gardenlet: { dns: localDNSProvider() },
    });
    // The aggregator serves the version once it found the APIService's backend available.
    await waitFor(
      async () => {
        const apiService = await admin.get<
          KubernetesObject & { status?: { conditions?: { type: string; status: string; message?: string }[] } }
        >(
          {
            group: 'apiregistration.k8s.io',
            version: 'v1',
            plural: 'apiservices',
            kind: 'APIService',
            namespaced: false,
          },
          'v1alpha1.core.gardener.cloud',
        );
        const available = apiService?.status?.conditions?.find((c) => c.type === 'Available');
        if (available?.status !== 'True') throw new Error(`Available: ${JSON.stringify(available)}`);
        return true;
      },
      { timeoutMs: 30_000, message: 'the APIService v1alpha1.core.gardener.cloud to be available' },
    );
  }, 120_000);

  afterAll(async () => {
    if (!runtimeStopped) await runtime?.stop();
    admin?.close();
    await cp?.stop();
    execFileSync('ip', ['-6', 'address', 'del', `${WEBHOOK_ADDRESS}/128`, 'dev', 'lo']);
  });

  it('gives a user with only create shoots/adminkubeconfig a kubeconfig that works, as that user in system:masters', async () => {
    const alice = clientOf(kubeconfigs.alice);
    try {
      // Alice can't read the CA herself.
      await expect(alice.get(Refs.internalSecret, `${SHOOT}.ca-client`, NAMESPACE)).rejects.toMatchObject({
        code: 403,
      });
    } finally {
      alice.close();
    }
    const printed = await cli(['kubeconfig', '--kubeconfig', kubeconfigs.alice, '--shoot', `${NAMESPACE}/${SHOOT}`]);
    expect(printed.code, printed.stderr).toBe(0);
    const path = join(cp.dir, 'shoot.kubeconfig');
    writeFileSync(path, printed.stdout, { mode: 0o600 });
    const whoami = await run(kubectl, ['--kubeconfig', path, 'auth', 'whoami', '-o', 'json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    const user = (JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status
      .userInfo;
    expect(user.username).toBe('alice');
    expect(user.groups).toContain('system:masters');
    const namespaces = await run(kubectl, ['--kubeconfig', path, 'get', 'namespaces', '-o', 'name']);
    expect(namespaces.code, namespaces.stderr).toBe(0);
    expect(namespaces.stdout).toContain(`namespace/${SEED_NAMESPACE}`);
    // The default of the CLI: one hour.
    const cert = certificateOf(printed.stdout);
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(3_600_000);
    expect(cert.subject.split('\n')).toEqual(['O=system:masters', 'CN=alice']);
    expect(cert.checkIssued(new X509Certificate(readFileSync(cp.certs.caCert)))).toBe(true);
  });

  it('issues the certificate for exactly the lifetime asked, 1 h by default, and says when it expires', async () => {
    const alice = clientOf(kubeconfigs.alice);
    try {
      for (const [spec, seconds] of [
        [{ expirationSeconds: 600 }, 600],
        [{ expirationSeconds: 86_400 }, 86_400],
        [{}, 3_600],
      ] as const) {
        const before = Math.floor(Date.now() / 1000) * 1000;
        const answer = await requestAdminKubeconfig(alice, {
          apiVersion: 'authentication.gardener.cloud/v1alpha1',
          kind: 'AdminKubeconfigRequest',
          spec,
        });
        const cert = certificateOf(Buffer.from(answer.status!.kubeconfig!, 'base64').toString('utf8'));
        expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(seconds * 1000);
        expect(Date.parse(answer.status!.expirationTimestamp!)).toBe(Date.parse(cert.validTo));
        expect(Date.parse(cert.validFrom)).toBeGreaterThanOrEqual(before);
      }
    } finally {
      alice.close();
    }
  });

  it('refuses lifetimes out of 10 minutes to 24 hours with a field error', async () => {
    const alice = clientOf(kubeconfigs.alice);
    try {
      for (const expirationSeconds of [599, 86_401, 1.5]) {
        const error = (await requestAdminKubeconfig(alice, {
          apiVersion: 'authentication.gardener.cloud/v1alpha1',
          kind: 'AdminKubeconfigRequest',
          spec: { expirationSeconds },
        }).catch((e: unknown) => e)) as ApiError;
        expect(error.code, String(expirationSeconds)).toBe(422);
        expect(error.status?.reason).toBe('Invalid');
        expect(error.status?.details?.causes).toEqual([
          expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds' }),
        ]);
      }
    } finally {
      alice.close();
    }
    const cliTooLong = await cli([
      'kubeconfig',
      ...['--kubeconfig', kubeconfigs.alice, '--shoot', `${NAMESPACE}/${SHOOT}`, '--expiration', '25h'],
    ]);
    expect(cliTooLong.code).toBe(2);
  });

  it('answers 403 to a user without create shoots/adminkubeconfig', async () => {
    const printed = await cli(['kubeconfig', '--kubeconfig', kubeconfigs.bob, '--shoot', `${NAMESPACE}/${SHOOT}`]);
    expect(printed).toMatchObject({ code: 2, stdout: '' });
    expect(printed.stderr).toMatch(/^error: .*forbidden.*bob.*shoots\/adminkubeconfig/);
    const bob = clientOf(kubeconfigs.bob);
    try {
      await expect(requestAdminKubeconfig(bob, {})).rejects.toMatchObject({ code: 403 });
    } finally {
      bob.close();
    }
  });

  it('trusts the user in the headers only from the front proxy, and authorizes that user itself', async () => {
    const frontProxy = { cert: cp.certs.frontProxyClientCert, key: cp.certs.frontProxyClientKey };
    // The front proxy for Bob: the server's own SubjectAccessReview refuses him.
    const forBob = await direct({ 'X-Remote-User': 'bob', 'X-Remote-Group': 'team-b' }, frontProxy);
    expect(forBob.status).toBe(403);
    expect(JSON.parse(forBob.body)).toMatchObject({ reason: 'Forbidden' });
    // Without a certificate, or with one of another CA (the garden's admin): nobody.
    expect((await direct({ 'X-Remote-User': 'alice' }, undefined)).status).toBe(401);
    const adminCert = { cert: cp.certs.adminCert, key: cp.certs.adminKey };
    expect((await direct({ 'X-Remote-User': 'alice', 'X-Remote-Group': 'system:masters' }, adminCert)).status).toBe(
      401,
    );
    // The front proxy for Alice: issued.
    const forAlice = await direct({ 'X-Remote-User': 'alice' }, frontProxy);
    expect(forAlice.status, forAlice.body).toBe(201);
    expect(JSON.parse(forAlice.body)).toMatchObject({
      apiVersion: 'authentication.gardener.cloud/v1alpha1',
      kind: 'AdminKubeconfigRequest',
      spec: { expirationSeconds: 3600 },
    });
  });

  it('keeps the group preferred version the CRDs, and takes the APIService away when it stops', async () => {
    const group = await run(kubectl, ['--kubeconfig', cp.kubeconfigPath, 'get', '--raw', '/apis/core.gardener.cloud']);
    expect(JSON.parse(group.stdout)).toMatchObject({ preferredVersion: { version: 'v1beta1' } });
    const shoots = await run(kubectl, ['--kubeconfig', cp.kubeconfigPath, 'get', 'shoots', '-A', '-o', 'name']);
    expect(shoots.code, shoots.stderr).toBe(0);
    expect(shoots.stdout).toContain(`shoot.core.gardener.cloud/${SHOOT}`);
    runtimeStopped = true;
    await runtime.stop();
    const apiService = await admin.get(
      { group: 'apiregistration.k8s.io', version: 'v1', plural: 'apiservices', kind: 'APIService', namespaced: false },
      'v1alpha1.core.gardener.cloud',
    );
    expect(apiService).toBeUndefined();
    // The CLI says what is missing.
    await waitFor(
      async () => {
        const printed = await cli([
          'kubeconfig',
          '--kubeconfig',
          kubeconfigs.alice,
          '--shoot',
          `${NAMESPACE}/${SHOOT}`,
        ]);
        expect(printed.code).toBe(2);
        expect(printed.stderr).toMatch(/the APIService v1alpha1\.core\.gardener\.cloud is missing\)$/m);
        return true;
      },
      { timeoutMs: 20_000, message: 'the API server to stop routing the version' },
    );
  });
});
