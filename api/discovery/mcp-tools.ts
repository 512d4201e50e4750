/**
 * The MCP tools, generated from the catalogue like every other surface: one
 * tool per SKU (name = id with `_`, the SKU's input JSON Schema, its output
 * JSON Schema, its description with the price), plus the free `discovery`
 * tool (the document of /api/v1/discovery). A paid tool carries the priced
 * resource the payment core challenges and binds to (`mcp://tool/<name>`).
 *
 * `_meta["x402/pricing"]` on each tool states its price, so an agent knows the
 * cost from tools/list; the authoritative terms are the challenge's.
 *
 * A description of the gateway like the other documents, so it lives with
 * them: the MCP server card (mcp-json.ts) lists these tools, and the MCP door
 * (api/mcp/) answers tools/list and tools/call from them.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { inputJsonSchema, jsonSchemaOf, outputJsonSchema, type JsonSchema } from '../sku/json-schema.js';
import { ProblemSchema, priceText } from '../sku/schemas.js';
import type { Catalogue, PricedSku } from '../sku/sku.js';
import { isStreamedSku } from '../sku/streamed-answer.js';
import { DOCUMENTS, methodsOf, bulkPricing, rangePricing, type PaymentInfo } from './context.js';
import type { PaidRoute } from '../payment/challenge.js';
import { readableUsdc } from '../payment/usdc-amount.js';
import { toolNameOf } from './mcp-tool-name.js';
import { paidRouteOf } from '../paid-call/paid-route.js';

/** Where the MCP door answers (Streamable HTTP). */
export const MCP_PATH = '/mcp';

export const DISCOVERY_TOOL = 'discovery';

/** What an MCP client is told at initialize (and the server card repeats). */
export const MCP_INSTRUCTIONS =
  'Each tool is a route of this x402 gateway. Free tools (coverage, discovery) answer at once. A paid tool called without payment returns isError with the x402 PaymentRequired in structuredContent (and as {"x402/error": ...} JSON in content[0].text): sign it with an x402 v2 client and call the tool again with params._meta["x402/payment"] = the PaymentPayload; the result then carries _meta["x402/payment-response"] (the settlement). Invalid arguments and windows outside coverage are refused before any payment; only successful calls are settled.';

/** The resource URL (and binding identity) of an MCP tool, as in the x402 MCP transport's examples. */
export const toolResourceUrl = (name: string) => `mcp://tool/${name}`;

export type ToolEntry =
  | { kind: 'sku'; name: string; sku: PricedSku; definition: Tool; route?: PaidRoute }
  | { kind: 'discovery'; name: string; definition: Tool };

export interface ToolCatalogue {
  list: Tool[];
  get(name: string): ToolEntry | undefined;
}

/** The priced resource of a paid SKU's tool (what the core challenges, binds and declares to the Bazaar). */
export function toolRouteOf(sku: PricedSku): PaidRoute {
  const name = toolNameOf(sku);
  return { ...paidRouteOf(sku, 'POST'), path: toolResourceUrl(name), mcpTool: { name, transport: 'streamable-http' } };
}

/**
 * The x402 v2 PaymentRequired an error result carries in `structuredContent`
 * (x402 MCP transport), as JSON Schema. Written here: @x402/core's own zod
 * schema is zod 3, which this project's zod 4 cannot convert.
 */
const PAYMENT_REQUIRED_JSON_SCHEMA: JsonSchema = {
  title: 'x402 PaymentRequired (isError: pay and call again with _meta["x402/payment"])',
  type: 'object',
  properties: {
    x402Version: { type: 'integer', const: 2 },
    error: { type: 'string' },
    resource: {
      type: 'object',
      properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } },
      required: ['url'],
    },
    accepts: {
      type: 'array',
      items: { type: 'object', required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'] },
      minItems: 1,
    },
    extensions: { type: 'object' },
    'x402/payment-response': { type: 'object', description: "On a failed settlement: the facilitator's answer" },
  },
  required: ['x402Version', 'accepts'],
};

/**
 * A tool's `outputSchema`: the catalogue's output schema, or (results with
 * `isError`) the PaymentRequired or the problem. MCP clients validate
 * `structuredContent` against it, error results included (the TypeScript SDK
 * client does), and the x402 MCP transport puts the PaymentRequired there: a
 * schema of the success body alone would make every 402 a client-side error.
 */
export function toolOutputSchema(sku: PricedSku): JsonSchema {
  return {
    type: 'object',
    anyOf: [
      { title: 'result', ...outputJsonSchema(sku) },
      ...(sku.free ? [] : [PAYMENT_REQUIRED_JSON_SCHEMA]),
      { title: 'problem (isError: refused or failed, never charged)', ...jsonSchemaOf(ProblemSchema, 'output') },
    ],
  };
}

/** A range-capable tool's range price, as a clause of its price sentence. */
function rangeNote(sku: PricedSku): string {
  const range = rangePricing(sku);
  return range ? ` (${range.text})` : '';
}

function skuTool(sku: PricedSku, payment: PaymentInfo): Tool {
  const price = sku.free
    ? 'Free.'
    : `Price: ${priceText(sku.priceAtomic)} per call${rangeNote(sku)}, paid with x402 (_meta["x402/payment"]).`;
  return {
    name: toolNameOf(sku),
    title: sku.title,
    description: `${sku.description} ${price}${sku.available ? '' : ' Not served yet (sku_unavailable).'}`,
    inputSchema: inputJsonSchema(sku) as Tool['inputSchema'],
    outputSchema: toolOutputSchema(sku) as Tool['outputSchema'],
    annotations: {
      title: sku.title,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: sku.path.startsWith('/api/v1/crypto/'),
      openWorldHint: true,
    },
    _meta: {
      'x402/pricing': {
        free: sku.free,
        amount: sku.priceAtomic,
        readableUsdc: readableUsdc(sku.priceAtomic),
        ...(rangePricing(sku) ? { range: rangePricing(sku) } : {}),
        ...(bulkPricing(sku) ? { bulk: bulkPricing(sku) } : {}),
        network: payment.network,
        asset: payment.asset,
      },
      'x402/http': { methods: methodsOf(sku), path: sku.path },
    },
  };
}

const discoveryTool: Tool = {
  name: DISCOVERY_TOOL,
  title: 'Discovery: routes, prices, payment network',
  description: `Free. The gateway's discovery document (${DOCUMENTS.discovery}): every route with its method, price (atomic and readable USDC), payment network, parameters and an example.`,
  inputSchema: { type: 'object', properties: {}, additionalProperties: false } as Tool['inputSchema'],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  _meta: { 'x402/pricing': { free: true, amount: '0', readableUsdc: '0' } },
};

export function buildToolCatalogue(catalogue: Catalogue, payment: PaymentInfo): ToolCatalogue {
  const entries = new Map<string, ToolEntry>();
  for (const sku of catalogue.skus) {
    const name = toolNameOf(sku);
    entries.set(name, {
      kind: 'sku',
      name,
      sku,
      definition: skuTool(sku, payment),
      ...(sku.free ? {} : { route: toolRouteOf(sku) }),
    });
  }
  entries.set(DISCOVERY_TOOL, { kind: 'discovery', name: DISCOVERY_TOOL, definition: discoveryTool });
  // A streamed route (events, a file) is HTTP only: not listed, and a call by its name is refused before payment
  // with `stream_http_only` (api/paid-call/paid-call.ts) rather than "unknown tool".
  const list = [...entries.values()].filter((e) => e.kind !== 'sku' || !isStreamedSku(e.sku)).map((e) => e.definition);
  return { list, get: (name) => entries.get(name) };
}
