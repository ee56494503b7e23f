/**
 * A minimal JSON client for the shoot's API server with a client certificate: what a machine needs (its Node, the
 * other Nodes) without a kubeconfig file or the full client library.
 */
import { Agent, request } from 'node:https';

/**
 * Connections kept open between requests: a machine reads the Nodes every few seconds for as long as it runs, and a
 * new connection each time was a TLS handshake (and a new TLS context from the PEMs) on both ends per request, per
 * machine. Pooled per server and credentials (the agent keys its pools by them); idle ones close after 30 s, well
 * before the API server's own idle timeout.
 */
const keepAlive = new Agent({ keepAlive: true, maxFreeSockets: 2, timeout: 30_000 });
/** Watches hold their connection for minutes without a byte when nothing changes: no idle timeout. */
const watches = new Agent({ keepAlive: false });

export interface APIServerAccess {
  /** `https://[fd00:ff::10]:443`. */
  url: string;
  caPEM: string;
  /** Verify the serving certificate for this name instead of the URL's host. */
  tlsServerName?: string;
}

export interface ClientCredentials {
  certPEM: string;
  keyPEM: string;
}

export class HTTPError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

/** The server to trust and the client certificate to show, for a request or a watch. */
function tlsOptions(server: APIServerAccess, credentials: ClientCredentials) {
  return {
    ca: server.caPEM,
    cert: credentials.certPEM,
    key: credentials.keyPEM,
    ...(server.tlsServerName ? { servername: server.tlsServerName } : {}),
  };
}

export function requestJSON<T>(
  server: APIServerAccess,
  credentials: ClientCredentials,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 5000,
  contentType = 'application/json',
): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, server.url),
      {
        method,
        agent: keepAlive,
        ...tlsOptions(server, credentials),
        timeout: timeoutMs,
        headers: {
          accept: 'application/json',
          ...(payload !== undefined
            ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(new HTTPError(status, text, `${method} ${path}`));
          try {
            resolve(JSON.parse(text) as T);
          } catch (e) {
            reject(new Error(`${method} ${path}: invalid JSON: ${(e as Error).message}`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs}ms`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** One event of a watch, as the API server streams it. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/**
 * Streams the events of a watch (`path` with `watch=1` and where to start) to `onEvent` until the server ends it (at
 * its `timeoutSeconds`: resolves) or it fails (an HTTP error, an ERROR event such as 410 Gone, a broken connection:
 * rejects). Aborting `signal` resolves at once.
 */
export function watchJSON<T>(
  server: APIServerAccess,
  credentials: ClientCredentials,
  path: string,
  onEvent: (event: WatchEvent<T>) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      if (err === undefined || signal.aborted) resolve();
      else reject(err);
    };
    const onAbort = () => finish();
    const req = request(
      new URL(path, server.url),
      {
        method: 'GET',
        agent: watches,
        ...tlsOptions(server, credentials),
        headers: { accept: 'application/json' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => finish(new HTTPError(status, text, `GET ${path}`)));
          return;
        }
        res.setEncoding('utf8');
        let buffered = '';
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while (!done && (nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line === '') continue;
            let event: WatchEvent<T>;
            try {
              event = JSON.parse(line) as WatchEvent<T>;
            } catch {
              return finish(new Error(`GET ${path}: malformed watch event`));
            }
            if (event.type === 'ERROR') {
              const message = (event.object as { message?: string } | undefined)?.message ?? 'watch error';
              return finish(new Error(`GET ${path}: ${message}`));
            }
            onEvent(event);
          }
        });
        res.on('end', () => finish());
        res.on('error', (e) => finish(e));
        res.on('close', () => finish(new Error(`GET ${path}: watch connection closed`)));
      },
    );
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e) => finish(e));
    req.end();
  });
}

/** The parts of a Node a machine looks at. */
export interface NodeInfo {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { podCIDRs?: string[]; podCIDR?: string };
  status?: {
    addresses?: { type: string; address: string }[];
    conditions?: { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string }[];
  };
}

export function nodeReady(node: NodeInfo): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** The line `up` prints for a Node: readiness, InternalIPs, podCIDRs. */
export function describeNode(node: NodeInfo): string {
  const ips = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  return (
    `  node ${node.metadata.name}: ${nodeReady(node) ? 'Ready' : 'NotReady'}, InternalIP ${ips.join(', ')}, ` +
    `podCIDRs ${nodePodCIDRs(node).join(', ')}`
  );
}

export function nodePodCIDRs(node: NodeInfo): string[] {
  return node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
}
