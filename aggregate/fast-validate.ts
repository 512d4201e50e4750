/**
 * Hot-path validation of bus messages: the zod schema stays the contract, but
 * checking every message with `schema.safeParse` was a fifth of the
 * aggregate's CPU (a zod run per message, twice per quote: two consumer
 * groups, plus a copy of every object). Here the zod schema is converted once
 * (`z.toJSONSchema`) and compiled by ajv into a plain function that checks
 * the parsed JSON in place:
 *
 *  - same acceptance as zod for what the conversion represents: types,
 *    string lengths counted in UTF-16 units like zod (`unicode: false`), the
 *    regexes without the `u` flag like zod (`unicodeRegExp: false`), safe
 *    integers, enums, nullables, arrays and tuples with their bounds;
 *  - unknown keys are removed (`removeAdditional: 'all'`), as zod's default
 *    object mode strips them, so the event has exactly the schema's keys;
 *  - a message ajv refuses is run through zod, whose issues make the reason
 *    (the dead letter says what zod would have said); if zod accepts it after
 *    all, zod's output is used, so zod decides every rejection;
 *  - schemas the conversion cannot represent faithfully (transforms,
 *    defaults, refinements it cannot express, ...) are validated by zod alone.
 *
 * test/unit/fast-validate.test.ts checks the compiled validators against zod
 * on valid events and on one mutation per constraint.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';

export type ParseResult<T> = { ok: true; event: T } | { ok: false; reason: string };

const ajv = new Ajv2020({
  removeAdditional: 'all',
  allErrors: false,
  // Like zod: string length in UTF-16 code units, regexes without the `u` flag.
  unicodeRegExp: false,
  // ajv 8 honours `unicode: false` for minLength/maxLength (not in its option types).
  ...({ unicode: false } as object),
  strict: false,
  validateFormats: false,
  // ajv prints a deprecation notice for `unicode`, which it still honours (limitLength.js): drop that one line only.
  logger: {
    log: () => undefined,
    warn: (...args: unknown[]) => {
      if (!String(args[0]).includes('option unicode')) console.warn(...args);
    },
    error: (...args: unknown[]) => console.error(...args),
  },
});

/** Keywords whose meaning the zod conversion may only approximate: such schemas stay with zod. */
const UNSAFE_KEYWORDS = new Set([
  'default',
  'format',
  'contentEncoding',
  'contentMediaType',
  '$ref',
  '$defs',
  'allOf',
  'not',
  'if',
  'oneOf',
  'const',
  'multipleOf',
]);

const compiled = new WeakMap<z.ZodType, ValidateFunction | null>();

function usesUnsafeKeyword(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(usesUnsafeKeyword);
  if (node === null || typeof node !== 'object') return false;
  for (const [key, value] of Object.entries(node)) {
    if (UNSAFE_KEYWORDS.has(key)) return true;
    // removeAdditional inside an anyOf of objects would strip keys another branch allows.
    if (key === 'anyOf' && (value as Record<string, unknown>[]).some((b) => b.type === 'object' || 'properties' in b))
      return true;
    // `properties` maps field names (not keywords) to schemas.
    if (key === 'properties' ? Object.values(value as object).some(usesUnsafeKeyword) : usesUnsafeKeyword(value))
      return true;
  }
  return false;
}

/** The compiled validator of a zod schema, or null when zod must validate it alone. */
export function compiledValidator(schema: z.ZodType): ValidateFunction | null {
  let fn = compiled.get(schema);
  if (fn !== undefined) return fn;
  fn = null;
  try {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as Record<string, unknown>;
    delete json.$schema;
    if (!usesUnsafeKeyword(json)) fn = ajv.compile(json);
  } catch {
    fn = null;
  }
  compiled.set(schema, fn);
  return fn;
}

/** Validates a parsed JSON value against a zod schema (fast path above); the event, or zod's reason. */
export function validateWith<T>(json: unknown, schema: z.ZodType<T>, label: string): ParseResult<T> {
  const fast = compiledValidator(schema);
  if (fast && fast(json)) return { ok: true, event: json as T };
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, event: parsed.data };
  return {
    ok: false,
    reason: `invalid ${label}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
  };
}

/** JSON text -> validated event, or the reason it is malformed. */
export function parseJson<T>(text: string, schema: z.ZodType<T>, label: string): ParseResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `invalid ${label}: not JSON (${(err as Error).message})` };
  }
  return validateWith(json, schema, label);
}
