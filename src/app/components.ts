/** The parts `gardener-ipv6 run --components` can start (a module of its own: the CLI lists them without loading them). */
export const COMPONENTS = ['admission', 'gardenlet', 'network', 'dns', 'scheduler'] as const;
export type Component = (typeof COMPONENTS)[number];
