/**
 * Authentication of the requests the API server's aggregator proxies to an aggregated API, as every aggregated API
 * server does it: the connection's client certificate must be the aggregator's (`--proxy-client-cert-file`), signed by
 * the request-header CA and with a common name among the allowed names; then the user is who the headers
 * (`X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-*`) say. The API server publishes that configuration in the
 * ConfigMap `kube-system/extension-apiserver-authentication`.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { CallOptions, ResourceClient } from '../runtime/client.js';
import { Refs } from '../apis/refs.js';

export const AUTHENTICATION_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

export interface RequestHeaderConfig {
  /** PEM of the CAs that sign the aggregator's client certificate. */
  readonly clientCA: string;
  /** Common names the aggregator's certificate may have; empty: any signed by the CA. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

function stringList(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) {
    throw new Error(`expected a JSON list of strings, not ${text.slice(0, 100)}`);
  }
  return parsed;
}

/** The request-header configuration the API server published; undefined when it has no aggregation layer. */
export async function readRequestHeaderConfig(
  client: ResourceClient,
  opts: CallOptions = {},
): Promise<RequestHeaderConfig | undefined> {
  const cm = await client.get<V1ConfigMap>(
    Refs.configMap,
    AUTHENTICATION_CONFIGMAP.name,
    AUTHENTICATION_CONFIGMAP.namespace,
    opts,
  );
  const data = cm?.data ?? {};
  const clientCA = data['requestheader-client-ca-file'];
  if (!clientCA) return undefined;
  return {
    clientCA,
    allowedNames: stringList(data['requestheader-allowed-names']),
    usernameHeaders: stringList(data['requestheader-username-headers']),
    uidHeaders: stringList(data['requestheader-uid-headers']),
    groupHeaders: stringList(data['requestheader-group-headers']),
    extraHeaderPrefixes: stringList(data['requestheader-extra-headers-prefix']),
  };
}

/** The common name of a certificate's subject (Node renders it `key=value` per line). */
function commonName(cert: X509Certificate): string | undefined {
  for (const line of cert.subject.split('\n')) if (line.startsWith('CN=')) return line.slice(3);
  return undefined;
}

/** Every value of a header, repeated headers included. */
function headerValues(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name.toLowerCase()] ?? [];
}

/**
 * The user the aggregator proxied the request for, or the reason it is not one: the TLS layer verified the client
 * certificate against `config.clientCA` (the server's `ca`, with `requestCert`), this checks it was verified, its
 * common name, and reads the headers.
 */
export function authenticateFrontProxy(
  req: IncomingMessage,
  config: RequestHeaderConfig,
): { user: UserInfo } | { error: string } {
  const socket = req.socket as TLSSocket;
  const peer = typeof socket.getPeerX509Certificate === 'function' ? socket.getPeerX509Certificate() : undefined;
  if (peer === undefined) return { error: 'no client certificate' };
  if (!socket.authorized) return { error: `client certificate not trusted: ${String(socket.authorizationError)}` };
  const cn = commonName(peer);
  if (config.allowedNames.length > 0 && (cn === undefined || !config.allowedNames.includes(cn))) {
    return { error: `client certificate ${JSON.stringify(cn ?? '')} is not among the allowed request-header names` };
  }
  let username: string | undefined;
  for (const h of config.usernameHeaders) {
    const v = headerValues(req, h)[0];
    if (v) {
      username = v;
      break;
    }
  }
  if (username === undefined) return { error: 'no user in the request headers' };
  let uid: string | undefined;
  for (const h of config.uidHeaders) {
    const v = headerValues(req, h)[0];
    if (v) {
      uid = v;
      break;
    }
  }
  const groups = config.groupHeaders.flatMap((h) => headerValues(req, h));
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes) {
    const lower = prefix.toLowerCase();
    for (const [name, values] of Object.entries(req.headersDistinct)) {
      if (!name.startsWith(lower) || values === undefined) continue;
      // Keys are percent-encoded by the aggregator (they may hold `/`), lower-cased as HTTP header names are.
      const key = decodeURIComponent(name.slice(lower.length));
      (extra[key] ??= []).push(...values);
    }
  }
  return { user: { username, ...(uid !== undefined ? { uid } : {}), groups, extra } };
}
