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
        ca: server.caPEM,
        cert: credentials.certPEM,
        key: credentials.keyPEM,
        ...(server.tlsServerName ? { servername: server.tlsServerName } : {}),
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

/** The parts of a Node a machine looks at. */
export interface NodeInfo {
  metadata: { name: string; annotations?: Record<string, string> };
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
