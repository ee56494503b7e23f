/** How the webhook's HTTP handlers answer: one JSON body, its length announced, in one write. */
import type { ServerResponse } from 'node:http';

export function replyJSON(
  res: ServerResponse,
  code: number,
  body: object,
  headers?: Readonly<Record<string, string>>,
): void {
  const text = JSON.stringify(body);
  // The reviews' answers take the first form: the same two headers, no copy.
  const head = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  res.writeHead(code, headers === undefined ? head : { ...head, ...headers }).end(text);
}
