/**
 * Gardener's `shoots/adminkubeconfig` subresource as an aggregated API of the admission server. A Shoot here is a
 * custom resource, which can't have subresources of its own, so the API server's aggregator routes the version
 * `core.gardener.cloud/v1alpha1` (an APIService; `v1beta1` stays the CRDs') to this server, which serves only
 * `POST /apis/core.gardener.cloud/v1alpha1/namespaces/<namespace>/shoots/<name>/adminkubeconfig` with an
 * `AdminKubeconfigRequest` of `authentication.gardener.cloud/v1alpha1`, as Gardener's API server does under
 * `v1beta1`. The API server authorizes that request as `create` on `shoots/adminkubeconfig` of `core.gardener.cloud`
 * (Gardener's RBAC rule, versions don't matter to RBAC) before it proxies it; this server authenticates the proxy
 * (front-proxy.ts) and asks the API server again (SubjectAccessReview), then issues the kubeconfig with the CA of the
 * shoot's seed namespace, for the requesting user in `system:masters`, within the bounds it enforces.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  API_VERSION as AUTHENTICATION_API_VERSION,
  GROUP as AUTHENTICATION_GROUP,
  KIND as ADMIN_KUBECONFIG_REQUEST_KIND,
  VERSION as AUTHENTICATION_VERSION,
  validateAdminKubeconfigRequest,
  type AdminKubeconfigRequest,
} from '../apis/authentication/v1alpha1/adminkubeconfigrequest.js';
import { invalidStatus } from '../apis/field/index.js';
import { replyJSON, replyMethodNotAllowed, replyStatus } from './reply.js';
import { AdminKubeconfigError, issueShootAdminKubeconfig, type AdminKubeconfig } from './admin-kubeconfig-issuer.js';
import type { ResourceClient } from '../runtime/client.js';
import { Refs, type ResourceRef } from '../apis/refs.js';
import type { Logger } from '../runtime/log.js';
import { authenticateFrontProxy, type RequestHeaderConfig, type UserInfo } from './front-proxy.js';

export const ADMIN_KUBECONFIG_API_GROUP = 'core.gardener.cloud';
export const ADMIN_KUBECONFIG_API_VERSION = 'v1alpha1';
export const ADMIN_KUBECONFIG_SUBRESOURCE = 'adminkubeconfig';
/** The resource the subresource belongs to, for clients (its version is the aggregated one). */
export const AdminKubeconfigShootRef = {
  group: ADMIN_KUBECONFIG_API_GROUP,
  version: ADMIN_KUBECONFIG_API_VERSION,
  plural: 'shoots',
  kind: 'Shoot',
  namespaced: true,
} as const satisfies ResourceRef;

const GROUP_VERSION = `${ADMIN_KUBECONFIG_API_GROUP}/${ADMIN_KUBECONFIG_API_VERSION}`;
const PREFIX = `/apis/${GROUP_VERSION}`;
/** An AdminKubeconfigRequest is a few dozen bytes. */
const MAX_BODY_BYTES = 64 * 1024;
const NAME = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBRESOURCE_PATH = new RegExp(
  `^${PREFIX.replace(/\./g, '\\.')}/namespaces/(${NAME})/shoots/(${NAME})/${ADMIN_KUBECONFIG_SUBRESOURCE}$`,
);

/** What the API server's discovery gets for the version: the one subresource. */
export const API_RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GROUP_VERSION,
  resources: [
    {
      name: `shoots/${ADMIN_KUBECONFIG_SUBRESOURCE}`,
      singularName: '',
      namespaced: true,
      group: AUTHENTICATION_GROUP,
      version: AUTHENTICATION_VERSION,
      kind: ADMIN_KUBECONFIG_REQUEST_KIND,
      verbs: ['create'],
    },
  ],
};

export interface AdminKubeconfigAPIOptions {
  /** Reads Shoots, the `ca` Secrets and `kube-apiserver` Services of seed namespaces, and creates SubjectAccessReviews. */
  readonly client: ResourceClient;
  /** The aggregator's authentication; undefined when the API server has no aggregation layer (all requests 401). */
  readonly requestHeader: RequestHeaderConfig | undefined;
  readonly logger: Logger;
}

/** Whether the path is one of this API's (the server sends the rest elsewhere). */
export function isAdminKubeconfigAPIPath(path: string): boolean {
  return path === PREFIX || path.startsWith(`${PREFIX}/`);
}

function readJSON(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RangeError(`the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

/** Asks the API server whether the user may `create` `shoots/adminkubeconfig` of the shoot. */
async function allowed(
  client: ResourceClient,
  user: UserInfo,
  namespace: string,
  name: string,
): Promise<{ allowed: boolean; reason?: string }> {
  const review = await client.create<{
    apiVersion: string;
    kind: string;
    metadata?: object;
    status?: { allowed?: boolean; reason?: string };
  }>(Refs.subjectAccessReview, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: user.username,
      ...(user.uid !== undefined ? { uid: user.uid } : {}),
      groups: user.groups,
      extra: user.extra,
      resourceAttributes: {
        namespace,
        verb: 'create',
        group: ADMIN_KUBECONFIG_API_GROUP,
        resource: 'shoots',
        subresource: ADMIN_KUBECONFIG_SUBRESOURCE,
        name,
      },
    },
  } as never);
  return {
    allowed: review.status?.allowed === true,
    ...(review.status?.reason ? { reason: review.status.reason } : {}),
  };
}

/** Serves a request whose path {@link isAdminKubeconfigAPIPath} accepted. */
export async function serveAdminKubeconfigAPI(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  opts: AdminKubeconfigAPIOptions,
): Promise<void> {
  const { logger } = opts;
  const authn = opts.requestHeader
    ? authenticateFrontProxy(req, opts.requestHeader)
    : { error: 'the API server publishes no request-header configuration' };
  if ('error' in authn) {
    logger.info({ path, reason: authn.error }, 'refused an unauthenticated request');
    // Drain the body: the connection stays usable.
    req.resume();
    return replyStatus(res, 401, 'Unauthorized');
  }
  const { user } = authn;

  if (path === PREFIX) {
    if (req.method !== 'GET') return replyMethodNotAllowed(res, 'GET');
    return replyJSON(res, 200, API_RESOURCE_LIST);
  }
  const match = SUBRESOURCE_PATH.exec(path);
  if (!match) {
    req.resume();
    return replyStatus(res, 404, 'the server could not find the requested resource');
  }
  const namespace = match[1]!;
  const name = match[3]!;
  if (req.method !== 'POST') {
    req.resume();
    return replyMethodNotAllowed(res, 'POST', `the server does not allow this method on ${path}`);
  }

  const decision = await allowed(opts.client, user, namespace, name);
  if (!decision.allowed) {
    req.resume();
    logger.info({ user: user.username, namespace, name }, 'refused an admin kubeconfig: forbidden');
    const message =
      `shoots.${ADMIN_KUBECONFIG_API_GROUP} ${JSON.stringify(name)} is forbidden: User ${JSON.stringify(user.username)} ` +
      `cannot create resource "shoots/${ADMIN_KUBECONFIG_SUBRESOURCE}" in API group "${ADMIN_KUBECONFIG_API_GROUP}" ` +
      `in the namespace ${JSON.stringify(namespace)}${decision.reason ? `: ${decision.reason}` : ''}`;
    return replyStatus(res, 403, message, { details: { name, group: ADMIN_KUBECONFIG_API_GROUP, kind: 'shoots' } });
  }

  let body: unknown;
  try {
    body = await readJSON(req);
  } catch (e) {
    return replyStatus(res, 400, `the request body is no JSON object: ${(e as Error).message}`);
  }
  const { expirationSeconds, errors } = validateAdminKubeconfigRequest(body);
  if (errors.length > 0) {
    return replyJSON(
      res,
      422,
      invalidStatus({ group: AUTHENTICATION_GROUP, kind: ADMIN_KUBECONFIG_REQUEST_KIND, name }, errors),
    );
  }

  let issued: AdminKubeconfig;
  try {
    issued = await issueShootAdminKubeconfig(opts.client, namespace, name, { expirationSeconds, user: user.username });
  } catch (e) {
    if (!(e instanceof AdminKubeconfigError)) throw e;
    const code = { NotFound: 404, BadRequest: 400, Conflict: 409 }[e.reason];
    return replyStatus(res, code, e.message, { details: { name, group: ADMIN_KUBECONFIG_API_GROUP, kind: 'shoots' } });
  }
  logger.info(
    { user: user.username, namespace, name, expirationSeconds, expires: issued.expirationTimestamp.toISOString() },
    'issued an admin kubeconfig',
  );
  const answer: AdminKubeconfigRequest = {
    apiVersion: AUTHENTICATION_API_VERSION,
    kind: ADMIN_KUBECONFIG_REQUEST_KIND,
    metadata: { name, namespace, creationTimestamp: null },
    spec: { expirationSeconds },
    status: {
      kubeconfig: Buffer.from(issued.kubeconfig).toString('base64'),
      expirationTimestamp: issued.expirationTimestamp.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
  };
  replyJSON(res, 201, answer);
}
