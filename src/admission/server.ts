/**
 * The admission webhook server: HTTPS, `POST /validate` and `POST /mutate` with `admission.k8s.io/v1`
 * AdmissionReviews, `GET /healthz` and `GET /readyz`. Everything about the answers is in review.ts; this file is
 * transport, logging and metrics.
 *
 * Kept as one file (over 400 lines): startAdmissionServer is one closure over the server's state (its queue, the body
 * bytes in flight, readiness) and the functions below it are the replies it sends; what stands alone is in files of its
 * own (decode.ts, in-flight.ts, review-queue.ts, metrics.ts).
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ExtensionAdmission } from '../apis/admission.js';
import { failureStatus, type StatusDetails } from '../apis/field/index.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { newLogger, type Logger } from '../runtime/log.js';
import type { RegisteredExtensionTypes } from './extensions.js';
import { BodyRefusal, parseReview, ReviewBodyReader, type BodyLimits } from './decode.js';
import { InFlightBytes } from './in-flight.js';
import { answerText } from './answer-json.js';
import { replyJSON, replyJSONText } from './reply.js';
import { SmallestFirstQueue } from './review-queue.js';
import { AdmissionMetrics, ReviewResult } from './metrics.js';
import {
  ADMISSION_API_VERSION,
  ADMITTED_KINDS,
  answerAdmissionReview,
  type AdmissionContext,
  type AdmissionMode,
  type AdmissionReview,
  type AdmissionReviewResponse,
  type MaybePromise,
} from './review.js';
import { WEBHOOK_PATHS, webhookBaseURL } from './webhook-configurations.js';
import {
  isAdminKubeconfigAPIPath,
  serveAdminKubeconfigAPI,
  type AdminKubeconfigAPIOptions,
} from './admin-kubeconfig-api.js';

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
/** The API server's max-in-flight filter answers 429 with this Retry-After too. */
const RETRY_AFTER_SECONDS = 1;
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
  const bodyLimits: BodyLimits = {
    maxBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxDepth: opts.maxJSONDepth ?? DEFAULT_MAX_JSON_DEPTH,
    maxValues: opts.maxJSONValues ?? DEFAULT_MAX_JSON_VALUES,
    maxObjectKeys: opts.maxJSONObjectKeys ?? DEFAULT_MAX_JSON_OBJECT_KEYS,
  };
  const modes: Record<string, AdmissionMode> = {
    [WEBHOOK_PATHS.validate]: 'validate',
    [WEBHOOK_PATHS.mutate]: 'mutate',
    [WEBHOOK_PATHS.seedRestriction]: 'seed-restriction',
  };

  const failed = (res: ServerResponse) => (e: unknown) => {
    logger.error({ err: e }, 'serving a request failed');
    if (!res.headersSent) sendStatus(res, 500, 'internal error');
    else res.destroy();
  };
  const server = https.createServer(
    { ...(await readTLS(opts.tls)), minVersion: 'TLSv1.2', ...clientAuthentication(opts) },
    (req, res) => {
      try {
        const served = serve(req, res);
        if (served instanceof Promise) served.catch(failed(res));
      } catch (e) {
        failed(res)(e);
      }
    },
  );
  server.requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(server.headersTimeout, server.requestTimeout);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('tlsClientError', (e) => logger.debug({ err: e }, 'TLS handshake failed'));

  const metrics = opts.metrics ? new AdmissionMetrics(opts.metrics) : undefined;
  const reviews = new SmallestFirstQueue();
  const inFlight = new InFlightBytes(
    opts.maxInFlightBodyBytes ?? DEFAULT_MAX_IN_FLIGHT_BODY_BYTES,
    RESERVED_BODY_BYTES,
    SMALL_BODY_BYTES,
  );
  const inFlightWaitMs = opts.inFlightWaitMs ?? DEFAULT_IN_FLIGHT_WAIT_MS;
  const ready = opts.ready ?? (() => true);
  // One context for every review.
  const context: AdmissionContext = {
    gates: opts.gates,
    lookupSeed: opts.lookupSeed,
    ...(opts.lookupCloudProfile ? { lookupCloudProfile: opts.lookupCloudProfile } : {}),
    ...(opts.lookupShoot ? { lookupShoot: opts.lookupShoot } : {}),
    ...(opts.extensions ? { extensions: opts.extensions } : {}),
    ...(opts.extensionAdmission ? { extensionAdmission: opts.extensionAdmission } : {}),
    onInternalError: (e, uid) => logger.error({ err: e, uid }, 'admission failed'),
  };

  /** Serves a request; a promise only while it waits for room in flight or the aggregated API answers. */
  function serve(req: IncomingMessage, res: ServerResponse): MaybePromise<void> {
    // The API server appends `?timeout=10s`.
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (path === '/healthz' || path === '/readyz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, 'GET, HEAD');
      const ok = path === '/healthz' || isReady(ready);
      res
        .writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(ok ? 'ok' : 'not ready: caches not synced');
      return;
    }
    if (opts.adminKubeconfig !== undefined && isAdminKubeconfigAPIPath(path)) {
      return serveAdminKubeconfigAPI(req, res, path, opts.adminKubeconfig);
    }
    const mode = Object.prototype.hasOwnProperty.call(modes, path) ? modes[path] : undefined;
    if (mode === undefined) return sendStatus(res, 404, `no handler for ${path}`);
    if (req.method !== 'POST') return sendMethodNotAllowed(res, 'POST');
    const contentType = req.headers['content-type'];
    if (contentType !== undefined && !/^application\/json\b/i.test(contentType)) {
      return sendStatus(res, 415, `unsupported content type ${JSON.stringify(contentType)}: expected application/json`);
    }

    // The body's room in flight: as announced, the most a body may be when not (chunked); none for a body announced
    // over the limit (refused at once, unread).
    const announced = contentLength(req);
    if (announced !== undefined && announced > bodyLimits.maxBytes) return receive(req, res, path, mode, announced);
    const cost = Math.min(announced ?? bodyLimits.maxBytes, bodyLimits.maxBytes);
    if (inFlight.tryAcquire(cost)) return receive(req, res, path, mode, announced, cost);
    return inFlight.acquire(cost, inFlightWaitMs).then((acquired) => {
      if (acquired) return receive(req, res, path, mode, announced, cost);
      logger.info({ path, bytes: cost, inFlightBytes: inFlight.bytes }, 'too many request bytes in flight');
      sendTooManyRequests(res);
    });
  }

  /**
   * Reads the body, holding `cost` bytes of room in flight (none for a body refused unread), and queues its review:
   * in the turn its last chunk arrives, without a promise.
   */
  function receive(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    mode: AdmissionMode,
    announced: number | undefined,
    cost?: number,
  ): void {
    let released = cost === undefined;
    // Set once the review is queued: from then on the bytes stay counted until it ran, client or not.
    let queued = false;
    const release = (): void => {
      if (released) return;
      released = true;
      inFlight.release(cost!);
    };
    if (cost !== undefined) {
      // Given back once the body is refused or answered; a client gone while it waited gets nothing. One listener
      // for the response's life, not one added and removed per request (`once` wraps it, `off` searches for it).
      if (req.socket.destroyed) return release();
      res.on('close', () => {
        if (!queued) release();
      });
    }
    readBody(req, bodyLimits, announced, (error, body) => {
      if (body === undefined) {
        try {
          return refuse(res, path, mode, error);
        } catch (e) {
          return failed(res)(e);
        }
      }
      // Queued, the body is held until its review ran, whether or not its client is still there: the bytes are given
      // back then (a client that sends a body and goes must not take its bytes out of the count).
      queued = true;
      reviews.add(
        body.bytes.length,
        () => {
          // Its client went while it waited: nobody reads the answer.
          if (req.socket.destroyed) return release();
          const answered = answer(body, path, mode, res);
          if (answered instanceof Promise) return answered.finally(release);
          release();
        },
        (e) => {
          release();
          failed(res)(e);
        },
      );
    });
  }

  function refuse(res: ServerResponse, path: string, mode: AdmissionMode, e: unknown): void {
    if (!(e instanceof BodyRefusal)) throw e;
    logger.info({ path, code: e.code, uid: e.uid, reason: e.message }, 'refused a request');
    if (e.uid !== undefined && e.code === 400) {
      metrics?.observe(mode, 'other', ReviewResult.Denied, 0);
      return sendReview(res, refusedReview(e.uid, e.message));
    }
    // After a 413 the rest of the body is read and dropped; the connection is not reused.
    if (e.code === 413) res.setHeader('Connection', 'close');
    sendStatus(res, e.code, e.message);
  }

  /** Answers a review; synchronously when the seed lookup is (a promise only while it waits for a live read). */
  function answer(body: ReadBody, path: string, mode: AdmissionMode, res: ServerResponse): MaybePromise<void> {
    let review: AdmissionReview;
    try {
      review = parseReview(body.bytes, body.keys);
    } catch (e) {
      return refuse(res, path, mode, e);
    }
    const started = performance.now();
    const answer = answerAdmissionReview(review, context, mode);
    const send = (a: AdmissionReviewResponse) => respond(res, mode, review, a, performance.now() - started);
    if (answer instanceof Promise) return answer.then(send);
    send(answer);
  }

  function respond(
    res: ServerResponse,
    mode: AdmissionMode,
    review: AdmissionReview,
    answer: AdmissionReviewResponse,
    durationMs: number,
  ): void {
    const result = resultOf(answer);
    metrics?.observe(mode, kindOf(review), result, durationMs / 1000);
    // A denial is an ordinary answer (the client gets the reasons); errors were logged by onInternalError.
    if (logger.isLevelEnabled('debug')) logReview(logger, mode, review, answer, durationMs);
    reviews.afterTurn(() => sendReview(res, answer), failed(res));
  }

  const host = opts.host ?? DEFAULT_HOST;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: opts.port ?? DEFAULT_PORT }, () => {
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

/** A body as read, and its keys as the pre-scan counted them (see decode.ts). */
interface ReadBody {
  readonly bytes: Buffer;
  readonly keys: number;
}

/**
 * The body, refusing bodies over the limits ({@link BodyRefusal}): a body announced larger than the size limit at
 * once, one that grows larger as soon as it does, one the pre-scan refuses when it ends (what comes after the point
 * of refusal is read, to keep the connection usable, but not kept). `done` gets the body, or why there is none.
 */
function readBody(
  req: IncomingMessage,
  limits: BodyLimits,
  announced: number | undefined,
  done: (error: unknown, body?: ReadBody) => void,
): void {
  const reader = new ReviewBodyReader(limits, announced);
  if (reader.refusal) {
    req.resume();
    return done(reader.refusal);
  }
  let finished = false;
  const finish = (error: unknown, body?: ReadBody) => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    reader.push(chunk);
    if (reader.refusal?.code === 413) finish(reader.refusal);
  });
  req.on('end', () => {
    if (finished) return;
    let body: ReadBody;
    try {
      body = { bytes: reader.body(), keys: reader.keys };
    } catch (e) {
      return finish(e);
    }
    finish(undefined, body);
  });
  req.on('error', (e) => finish(e));
}

/** The announced Content-Length, undefined when there is none (chunked) or it is no integer. */
function contentLength(req: IncomingMessage): number | undefined {
  const header = req.headers['content-length'];
  if (header === undefined) return undefined;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

const ADMITTED_KIND_NAMES: ReadonlySet<string> = new Set(ADMITTED_KINDS.map((k) => k.kind));

/** The `kind` label: one of the admitted kinds, or `other` (bounded, whatever clients send). */
function kindOf(review: AdmissionReview): string {
  const request = review.request;
  const kind = request?.kind?.kind ?? (request?.object as { kind?: unknown } | undefined)?.kind;
  return typeof kind === 'string' && ADMITTED_KIND_NAMES.has(kind) ? kind : 'other';
}

function resultOf(answer: AdmissionReviewResponse): ReviewResult {
  if (answer.response.allowed) return ReviewResult.Allowed;
  return answer.response.status?.reason === 'InternalError' ? ReviewResult.Error : ReviewResult.Denied;
}

function isReady(ready: () => boolean): boolean {
  try {
    return ready();
  } catch {
    return false;
  }
}

function logReview(
  logger: Logger,
  mode: AdmissionMode,
  review: AdmissionReview,
  answer: AdmissionReviewResponse,
  durationMs: number,
): void {
  const request = review.request;
  const response = answer.response;
  logger.debug(
    {
      webhook: mode,
      uid: request?.uid,
      operation: request?.operation,
      resource: request?.resource?.resource,
      namespace: request?.namespace,
      name: request?.name,
      allowed: response.allowed,
      ...(response.status
        ? { code: response.status.code, reason: response.status.reason, message: response.status.message }
        : {}),
      ...(response.patch ? { patched: true } : {}),
      durationMs: Math.round(durationMs * 10) / 10,
    },
    response.allowed ? 'admitted' : 'denied',
  );
}

function sendReview(res: ServerResponse, answer: AdmissionReviewResponse): void {
  const { text, bytes } = answerText(answer);
  replyJSONText(res, 200, text, bytes);
}

/** apimachinery's reason for each code the server answers with. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalError',
};

/** An error answer, as a `Status` so that the API server's error message shows why. */
function sendStatus(
  res: ServerResponse,
  code: number,
  message: string,
  extra: { details?: StatusDetails; headers?: Record<string, string> } = {},
): void {
  replyJSON(res, code, failureStatus(code, REASONS[code] ?? 'Unknown', message, extra.details), extra.headers);
}

/** The denial of a review whose body was refused before it was parsed. */
function refusedReview(uid: string, message: string): AdmissionReviewResponse {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: false,
      status: failureStatus(
        400,
        'BadRequest',
        `the gardener-ipv6 admission webhook refused the request before decoding it: ${message}`,
      ),
    },
  };
}

/** As the API server's max-in-flight filter answers: 429 with Retry-After, which its clients honour by retrying. */
function sendTooManyRequests(res: ServerResponse): void {
  sendStatus(res, 429, 'Too many requests, please try again later.', {
    details: { retryAfterSeconds: RETRY_AFTER_SECONDS },
    // The body is not read: the connection is not reused.
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS), Connection: 'close' },
  });
}

function sendMethodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  sendStatus(res, 405, `method not allowed: use ${allow}`);
}
