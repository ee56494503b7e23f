import { z } from 'zod';
import { ObjectMetaSchema, RawExtensionSchema } from '../../meta/schemas.js';
import { API_VERSION, DefaultStatusShape } from './common.js';

export const FileSchema = z.strictObject({
  path: z.string(),
  permissions: z.number().int().optional(),
  content: z.strictObject({
    inline: z.strictObject({ encoding: z.string(), data: z.string() }).optional(),
    secretRef: z.strictObject({ name: z.string(), dataKey: z.string() }).optional(),
    imageRef: z.strictObject({ image: z.string(), filePathInImage: z.string() }).optional(),
    transmitUnencoded: z.boolean().optional(),
  }),
});
export type File = z.infer<typeof FileSchema>;

export const UnitSchema = z.strictObject({
  name: z.string(),
  command: z.string().optional(),
  enable: z.boolean().optional(),
  content: z.string().optional(),
  dropIns: z.array(z.strictObject({ name: z.string(), content: z.string() })).optional(),
  filePaths: z.array(z.string()).optional(),
});
export type Unit = z.infer<typeof UnitSchema>;

export const OperatingSystemConfigSpecSchema = z.strictObject({
  type: z.string().optional(),
  class: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  purpose: z.string().optional(),
  units: z.array(UnitSchema).optional(),
  files: z.array(FileSchema).optional(),
  // Not modelled (this project writes neither): kept open.
  criConfig: z.looseObject({}).optional(),
  inPlaceUpdates: z.looseObject({}).optional(),
});

export const OperatingSystemConfigSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('OperatingSystemConfig'),
    metadata: ObjectMetaSchema,
    spec: OperatingSystemConfigSpecSchema,
    status: z.looseObject({ ...DefaultStatusShape }).optional(),
  })
  .meta({
    description: 'OperatingSystemConfig is a specification for a OperatingSystemConfig resource.',
  });
export type OperatingSystemConfig = z.infer<typeof OperatingSystemConfigSchema>;
