/** How the webhook's HTTP handlers answer: one JSON body, its length announced, in one write. */
import type { ServerResponse } from 'node:http';

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
