/**
 * The baseline of the webhook benchmark: a bare Node HTTPS server with the webhook's certificate that reads the body
 * and answers a fixed AdmissionReview (under `/echo/`, one with the request's uid), in a process of its own (plain
 * `node`, as the webhook runs compiled), so that its CPU time and RSS are its own: what serving HTTPS alone costs.
 *
 *   node bench/baseline-server.mjs CERT_DIR   (tls.crt, tls.key)
 *
 * Listens on [::1] at a free port, tells its parent `{ port }` over IPC, stops on SIGTERM or when the parent goes away.
 */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';

export const FIXED_ANSWER = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '00000000-0000-4000-8000-000000000000', allowed: true },
});

/**
 * Under this path the server answers as a webhook the API server accepts: `allowed` with the request's uid (the API
 * server refuses an answer of another uid), found by a search in the body's text, which is all it reads of it. The
 * API server writes the request's uid first.
 */
const ECHO_PREFIX = '/echo/';
const UID = /"uid":"([^"\\]*)"/;

function echoUid(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const uid = UID.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? '';
    const answer = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"${uid}","allowed":true}}`;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) }).end(answer);
  });
}

const certDir = process.argv[2];
if (!certDir) throw new Error('usage: baseline-server.mjs CERT_DIR');
const server = https.createServer(
  {
    cert: readFileSync(join(certDir, 'tls.crt')),
    key: readFileSync(join(certDir, 'tls.key')),
    minVersion: 'TLSv1.2',
  },
  (req, res) => {
    if (req.url?.startsWith(ECHO_PREFIX)) return echoUid(req, res);
    req.on('data', () => {});
    req.on('end', () =>
      res
        .writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(FIXED_ANSWER) })
        .end(FIXED_ANSWER),
    );
  },
);
server.listen({ host: '::1', port: 0 }, () => process.send?.({ port: server.address().port }));
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('disconnect', stop);
