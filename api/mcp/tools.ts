/**
 * The MCP tools, generated from the catalogue like every other surface: one
 * tool per SKU (name = id with `_`, the SKU's input JSON Schema, its output
 * JSON Schema, its description with the price), plus the free `discovery`
 * tool (the document of /api/v1/discovery). A paid tool carries the priced
 * resource the payment core challenges and binds to (`mcp://tool/<name>`).
 *
 * `_meta["x402/pricing"]` on each tool states its price, so an agent knows the
 * cost from tools/list; the authoritative terms are the challenge's.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { inputJsonSchema, outputJsonSchema, type JsonSchema } from '../catalogue/json-schema.js';
import { priceText } from '../catalogue/schemas.js';
import type { Catalogue, PricedSku } from '../catalogue/sku.js';
import { DOCUMENTS, methodsOf, type PaymentInfo } from '../discovery/context.js';
import type { PaidRoute } from '../payment/challenge.js';
import { readableUsdc } from '../payment/payment-gate.js';
import { toolNameOf } from './tool-name.js';

export const DISCOVERY_TOOL = 'discovery';

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
  return {
    method: 'POST',
    path: toolResourceUrl(name),
    description: sku.description,
    priceAtomic: sku.priceAtomic,
    mimeType: 'application/json',
    inputSchemaJson: inputJsonSchema(sku),
    inputExample: sku.exampleInput,
    outputExample: sku.example,
    mcpTool: { name, transport: 'streamable-http' },
  };
}

function skuTool(sku: PricedSku, payment: PaymentInfo): Tool {
  const price = sku.free ? 'Free.' : `Price: ${priceText(sku.priceAtomic)} per call, paid with x402 (_meta["x402/payment"]).`;
  return {
    name: toolNameOf(sku),
    title: sku.title,
    description: `${sku.description} ${price}${sku.available ? '' : ' Not served yet (sku_unavailable).'}`,
    inputSchema: inputJsonSchema(sku) as Tool['inputSchema'],
    outputSchema: outputJsonSchema(sku) as Tool['outputSchema'],
    annotations: { title: sku.title, readOnlyHint: true, destructiveHint: false, idempotentHint: sku.path.startsWith('/api/v1/crypto/'), openWorldHint: true },
    _meta: {
      'x402/pricing': {
        free: sku.free,
        amount: sku.priceAtomic,
        readableUsdc: readableUsdc(sku.priceAtomic),
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
    entries.set(name, { kind: 'sku', name, sku, definition: skuTool(sku, payment), ...(sku.free ? {} : { route: toolRouteOf(sku) }) });
  }
  entries.set(DISCOVERY_TOOL, { kind: 'discovery', name: DISCOVERY_TOOL, definition: discoveryTool });
  const list = [...entries.values()].map((e) => e.definition);
  return { list, get: (name) => entries.get(name) };
}

export type { JsonSchema };
