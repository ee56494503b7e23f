/**
 * The definition zod 4 keeps on every schema (`schema._zod.def`), as far as this project's walks over schemas read
 * it: proto-keys.ts (which keys decoding drops) and compiled-parse.ts (the compiled decoders).
 */
import type { z } from 'zod';

export interface ZodDef {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly catchall?: z.ZodType;
  readonly element?: z.ZodType;
  readonly keyType?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly getter?: () => z.ZodType;
  readonly values?: readonly unknown[];
  readonly checks?: readonly { _zod: { def: ZodCheckDef } }[];
}

export interface ZodCheckDef {
  readonly check: string;
  readonly format?: string;
  readonly value?: unknown;
  readonly inclusive?: boolean;
}

export const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
