/**
 * Asking a real DNS server (BIND9 of the tests) the way a user's resolver would.
 */
import { Resolver } from 'node:dns/promises';

/**
 * The sorted A or AAAA answers of `server` for `name`, or the resolver's error code (ENOTFOUND, ENODATA). A fresh
 * resolver per query: c-ares caches per channel.
 */
export async function queryDNS(server: string, type: 'A' | 'AAAA', name: string): Promise<string[] | string> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([server]);
  try {
    return (type === 'AAAA' ? await resolver.resolve6(name) : await resolver.resolve4(name)).sort();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}
