/**
 * GET /.well-known/mcp.json: an MCP server card (after SEP-1649/SEP-2127:
 * serverInfo, description, capabilities, tools with input and output JSON
 * Schemas). The gateway speaks plain HTTP, not an MCP transport: the card
 * declares no `transport`, and each tool's `_meta["x402/http"]` names the
 * HTTP route, its method(s) and its price, which a client calls directly
 * (paying with x402).
 */
import { inputJsonSchema, outputJsonSchema } from '../catalogue/json-schema.js';
import { priceText } from '../catalogue/schemas.js';
import { DOCUMENTS, SERVICE_ID, SERVICE_NAME, SERVICE_SUMMARY, SERVICE_VERSION, methodsOf, paymentNetwork, pricing, type DiscoveryContext } from './context.js';

export function buildMcpJson(ctx: DiscoveryContext) {
  return {
    version: '1.0.0',
    protocolVersion: '2025-06-18',
    serverInfo: { name: SERVICE_ID, title: SERVICE_NAME, version: SERVICE_VERSION },
    description: SERVICE_SUMMARY,
    documentationUrl: `${ctx.baseUrl}${DOCUMENTS.agentsMd}`,
    instructions:
      'Each tool is an HTTP route of this gateway (see _meta["x402/http"]). Call it directly; paid routes answer 402 with a PAYMENT-REQUIRED challenge: retry with an x402 v2 PAYMENT-SIGNATURE. No MCP transport is served.',
    capabilities: { tools: { listChanged: false } },
    authentication: { required: false, schemes: ['x402'] },
    payment: { protocol: 'x402', x402Version: 2, scheme: 'exact', ...paymentNetwork(ctx.payment), asset: ctx.payment.asset, payTo: ctx.payment.payTo },
    tools: ctx.catalogue.skus.map((s) => ({
      name: s.id.replace(/-/g, '_'),
      title: s.title,
      description: `${s.description} Price: ${priceText(s.priceAtomic)}.${s.available ? '' : ' Not served yet (503).'}`,
      inputSchema: inputJsonSchema(s),
      outputSchema: outputJsonSchema(s),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: s.path.startsWith('/api/v1/crypto/'), openWorldHint: true },
      _meta: {
        'x402/http': {
          method: s.method,
          methods: methodsOf(s),
          url: `${ctx.baseUrl}${s.path}`,
          path: s.path,
          free: s.free,
          available: s.available,
          pricing: pricing(s),
        },
      },
    })),
  };
}
