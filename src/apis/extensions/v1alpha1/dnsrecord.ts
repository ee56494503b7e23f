import { z } from 'zod';
import { int64, ObjectMetaSchema, RawExtensionSchema, SecretReferenceSchema } from '../../meta/schemas.js';
import { API_VERSION, DefaultStatusShape } from './common.js';

export const DNSRecordType = { A: 'A', AAAA: 'AAAA', CNAME: 'CNAME', TXT: 'TXT' } as const;
export type DNSRecordType = (typeof DNSRecordType)[keyof typeof DNSRecordType];
export const DNS_RECORD_TYPES: readonly DNSRecordType[] = ['A', 'AAAA', 'CNAME', 'TXT'];

export const DNSRecordSpecSchema = z.strictObject({
  type: z.string().optional(),
  class: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  secretRef: SecretReferenceSchema.optional(),
  region: z.string().optional(),
  zone: z.string().optional(),
  name: z.string().optional(),
  recordType: z.string().optional(),
  values: z.array(z.string()).optional(),
  ttl: int64().optional(),
});
export type DNSRecordSpec = z.infer<typeof DNSRecordSpecSchema>;

export const DNSRecordSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('DNSRecord'),
    metadata: ObjectMetaSchema,
    spec: DNSRecordSpecSchema,
    status: z.looseObject({ ...DefaultStatusShape, zone: z.string().optional() }).optional(),
  })
  .meta({ description: 'DNSRecord is a specification for a DNS record.' });
export type DNSRecord = z.infer<typeof DNSRecordSchema>;
