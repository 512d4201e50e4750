/**
 * The Bazaar discovery declaration of a paid route (the `bazaar` extension of
 * its 402 challenge; an MCP tool's is the MCP flavour: tool name, transport,
 * input schema and example), built with @x402/extensions' own `declareDiscoveryExtension`
 * so that its own `validateDiscoveryExtension` accepts it: the request example
 * (`queryParams` for GET, `body` for POST) and its JSON Schema, and the 200
 * body example, all from the catalogue.
 *
 * The header budget (~3.5 KB) decides how much prose fits. Candidates,
 * richest first: the input schema with its field descriptions whole, then cut
 * to their first sentence, then without them; the output example whole, then
 * shortened (arrays cut to their first item, long strings cut), then compact
 * (nested arrays empty, numbers to 2 decimals), then left out last. The schema itself (types, patterns, enums, bounds, required fields)
 * and the input example are never cut, but for one last candidate: the schema without its patterns and without
 * the output example (a route whose long patterns do not fit beside the signed offers).
 */
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { PaidRoute } from './paid-route.js';
import { cutText } from './header-text.js';

const SHORT_STRING = 120;

/** The declarations to try, richest first (the gate keeps the first that fits its header budget). */
export function bazaarCandidates(route: PaidRoute): Record<string, unknown>[] {
  const full = route.inputSchemaJson as Record<string, unknown> | undefined;
  const schemas = full ? [full, describedBriefly(full, 'first-sentence'), describedBriefly(full, 'none')] : [undefined];
  const whole = route.outputExample;
  const examples = whole === undefined ? [] : [whole, shortenExample(whole), compactExample(whole)];
  const pairs: [Record<string, unknown> | undefined, unknown][] = [
    ...schemas.map((schema): [Record<string, unknown> | undefined, unknown] => [schema, whole]),
    ...examples
      .slice(1)
      .flatMap((example) =>
        schemas.slice(1).map((schema): [Record<string, unknown> | undefined, unknown] => [schema, example]),
      ),
    [schemas[schemas.length - 1], undefined],
    // Last resort before no listing at all (a long pattern beside the signed offers: a URL's or a domain's): the
    // schema without its `pattern`s. OpenAPI and the MCP tools keep them whole.
    ...(full ? ([[withoutPatterns(schemas[2]!), undefined]] as [Record<string, unknown>, unknown][]) : []),
  ];
  const seen = new Set<string>();
  const out: Record<string, unknown>[] = [];
  for (const [schema, example] of pairs) {
    const declared = declare(route, schema, example);
    const key = JSON.stringify(declared);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(declared);
  }
  return out;
}

function declare(
  route: PaidRoute,
  inputSchema: Record<string, unknown> | undefined,
  outputExample: unknown,
): Record<string, unknown> {
  if (route.mcpTool) {
    return declareDiscoveryExtension({
      toolName: route.mcpTool.name,
      transport: route.mcpTool.transport,
      inputSchema: inputSchema ?? { type: 'object' },
      ...(route.inputExample ? { example: route.inputExample } : {}),
      ...(outputExample === undefined ? {} : { output: { example: outputExample } }),
    });
  }
  const schema = inputSchema ? { inputSchema } : {};
  const input = route.inputExample ? { input: route.inputExample } : {};
  const output = outputExample === undefined ? {} : { output: { example: outputExample } };
  return route.method === 'POST'
    ? declareDiscoveryExtension({ bodyType: 'json', ...input, ...schema, ...output })
    : declareDiscoveryExtension({ ...input, ...schema, ...output });
}

/** A smaller example of the same shape: arrays keep their first item, strings their first characters. */
export function shortenExample(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, 1).map(shortenExample);
  if (typeof value === 'string') return cutText(value, SHORT_STRING);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortenExample(v)]));
  return value;
}

/** The smallest example of the same top-level shape: nested arrays empty, strings of 40 characters at most, numbers to 2 decimals. */
export function compactExample(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return depth === 0 ? value.slice(0, 1).map((v) => compactExample(v, depth + 1)) : [];
  if (typeof value === 'string') return cutText(value, 40);
  if (typeof value === 'number') return Number.isInteger(value) ? value : Math.round(value * 100) / 100;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compactExample(v, depth + 1)]));
  return value;
}

/**
 * The same JSON Schema with its `description` texts cut to their first sentence
 * (at most 80 characters), or removed; nothing else changes.
 */
export function describedBriefly<T>(schema: T, mode: 'first-sentence' | 'none'): T {
  if (Array.isArray(schema)) return schema.map((s) => describedBriefly(s, mode)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' && typeof value === 'string') {
      if (mode === 'none') continue;
      const first = value.split(/(?<=[.;:])\s/)[0] ?? value;
      out[key] = cutText(first, 80);
    } else out[key] = describedBriefly(value, mode);
  }
  return out as T;
}

/** The same JSON Schema without its `pattern` keywords (string shapes stay typed and bounded). */
export function withoutPatterns<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => withoutPatterns(s)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).flatMap(([key, value]) =>
      key === 'pattern' && typeof value === 'string' ? [] : [[key, withoutPatterns(value)]],
    ),
  ) as T;
}

/** A route description cut to its first clause (before the first ": " or ". "), 120 characters at most. */
export function briefDescription(text: string): string {
  const first = text.split(/(?<=\S)[:.]\s/)[0] ?? text;
  return cutText(first, 120);
}
