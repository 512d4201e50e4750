/**
 * GET /agents.md: a Markdown guide for agents, generated from the catalogue:
 * how to pay, the route table (method, path, price in atomic USDC and USDC,
 * availability) and, per available route, its parameters and an example
 * (the request built from current coverage, so it answers 200 on this install;
 * long number arrays of the example bodies cut, so the guide stays ~20 KB).
 */
import { paramsOf, type ParamDoc } from '../sku/json-schema.js';
import { priceText } from '../sku/schemas.js';
import type { PricedSku } from '../sku/sku.js';
import { MCP_PATH } from './mcp-tools.js';
import { toolNameOf } from './mcp-tool-name.js';
import {
  DOCUMENTS,
  GROUPS,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  exampleRequestText,
  groupOf,
  methodsOf,
  paymentNetwork,
  paymentSteps,
  type DiscoveryContext,
} from './context.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The OpenAPI component name of a SKU's 200 body (openapi.ts: `<PascalId>Response`). */
const schemaName = (sku: PricedSku) =>
  `${sku.id.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase())}Response`;

/** `| METHOD | path | atomic | USDC | available | title | target | schema |` rows: the same routes and prices as the catalogue (descriptions in the sections). */
export function routeTable(skus: readonly PricedSku[]): string[] {
  return [
    '| Method | Path | Price (atomic USDC) | Price | Available | Route | Latency target | Response schema |',
    '|---|---|---|---|---|---|---|---|',
    ...skus.map(
      (s) =>
        `| ${s.method} | ${s.path} | ${s.priceAtomic} | ${priceText(s.priceAtomic)} | ${s.available ? 'yes' : 'not yet (503)'} | ${cell(s.title)} | < ${s.latencyTargetMs} ms | \`${schemaName(s)}\` |`,
    ),
  ];
}

/** Parameters described the same way by several routes of a group: described once, in the group's intro. */
function commonParams(skus: readonly PricedSku[]): Map<string, ParamDoc> {
  const seen = new Map<string, { doc: ParamDoc; count: number }>();
  for (const sku of skus) {
    for (const [name, doc] of Object.entries(paramsOf(sku))) {
      const key = `${name}\u0000${doc.type}\u0000${doc.description}`;
      const entry = seen.get(key);
      if (entry) entry.count += 1;
      else seen.set(key, { doc, count: 1 });
    }
  }
  const out = new Map<string, ParamDoc>();
  for (const [key, { doc, count }] of seen) if (count >= 3) out.set(key.split('\u0000')[0]!, doc);
  return out;
}

function section(sku: PricedSku, ctx: DiscoveryContext, common: Map<string, ParamDoc>): string[] {
  const params = Object.entries(paramsOf(sku));
  const methods = methodsOf(sku);
  const lines = [`### ${sku.title}: \`${sku.method} ${sku.path}\``, '', `${sku.description}`, ''];
  if (methods.length > 1)
    lines.push(`${methods.join(' or ')}: query parameters, or the same fields as a JSON body.`, '');
  if (params.length) {
    lines.push('| Parameter | Type | Required | Description |', '|---|---|---|---|');
    for (const [name, p] of params) {
      const shared = common.get(name);
      const description =
        shared && shared.description === p.description && shared.type === p.type ? 'as above' : p.description;
      lines.push(`| ${name} | ${cell(p.type)} | ${p.required ? 'yes' : 'no'} | ${cell(description)} |`);
    }
    lines.push('');
  }
  lines.push(
    ctx.examples?.inputs.has(sku.id) ? 'Example request (current coverage: it answers 200 now):' : 'Example request:',
    '',
    '```http',
    exampleRequestText(ctx, sku),
    '```',
    '',
    'Example 200 body:',
    '',
    '```json',
    readableJson(sku.example, 0, groupOf(sku) === 'Crypto telemetry' ? Number.POSITIVE_INFINITY : MAX_TOP_FIELDS),
    '```',
    '',
  );
  return lines;
}

/** Numeric arrays longer than this are cut in the guide (an embedding is 768 numbers). */
const MAX_ARRAY_SHOWN = 8;

/** Strings longer than this are cut in the guide (page contents, OCR text). */
const MAX_STRING_SHOWN = 60;

/** Top-level fields of a utility or AI example body shown in the guide (telemetry bodies are shown whole: they are the data). */
const MAX_TOP_FIELDS = 10;

/**
 * JSON for the guide: one top-level field per line and, inside arrays, one
 * element per line; anything deeper on one line. Long number arrays are cut
 * to their first few values with a note (an embedding is 768 numbers), long
 * strings and long arrays of objects likewise: the guide stays a page an
 * agent reads (~20 KB), not a data dump. The full bodies are in
 * /api/v1/discovery (`examples`).
 */
export function readableJson(value: unknown, depth = 0, maxTopFields = Number.POSITIVE_INFINITY): string {
  const v = shortened(value);
  const pad = '  '.repeat(depth + 1);
  const end = '  '.repeat(depth);
  if (depth === 0 && v && typeof v === 'object' && !Array.isArray(v)) {
    const all = Object.entries(v);
    const shown = all.length > maxTopFields + 1 ? all.slice(0, maxTopFields) : all;
    if (shown.length < all.length) shown.push(['...', `${all.length - shown.length} more fields not shown here`]);
    const entries = shown.map(
      ([k, x]) =>
        `${pad}${JSON.stringify(k)}: ${Array.isArray(x) && x.some((e) => e && typeof e === 'object') ? readableJson(x, depth + 1) : inline(x)}`,
    );
    return `{\n${entries.join(',\n')}\n}`;
  }
  if (depth === 1 && Array.isArray(v))
    return v.length ? `[\n${v.map((x) => `${pad}${inline(x)}`).join(',\n')}\n${end}]` : '[]';
  return inline(v);
}

/** One-line JSON with a space after commas and colons. */
function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`)
      .join(', ')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Nested objects with more fields than this show their first ones and a note. */
const MAX_NESTED_FIELDS = 3;

/** The value with long number arrays, long strings, long arrays of objects and wide nested objects cut (a note says what was left out). */
function shortened(value: unknown, nested = false): unknown {
  if (Array.isArray(value)) {
    if (value.length > MAX_ARRAY_SHOWN && value.every((x) => typeof x === 'number')) {
      return [
        ...value.slice(0, MAX_ARRAY_SHOWN),
        `... (${value.length} numbers, ${value.length - MAX_ARRAY_SHOWN} more not shown here)`,
      ];
    }
    // List items are the payload: shown whole (two of them at most).
    if (value.length > 2 && value.every((x) => x && typeof x === 'object'))
      return [
        ...value.slice(0, 2).map((x) => shortened(x)),
        `... (${value.length} items, ${value.length - 2} more not shown here)`,
      ];
    return value.map((x) => shortened(x));
  }
  if (typeof value === 'string' && value.length > MAX_STRING_SHOWN)
    return `${value.slice(0, MAX_STRING_SHOWN)}... (${value.length} characters)`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const shown = nested && entries.length > MAX_NESTED_FIELDS + 1 ? entries.slice(0, MAX_NESTED_FIELDS) : entries;
    const out = Object.fromEntries(shown.map(([k, x]) => [k, shortened(x, true)]));
    if (shown.length < entries.length) out['...'] = `${entries.length - shown.length} more fields not shown here`;
    return out;
  }
  return value;
}

/** The MCP door: where it answers, how tools are named, and how x402 rides in `_meta`. */
function mcpSection(ctx: DiscoveryContext): string[] {
  return [
    `The same routes are MCP tools at \`${ctx.baseUrl}${MCP_PATH}\` (Streamable HTTP, stateless; server card: ${ctx.baseUrl}${DOCUMENTS.mcp}). A tool is named after its route (\`spread-candles\` -> \`${toolNameOf({ id: 'spread-candles' })}\`), with the same input schema, output schema and price; \`coverage\` and \`discovery\` are free, and these documents are MCP resources.`,
    '',
    '1. `tools/call` a paid tool without payment: the result has `isError: true`, the x402 `PaymentRequired` in `structuredContent` and, as `{"x402/error": {"code": 402, "message", "data"}}`, in `content[0].text`.',
    '2. Sign it with an x402 v2 client (the same EIP-3009 authorization as over HTTP) and call the tool again with `params._meta["x402/payment"]` = the PaymentPayload.',
    '3. The result carries the output in `structuredContent` and the settlement in `_meta["x402/payment-response"]`. Invalid arguments and windows outside coverage are refused before any payment (the same problem `code` and `field` as over HTTP); a failed call is not settled.',
  ];
}

export function buildAgentsMd(ctx: DiscoveryContext): string {
  const net = paymentNetwork(ctx.payment);
  const available = ctx.catalogue.skus.filter((s) => s.available);
  const lines = [
    `# ${SERVICE_NAME} (v${SERVICE_VERSION}): guide for agents`,
    '',
    SERVICE_SUMMARY,
    '',
    `Base URL: ${ctx.baseUrl}. Payment: x402 v2, scheme \`exact\`, ${net.tokenName} on ${net.name} (\`${net.chain}\`), asset ${ctx.payment.asset}.`,
    '',
    '## How to pay',
    '',
    ...paymentSteps(ctx).map((s, i) => `${i + 1}. ${s}`),
    '',
    'Errors are `application/problem+json` with a stable `code` and, for input errors, the offending `field`. Pre-flight rejections carry `charged: "0 USDC (pre-flight rejection, no charge)"`.',
    '',
    '## MCP',
    '',
    ...mcpSection(ctx),
    '',
    '## Routes',
    '',
    ...routeTable(ctx.catalogue.skus),
    '',
    `Free documents: ${Object.values(DOCUMENTS)
      .map((p) => `\`${p}\``)
      .join(
        ', ',
      )}. Every response field (unit, precision, meaning) is defined in ${DOCUMENTS.openapi} under the route's response schema named below; the full example bodies are in ${DOCUMENTS.discovery}.`,
    '',
  ];
  for (const group of GROUPS) {
    const skus = available.filter((s) => groupOf(s) === group);
    if (!skus.length) continue;
    lines.push(`## ${group}`, '');
    const common = commonParams(skus);
    if (common.size) {
      lines.push('Parameters shared by these routes:', '', '| Parameter | Type | Description |', '|---|---|---|');
      for (const [name, p] of common) lines.push(`| ${name} | ${cell(p.type)} | ${cell(p.description)} |`);
      lines.push('');
    }
    for (const sku of skus) lines.push(...section(sku, ctx, common));
  }
  const pending = ctx.catalogue.skus.filter((s) => !s.available);
  if (pending.length) {
    lines.push(
      '## Declared, not served yet',
      '',
      'These answer 503 `sku_unavailable` before any payment is asked for; their schemas are in /openapi.json.',
      '',
    );
    for (const s of pending) lines.push(`- \`${s.method} ${s.path}\`: ${s.description}`);
    lines.push('');
  }
  return lines.join('\n');
}
