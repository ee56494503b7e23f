/**
 * What the webhook server does with each request: `/healthz` and `/readyz`, the aggregated admin kubeconfig API, and
 * the reviews of `/validate`, `/mutate` and `/seed-restriction`: room for the body in flight, the body read and
 * pre-scanned as it arrives, its review queued smallest first, decoded and answered, the answers written together at
 * the end of their turn. Everything about the answers themselves is in review.ts; server.ts owns the socket.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../runtime/log.js';
import { failureStatus } from '../apis/field/index.js';
import { BodyRefusal, parseReview, ReviewBodyReader, type BodyLimits } from './decode.js';
import type { InFlightBytes } from './in-flight.js';
import { answerText } from './answer-json.js';
import { replyJSONText, replyMethodNotAllowed, replyStatus } from './reply.js';
import { SmallestFirstQueue } from './review-queue.js';
import { ReviewResult, type AdmissionMetrics } from './metrics.js';
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
import { WEBHOOK_PATHS } from './webhook-configurations.js';
import {
  isAdminKubeconfigAPIPath,
  serveAdminKubeconfigAPI,
  type AdminKubeconfigAPIOptions,
} from './admin-kubeconfig-api.js';

/** The API server's max-in-flight filter answers 429 with this Retry-After too. */
const RETRY_AFTER_SECONDS = 1;

/** What the handler is told by the server's options (see AdmissionServerOptions, where each is described). */
export interface RequestHandlerConfig {
  readonly logger: Logger;
  readonly context: AdmissionContext;
  readonly bodyLimits: BodyLimits;
  readonly inFlight: InFlightBytes;
  readonly inFlightWaitMs: number;
  readonly ready: () => boolean;
  readonly metrics: AdmissionMetrics | undefined;
  readonly adminKubeconfig: AdminKubeconfigAPIOptions | undefined;
}

const MODES: Readonly<Record<string, AdmissionMode>> = {
  [WEBHOOK_PATHS.validate]: 'validate',
  [WEBHOOK_PATHS.mutate]: 'mutate',
  [WEBHOOK_PATHS.seedRestriction]: 'seed-restriction',
};

/** A body as read, and its keys as the pre-scan counted them (see decode.ts). */
interface ReadBody {
  readonly bytes: Buffer;
  readonly keys: number;
}

export class ReviewRequestHandler {
  private readonly reviews = new SmallestFirstQueue();

  constructor(private readonly config: RequestHandlerConfig) {}

  /** The server's request listener: never throws, an unexpected error is a 500 (or a cut connection). */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      const served = this.serve(req, res);
      if (served instanceof Promise) served.catch((e: unknown) => this.failed(res, e));
    } catch (e) {
      this.failed(res, e);
    }
  };

  private failed(res: ServerResponse, e: unknown): void {
    this.config.logger.error({ err: e }, 'serving a request failed');
    if (!res.headersSent) replyStatus(res, 500, 'internal error');
    else res.destroy();
  }

  /** Serves a request; a promise only while it waits for room in flight or the aggregated API answers. */
  private serve(req: IncomingMessage, res: ServerResponse): MaybePromise<void> {
    const { config } = this;
    // The API server appends `?timeout=10s`.
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (path === '/healthz' || path === '/readyz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return replyMethodNotAllowed(res, 'GET, HEAD');
      const ok = path === '/healthz' || isReady(config.ready);
      res
        .writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(ok ? 'ok' : 'not ready: caches not synced');
      return;
    }
    if (config.adminKubeconfig !== undefined && isAdminKubeconfigAPIPath(path)) {
      return serveAdminKubeconfigAPI(req, res, path, config.adminKubeconfig);
    }
    const mode = Object.prototype.hasOwnProperty.call(MODES, path) ? MODES[path] : undefined;
    if (mode === undefined) return replyStatus(res, 404, `no handler for ${path}`);
    if (req.method !== 'POST') return replyMethodNotAllowed(res, 'POST');
    const contentType = req.headers['content-type'];
    if (contentType !== undefined && !/^application\/json\b/i.test(contentType)) {
      return replyStatus(
        res,
        415,
        `unsupported content type ${JSON.stringify(contentType)}: expected application/json`,
      );
    }

    // The body's room in flight: as announced, the most a body may be when not (chunked); none for a body announced
    // over the limit (refused at once, unread).
    const { bodyLimits, inFlight } = config;
    const announced = contentLength(req);
    if (announced !== undefined && announced > bodyLimits.maxBytes)
      return this.receive(req, res, path, mode, announced);
    const cost = Math.min(announced ?? bodyLimits.maxBytes, bodyLimits.maxBytes);
    if (inFlight.tryAcquire(cost)) return this.receive(req, res, path, mode, announced, cost);
    return inFlight.acquire(cost, config.inFlightWaitMs).then((acquired) => {
      if (acquired) return this.receive(req, res, path, mode, announced, cost);
      config.logger.info({ path, bytes: cost, inFlightBytes: inFlight.bytes }, 'too many request bytes in flight');
      replyStatus(res, 429, 'Too many requests, please try again later.', {
        details: { retryAfterSeconds: RETRY_AFTER_SECONDS },
        // The body is not read: the connection is not reused.
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS), Connection: 'close' },
      });
    });
  }

  /**
   * Reads the body, holding `cost` bytes of room in flight (none for a body refused unread), and queues its review:
   * in the turn its last chunk arrives, without a promise.
   */
  private receive(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    mode: AdmissionMode,
    announced: number | undefined,
    cost?: number,
  ): void {
    const { inFlight } = this.config;
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
    readBody(req, this.config.bodyLimits, announced, (error, body) => {
      if (body === undefined) {
        try {
          return this.refuse(res, path, mode, error);
        } catch (e) {
          return this.failed(res, e);
        }
      }
      // Queued, the body is held until its review ran, whether or not its client is still there: the bytes are given
      // back then (a client that sends a body and goes must not take its bytes out of the count).
      queued = true;
      this.reviews.add(
        body.bytes.length,
        () => {
          // Its client went while it waited: nobody reads the answer.
          if (req.socket.destroyed) return release();
          const answered = this.answer(body, path, mode, res);
          if (answered instanceof Promise) return answered.finally(release);
          release();
        },
        (e) => {
          release();
          this.failed(res, e);
        },
      );
    });
  }

  private refuse(res: ServerResponse, path: string, mode: AdmissionMode, e: unknown): void {
    if (!(e instanceof BodyRefusal)) throw e;
    this.config.logger.info({ path, code: e.code, uid: e.uid, reason: e.message }, 'refused a request');
    if (e.uid !== undefined && e.code === 400) {
      this.config.metrics?.observe(mode, 'other', ReviewResult.Denied, 0);
      return sendReview(res, refusedReview(e.uid, e.message));
    }
    // After a 413 the rest of the body is read and dropped; the connection is not reused.
    if (e.code === 413) res.setHeader('Connection', 'close');
    replyStatus(res, e.code, e.message);
  }

  /** Answers a review; synchronously when the seed lookup is (a promise only while it waits for a live read). */
  private answer(body: ReadBody, path: string, mode: AdmissionMode, res: ServerResponse): MaybePromise<void> {
    let review: AdmissionReview;
    try {
      review = parseReview(body.bytes, body.keys);
    } catch (e) {
      return this.refuse(res, path, mode, e);
    }
    const started = performance.now();
    const answer = answerAdmissionReview(review, this.config.context, mode);
    if (answer instanceof Promise) {
      return answer.then((a) => this.respond(res, mode, review, a, performance.now() - started));
    }
    this.respond(res, mode, review, answer, performance.now() - started);
  }

  private respond(
    res: ServerResponse,
    mode: AdmissionMode,
    review: AdmissionReview,
    answer: AdmissionReviewResponse,
    durationMs: number,
  ): void {
    const { logger, metrics } = this.config;
    metrics?.observe(mode, kindOf(review), resultOf(answer), durationMs / 1000);
    // A denial is an ordinary answer (the client gets the reasons); errors were logged by onInternalError.
    if (logger.isLevelEnabled('debug')) logReview(logger, mode, review, answer, durationMs);
    this.reviews.afterTurn(
      () => sendReview(res, answer),
      (e) => this.failed(res, e),
    );
  }
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
