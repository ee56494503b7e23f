/** What the commands' flags share: their help texts and the parsers of flags that several commands have. */
import type { CliIO } from '../io.js';
import { InputError } from '../io.js';

/** What a command writes to and how it ends. */
export interface CommandContext {
  readonly io: CliIO;
  readonly setExitCode: (code: number) => void;
}

/** `--load-balancer-ipv4/-ipv6` as HostIPs; a bad address is an input error. */
export async function hostIPsOption(ipv4: string, ipv6: string) {
  const { parseHostIPs } = await import('../../extensions/provider-local/loadbalancer/ingress.js');
  try {
    return parseHostIPs(ipv4, ipv6);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
}

/** `--load-balancer-networks`: CIDRs, at most one per family. */
export async function loadBalancerNetworksOption(list: string) {
  const { parseCIDR } = await import('../../net/cidr.js');
  const { parseLoadBalancerNetworks } = await import('../../extensions/provider-local/loadbalancer/pool.js');
  const networks: Record<string, string> = {};
  for (const text of list.split(',').map((s) => s.trim())) {
    const cidr = parseCIDR(text);
    if (cidr === undefined) throw new InputError(`--load-balancer-networks: ${JSON.stringify(text)} is not a CIDR`);
    if (networks[cidr.family] !== undefined) {
      throw new InputError(`--load-balancer-networks: two ${cidr.family} networks (${networks[cidr.family]}, ${text})`);
    }
    networks[cidr.family] = text;
  }
  try {
    parseLoadBalancerNetworks(networks);
  } catch (e) {
    throw new InputError(`--load-balancer-networks: ${(e as Error).message}`);
  }
  return networks;
}

export const MACHINES_PER_POOL_HELP = 'the most machines (minimum, maximum) of a shoot worker pool the webhook admits';
export const MACHINES_PER_SHOOT_HELP = "the most machines of a shoot (its pools' maximums together) the webhook admits";
export const MACHINES_HELP = 'the most machines of all shoots together the webhook admits';

/**
 * `--max-machines-per-pool`, `--max-machines-per-shoot` and `--max-machines`: whole numbers from 1; unset ones keep
 * the defaults.
 */
export function machineLimitsOption(opts: {
  maxMachinesPerPool?: unknown;
  maxMachinesPerShoot?: unknown;
  maxMachines?: unknown;
}) {
  const limit = (flag: string, text: unknown): number | undefined => {
    if (text === undefined) return undefined;
    if (typeof text !== 'string' || !/^[1-9]\d{0,5}$/.test(text)) {
      throw new InputError(`--${flag} ${JSON.stringify(text)}: a whole number from 1 to 999999`);
    }
    return Number(text);
  };
  const perPool = limit('max-machines-per-pool', opts.maxMachinesPerPool);
  const perShoot = limit('max-machines-per-shoot', opts.maxMachinesPerShoot);
  const total = limit('max-machines', opts.maxMachines);
  return {
    ...(perPool !== undefined ? { maxMachinesPerPool: perPool } : {}),
    ...(perShoot !== undefined ? { maxMachinesPerShoot: perShoot } : {}),
    ...(total !== undefined ? { maxMachines: total } : {}),
  };
}

export const FEATURE_GATES_HELP =
  'feature gates, e.g. IPv6SingleStack=true,DualStack=true (known: DualStack, IPv6SingleStack)';

export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The default of `--max-input-size`: DEFAULT_MAX_INPUT_BYTES of documents.ts, which `--help` must not load. */
export const MAX_INPUT_SIZE_DEFAULT = '64Mi';
export const MAX_INPUT_SIZE_HELP = 'refuse inputs (all files together) larger than this, e.g. 64Mi, 1Gi (exit 2)';

export async function maxInputSizeOption(text: string): Promise<number> {
  const { parseByteSize } = await import('../documents.js');
  const bytes = parseByteSize(text);
  if (bytes === undefined) {
    throw new InputError(`--max-input-size: ${JSON.stringify(text)} is not a size (e.g. 64Mi, 1Gi, 1048576)`);
  }
  return bytes;
}
