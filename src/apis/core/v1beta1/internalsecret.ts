/**
 * InternalSecret (core.gardener.cloud/v1beta1), as Gardener's: a Secret of the garden that project members can't
 * read, because it is another resource than `secrets` (a role granting Secrets grants no InternalSecrets). The
 * gardenlet keeps a shoot's client CA in one, `<shoot>.ca-client` in the shoot's project namespace, so that the
 * garden's `shoots/adminkubeconfig` signs with it wherever the shoot's seed is.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../meta/schemas.js';
import { API_VERSION } from './shoot.js';

export const InternalSecretSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('InternalSecret'),
    metadata: ObjectMetaSchema,
    /** Base64 values, as a Secret's. */
    data: z.record(z.string(), z.string()).optional(),
    stringData: z.record(z.string(), z.string()).optional(),
    type: z.string().optional(),
    immutable: z.boolean().optional(),
  })
  .meta({ description: 'InternalSecret holds secret data of the garden that project members cannot read.' });
export type InternalSecret = z.infer<typeof InternalSecretSchema>;

/** The shoot's client CA (`ca.crt`, `ca.key`) in its project namespace. */
export function caClientName(shootName: string): string {
  return `${shootName}.ca-client`;
}
