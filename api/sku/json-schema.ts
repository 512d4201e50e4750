/** JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) of a SKU's zod schemas, self-contained. */
import { z } from 'zod';
import type { PricedSku } from './sku.js';

export type JsonSchema = Record<string, unknown>;

export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

const cache = new WeakMap<z.ZodType, { input?: JsonSchema; output?: JsonSchema }>();

function cached(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  let entry = cache.get(schema);
  if (!entry) cache.set(schema, (entry = {}));
  return (entry[io] ??= jsonSchemaOf(schema, io));
}

/** The request schema (query parameters or JSON body) of a SKU. */
export const inputJsonSchema = (sku: PricedSku): JsonSchema => cached(sku.input, 'input');
/** The 200 body schema of a SKU. */
export const outputJsonSchema = (sku: PricedSku): JsonSchema => cached(sku.output, 'output');

export interface ParamDoc {
  type: string;
  required: boolean;
  description: string;
}

/** name -> {type, required, description} of a SKU's top-level input properties (discovery `params`). */
export function paramsOf(sku: PricedSku): Record<string, ParamDoc> {
  const schema = inputJsonSchema(sku);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.fromEntries(
    Object.entries(properties).map(([name, p]) => [
      name,
      { type: typeText(p), required: required.has(name), description: String(p.description ?? '') },
    ]),
  );
}

function typeText(p: JsonSchema): string {
  if (p.type === 'array') return `${p.items ? typeText(p.items as JsonSchema) : 'any'}[]`;
  if (typeof p.type === 'string') return p.type;
  if (Array.isArray(p.type)) return p.type.join(' | ');
  if (Array.isArray(p.anyOf)) return (p.anyOf as JsonSchema[]).map(typeText).join(' | ');
  if (Array.isArray(p.enum)) return 'string';
  return 'any';
}
