/**
 * GET /agents.md: a Markdown guide for agents, generated from the catalogue:
 * how to pay, the route table (method, path, price in atomic USDC and USDC,
 * availability) and, per available route, its parameters and an example.
 */
import { outputJsonSchema, paramsOf, type JsonSchema } from '../catalogue/json-schema.js';
import { priceText } from '../catalogue/schemas.js';
import type { PricedSku } from '../catalogue/sku.js';
import { MCP_PATH } from '../mcp/tools.js';
import { toolNameOf } from '../mcp/tool-name.js';
import { DOCUMENTS, GROUPS, SERVICE_NAME, SERVICE_SUMMARY, SERVICE_VERSION, groupOf, methodsOf, paymentNetwork, paymentSteps, type DiscoveryContext } from './context.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** `| METHOD | path | atomic | USDC | available | description |` rows: the same routes and prices as the catalogue. */
export function routeTable(skus: readonly PricedSku[]): string[] {
  return [
    '| Method | Path | Price (atomic USDC) | Price | Available | What it does |',
    '|---|---|---|---|---|---|',
    ...skus.map((s) => `| ${s.method} | ${s.path} | ${s.priceAtomic} | ${priceText(s.priceAtomic)} | ${s.available ? 'yes' : 'not yet (503)'} | ${cell(s.description)} |`),
  ];
}

function section(sku: PricedSku, baseUrl: string): string[] {
  const params = Object.entries(paramsOf(sku));
  const methods = methodsOf(sku);
  const lines = [
    `### ${sku.title}: \`${sku.method} ${sku.path}\``,
    '',
    `${sku.description}`,
    '',
    `- Price: ${sku.free ? 'free' : `${sku.priceAtomic} atomic USDC (${priceText(sku.priceAtomic)})`}; latency target < ${sku.latencyTargetMs} ms.`,
    `- Methods: ${methods.join(', ')}${methods.length > 1 ? ' (GET: query parameters; POST: the same fields as a JSON body)' : ''}.`,
    `- Categories: ${sku.categories.join(', ')}.`,
    '',
  ];
  if (params.length) {
    lines.push('| Parameter | Type | Required | Description |', '|---|---|---|---|');
    for (const [name, p] of params) lines.push(`| ${name} | ${cell(p.type)} | ${p.required ? 'yes' : 'no'} | ${cell(p.description)} |`);
    lines.push('');
  }
  const fields = Object.entries(((outputJsonSchema(sku).properties ?? {}) as Record<string, JsonSchema>));
  if (fields.length) {
    lines.push('| Response field | Description |', '|---|---|');
    for (const [name, f] of fields) lines.push(`| ${name} | ${cell(String(f.description ?? ''))} |`);
    lines.push('');
  }
  const query = new URLSearchParams(Object.entries(sku.exampleInput).map(([k, v]): [string, string] => [k, String(v)])).toString();
  lines.push(
    'Example request:',
    '',
    '```http',
    sku.method === 'GET' ? `GET ${baseUrl}${sku.path}${query ? `?${query}` : ''}` : `POST ${baseUrl}${sku.path}\nContent-Type: application/json\n\n${JSON.stringify(sku.exampleInput)}`,
    '```',
    '',
    'Example 200 body:',
    '',
    '```json',
    JSON.stringify(sku.example, null, 2),
    '```',
    '',
  );
  return lines;
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
    `Free documents: ${Object.values(DOCUMENTS).map((p) => `\`${p}\``).join(', ')}.`,
    '',
  ];
  for (const group of GROUPS) {
    const skus = available.filter((s) => groupOf(s) === group);
    if (!skus.length) continue;
    lines.push(`## ${group}`, '');
    for (const sku of skus) lines.push(...section(sku, ctx.baseUrl));
  }
  const pending = ctx.catalogue.skus.filter((s) => !s.available);
  if (pending.length) {
    lines.push('## Declared, not served yet', '', 'These answer 503 `sku_unavailable` before any payment is asked for; their schemas are in /openapi.json.', '');
    for (const s of pending) lines.push(`- \`${s.method} ${s.path}\`: ${s.description}`);
    lines.push('');
  }
  return lines.join('\n');
}
