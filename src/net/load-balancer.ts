/** The addresses a LoadBalancer Service's status gives, per family (RFC 5952 for IPv6, each once). */
import { formatIP, parseIP, type IPFamily } from './cidr.js';

/** The part of a Service's status this reads (a `V1Service` fits). */
export interface LoadBalancerStatusHolder {
  readonly status?: { readonly loadBalancer?: { readonly ingress?: readonly { readonly ip?: string }[] } };
}

export function ingressIPsByFamily(service: LoadBalancerStatusHolder | undefined): Record<IPFamily, string[]> {
  const result: Record<IPFamily, string[]> = { IPv4: [], IPv6: [] };
  for (const ingress of service?.status?.loadBalancer?.ingress ?? []) {
    const ip = ingress.ip === undefined ? undefined : parseIP(ingress.ip);
    if (ip && !result[ip.family].includes(formatIP(ip))) result[ip.family].push(formatIP(ip));
  }
  return result;
}
