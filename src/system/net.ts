/**
 * IPv6 address helpers of the host: free ports on a (loopback) address and URL hosts.
 */
import { createServer } from 'node:net';
import { isIPv6 } from 'node:net';

/** `::1` → `[::1]`; IPv4 addresses and names stay as they are. For URLs and `host:port` strings. */
export function urlHost(address: string): string {
  return isIPv6(address) ? `[${address}]` : address;
}

/**
 * A port nobody listens on at `address` right now: bind port 0, read it, close. Another process could take it
 * before our child binds it; the children fail loudly then (address in use), which beats a fixed port.
 */
export function freePort(address = '::1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(
          e.code === 'EADDRNOTAVAIL'
            ? `cannot bind ${urlHost(address)}: the address does not exist here (is IPv6 disabled on loopback?)`
            : `cannot find a free port on ${urlHost(address)}: ${e.message}`,
        ),
      ),
    );
    server.listen({ host: address, port: 0, exclusive: true }, () => {
      const bound = server.address();
      server.close(() =>
        typeof bound === 'object' && bound !== null ? resolve(bound.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Distinct free ports (asking one by one could return the same port twice once it is closed again). */
export async function freePorts(count: number, address = '::1'): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(address));
  return [...ports];
}
