/**
 * The admission webhook server: HTTPS, `POST /validate` and `POST /mutate` with `admission.k8s.io/v1`
 * AdmissionReviews, `GET /healthz` and `GET /readyz`. This file owns the socket (TLS, listening, closing) and the
 * limits' defaults; what happens to each request is request-handler.ts, everything about the answers review.ts.
 */
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ExtensionAdmission } from '../apis/admission.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { newLogger, type Logger } from '../runtime/log.js';
import type { RegisteredExtensionTypes } from './extensions.js';
import { InFlightBytes } from './in-flight.js';
import { AdmissionMetrics } from './metrics.js';
import { ReviewRequestHandler } from './request-handler.js';
import type { AdmissionContext, MaybePromise } from './review.js';
import { webhookBaseURL } from './webhook-configurations.js';
import type { AdminKubeconfigAPIOptions } from './admin-kubeconfig-api.js';

/** All addresses, IPv6 and (on dual-stack hosts) IPv4. */
export const DEFAULT_HOST = '::';
/** controller-runtime's webhook port. */
export const DEFAULT_PORT = 9443;
/** An AdmissionReview carries the object twice (object, oldObject); etcd's limit per object is 1.5 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;
/**
 * Most `[`/`{` open at once in a body. Kubernetes' own CBOR decoder allows 64 levels per object ("observed depth up
 * to 16 in fuzzed batch/v1 CronJobList"; its JSON decoder allows 10,000, which costs memory and time for no object
 * anyone writes); a review wraps the object in 3 more (review, request, object) and a Shoot's managedFields nest as
 * deep as its spec (about 15). 100 leaves the object the 64 levels the API server's CBOR decoder gives it, and more.
 */
export const DEFAULT_MAX_JSON_DEPTH = 100;
/**
 * Most values in a body (every `[`, `{` and `,` counts one). A Shoot with 100 full worker pools, its managedFields
 * and its old object has some 25,000. Decoding, defaulting and validating a review costs about 100 to 300 bytes of
 * heap and 0.3 µs per value, so 100,000 keep the worst review within some 30 MB and 50 ms, whatever its shape.
 */
export const DEFAULT_MAX_JSON_VALUES = 100_000;
/**
 * Most keys in one object of a body. Keys cost far more than values in arrays: one object of 98,000 keys (a 1 MB
 * review within the value limit) took 65 MB and a quarter of a second to decode and validate, and 48 concurrent
 * copies 356 MiB (the chart gives the webhook 256 MiB). Nothing in a Shoot, Seed or extension resource has objects
 * of more than a few hundred keys (labels, annotations, a managedFields entry); 10,000 keep the worst object within
 * some 7 MB.
 */
export const DEFAULT_MAX_JSON_OBJECT_KEYS = 10_000;
/**
 * Most bytes of request bodies held at once, from reading to answering (see in-flight.ts). 48 concurrent 1 MB reviews
 * took the webhook from 100 to 247 MiB of its 256 MiB without a bound, 16 MiB of them some 50 MiB more than idle.
 */
export const DEFAULT_MAX_IN_FLIGHT_BODY_BYTES = 8 * 1024 * 1024;
/** Of the bytes in flight, kept for bodies up to {@link SMALL_BODY_BYTES}: ordinary reviews never wait for large ones. */
const RESERVED_BODY_BYTES = 1024 * 1024;
/** A Shoot review with 100 worker pools is 23 KB. */
const SMALL_BODY_BYTES = 64 * 1024;
/** How long a request waits for room before it is answered 429 (the API server's webhook timeout is 10 s). */
export const DEFAULT_IN_FLIGHT_WAIT_MS = 2_000;
/** The API server gives up after `timeoutSeconds` (10) anyway. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * How long an idle connection stays open: longer than the API server keeps its idle webhook connections (Go's
 * transport default, 90 s), so that the API server closes them, never this server. Node's default of 5 s closed
 * connections the API server was just sending a review on: "connection reset by peer", a failed write of a Shoot.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
/** How long close() lets requests in flight finish before it cuts their connections. */
export const DEFAULT_CLOSE_GRACE_MS = 5_000;

/** The serving certificate and key, as PEM or as files holding PEM. */
export type TLSSource = { cert: string | Buffer; key: string | Buffer } | { certFile: string; keyFile: string };

export interface AdmissionServerOptions {
  readonly tls: TLSSource;
  readonly gates: FeatureGates;
  /**
   * The Seed of that name, undefined when there is none. The runtime passes the shared cached reader
   * (src/runtime/cached-reader.ts): reviews then cost the API server nothing, and a Seed returned as a value (not a
   * promise) lets a review be answered in one go.
   */
  readonly lookupSeed: (name: string) => MaybePromise<unknown>;
  /**
   * The CloudProfile of that name, undefined when there is none; from the shared cached reader as `lookupSeed`.
   * Shoots are defaulted from and checked against their CloudProfile; unchecked when unset.
   */
  readonly lookupCloudProfile?: (name: string) => MaybePromise<unknown>;
  /** A Shoot from the shared cache, for the seed restriction (seed-restriction.ts). */
  readonly lookupShoot?: (namespace: string, name: string) => MaybePromise<unknown>;
  /** `/readyz` answers 200 while true (the caches `lookupSeed` reads are synced), 503 otherwise. @default always */
  readonly ready?: () => boolean;
  /** Where to register the review metrics (see {@link AdmissionMetrics}). @default not collected */
  readonly metrics?: Registry;
  /** @default {@link DEFAULT_HOST} */
  readonly host?: string;
  /** 0 picks a free port. @default {@link DEFAULT_PORT} */
  readonly port?: number;
  /** @default newLogger({ name: 'admission' }) */
  readonly logger?: Logger;
  /** Larger bodies are refused with 413. @default {@link DEFAULT_MAX_BODY_BYTES} */
  readonly maxBodyBytes?: number;
  /** Deeper bodies are refused before they are parsed. @default {@link DEFAULT_MAX_JSON_DEPTH} */
  readonly maxJSONDepth?: number;
  /** Bodies with more values are refused before they are parsed. @default {@link DEFAULT_MAX_JSON_VALUES} */
  readonly maxJSONValues?: number;
  /** Bodies with an object of more keys are refused before they are parsed. @default {@link DEFAULT_MAX_JSON_OBJECT_KEYS} */
  readonly maxJSONObjectKeys?: number;
  /** Most bytes of bodies held at once; beyond, requests wait, then get 429. @default {@link DEFAULT_MAX_IN_FLIGHT_BODY_BYTES} */
  readonly maxInFlightBodyBytes?: number;
  /** How long a request waits for room before 429. @default {@link DEFAULT_IN_FLIGHT_WAIT_MS} */
  readonly inFlightWaitMs?: number;
  /** @default {@link DEFAULT_REQUEST_TIMEOUT_MS} */
  readonly requestTimeoutMs?: number;
  /** Refuse Shoots using extension types outside this set; unchecked when unset. */
  readonly extensions?: RegisteredExtensionTypes;
  /** What the extensions' admission adds. None when unset. */
  readonly extensionAdmission?: ExtensionAdmission;
  /** Also serve Gardener's `shoots/adminkubeconfig` as an aggregated API (see admin-kubeconfig-api.ts). */
  readonly adminKubeconfig?: AdminKubeconfigAPIOptions;
}

export interface AdmissionServer {
  /** The address it listens on, without brackets (`::1`). */
  readonly host: string;
  readonly port: number;
  /** `https://[host]:port`, the base of the webhook URLs. */
  readonly url: string;
  /** Serves with a new certificate from now on (rotation); connections already open keep theirs. */
  setTLS(tls: TLSSource): Promise<void>;
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then closes every connection. */
  close(opts?: { graceMs?: number }): Promise<void>;
}

async function readTLS(tls: TLSSource): Promise<{ cert: string | Buffer; key: string | Buffer }> {
  if ('certFile' in tls) return { cert: await readFile(tls.certFile), key: await readFile(tls.keyFile) };
  return { cert: tls.cert, key: tls.key };
}

/**
 * With the aggregated API, a client certificate is asked for (and checked against the request-header CA, which is
 * also what the certificate request names, so the aggregator sends its own) but not required: the API server calls
 * the webhooks without one.
 */
function clientAuthentication(opts: AdmissionServerOptions): {
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
  ca?: string;
} {
  const clientCA = opts.adminKubeconfig?.requestHeader?.clientCA;
  return clientCA === undefined ? {} : { requestCert: true, rejectUnauthorized: false, ca: clientCA };
}

/** Starts the server; resolves once it listens. */
export async function startAdmissionServer(opts: AdmissionServerOptions): Promise<AdmissionServer> {
  const logger = opts.logger ?? newLogger({ name: 'admission' });
  const handler = new ReviewRequestHandler({
    logger,
    context: admissionContext(opts, logger),
    bodyLimits: {
      maxBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      maxDepth: opts.maxJSONDepth ?? DEFAULT_MAX_JSON_DEPTH,
      maxValues: opts.maxJSONValues ?? DEFAULT_MAX_JSON_VALUES,
      maxObjectKeys: opts.maxJSONObjectKeys ?? DEFAULT_MAX_JSON_OBJECT_KEYS,
    },
    inFlight: new InFlightBytes(
      opts.maxInFlightBodyBytes ?? DEFAULT_MAX_IN_FLIGHT_BODY_BYTES,
      RESERVED_BODY_BYTES,
      SMALL_BODY_BYTES,
    ),
    inFlightWaitMs: opts.inFlightWaitMs ?? DEFAULT_IN_FLIGHT_WAIT_MS,
    ready: opts.ready ?? (() => true),
    metrics: opts.metrics ? new AdmissionMetrics(opts.metrics) : undefined,
    adminKubeconfig: opts.adminKubeconfig,
  });
  const server = https.createServer(
    { ...(await readTLS(opts.tls)), minVersion: 'TLSv1.2', ...clientAuthentication(opts) },
    handler.listener,
  );
  server.requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(server.headersTimeout, server.requestTimeout);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('tlsClientError', (e) => logger.debug({ err: e }, 'TLS handshake failed'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host ?? DEFAULT_HOST, port: opts.port ?? DEFAULT_PORT }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => logger.error({ err: e }, 'server error'));
  const address = server.address() as AddressInfo;
  logger.info({ host: address.address, port: address.port }, 'admission webhook server listening');

  let closing: Promise<void> | undefined;
  return {
    host: address.address,
    port: address.port,
    url: webhookBaseURL(address.address, address.port),
    async setTLS(tls) {
      const { ca } = clientAuthentication(opts);
      server.setSecureContext({ ...(await readTLS(tls)), minVersion: 'TLSv1.2', ...(ca !== undefined ? { ca } : {}) });
    },
    close({ graceMs = DEFAULT_CLOSE_GRACE_MS } = {}) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          logger.info('admission webhook server stopped');
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/** One context for every review. */
function admissionContext(opts: AdmissionServerOptions, logger: Logger): AdmissionContext {
  return {
    gates: opts.gates,
    lookupSeed: opts.lookupSeed,
    ...(opts.lookupCloudProfile ? { lookupCloudProfile: opts.lookupCloudProfile } : {}),
    ...(opts.lookupShoot ? { lookupShoot: opts.lookupShoot } : {}),
    ...(opts.extensions ? { extensions: opts.extensions } : {}),
    ...(opts.extensionAdmission ? { extensionAdmission: opts.extensionAdmission } : {}),
    onInternalError: (e, uid) => logger.error({ err: e, uid }, 'admission failed'),
  };
}
