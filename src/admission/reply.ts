/**
 * How the webhook's HTTP handlers answer: one JSON body, its length announced, in one write; an error as a `Status`
 * with apimachinery's reason for its code, so that the API server's error message (or a client's) shows why.
 */
import type { ServerResponse } from 'node:http';
import { failureStatus, type StatusDetails } from '../apis/field/index.js';

export function replyJSON(
  res: ServerResponse,
  code: number,
  body: object,
  headers?: Readonly<Record<string, string>>,
): void {
  const text = JSON.stringify(body);
  replyJSONText(res, code, text, Buffer.byteLength(text), headers);
}

/** {@link replyJSON} of a body already in JSON, `bytes` long in UTF-8. */
export function replyJSONText(
  res: ServerResponse,
  code: number,
  text: string,
  bytes: number,
  headers?: Readonly<Record<string, string>>,
): void {
  // The reviews' answers take the first form: the same two headers, no copy.
  const head = { 'Content-Type': 'application/json', 'Content-Length': bytes };
  res.writeHead(code, headers === undefined ? head : { ...head, ...headers }).end(text);
}

/** apimachinery's reason for each error code the webhook's handlers answer with. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalError',
};

/** An error answer: a failure `Status` of `code`, its reason apimachinery's for the code. */
export function replyStatus(
  res: ServerResponse,
  code: number,
  message: string,
  extra: { readonly details?: StatusDetails; readonly headers?: Readonly<Record<string, string>> } = {},
): void {
  replyJSON(res, code, failureStatus(code, REASONS[code] ?? 'Unknown', message, extra.details), extra.headers);
}

/** 405 naming the methods the path takes (`Allow`). */
export function replyMethodNotAllowed(
  res: ServerResponse,
  allow: string,
  message = `method not allowed: use ${allow}`,
): void {
  res.setHeader('Allow', allow);
  replyStatus(res, 405, message);
}
