/**
 * `gardener-ipv6 images`: the container images a seed runs shoots with, as OCI archives built from the pinned
 * binaries (no registry): the shoot control planes' components, the machine pods' image and the images every
 * machine imports. A seed that is not `up`'s (a kind cluster) loads them into its nodes (`kind load image-archive`).
 */
import type { CliIO } from './io.js';

export async function runImages(io: CliIO): Promise<number> {
  const { machinesOptions } = await import('../app/local-environment.js');
  const options = await machinesOptions({ seed: true });
  const images = await options.images();
  for (const image of images) io.out(`${image.name}\t${image.archive}\n`);
  return 0;
}
