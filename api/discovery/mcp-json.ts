/**
 * GET /.well-known/mcp.json: the MCP server card (after SEP-1649/SEP-2127:
 * serverInfo, description, transport, capabilities, tools with input and
 * output JSON Schemas). The gateway serves MCP over Streamable HTTP at /mcp
 * (api/mcp/), with the same tools as tools/list there; each tool also names
 * its HTTP route (`_meta["x402/http"]`), which a client may call directly.
 * Paid tools follow the x402 MCP transport: the challenge comes back as an
 * error result, the payment goes in `_meta["x402/payment"]`.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { MCP_INSTRUCTIONS, MCP_PATH, buildToolCatalogue } from './mcp-tools.js';
import { toolNameOf } from './mcp-tool-name.js';
import {
  DOCUMENTS,
  SERVICE_ID,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  methodsOf,
  paymentNetwork,
  pricing,
  type DiscoveryContext,
} from './context.js';

export function buildMcpJson(ctx: DiscoveryContext) {
  const tools = buildToolCatalogue(ctx.catalogue, ctx.payment);
  const skuByTool = new Map(ctx.catalogue.skus.map((s) => [toolNameOf(s), s]));
  return {
    version: '1.0.0',
    // The version the server negotiates with a current client (the SDK's latest; older ones are accepted too).
    protocolVersion: LATEST_PROTOCOL_VERSION,
    serverInfo: { name: SERVICE_ID, title: SERVICE_NAME, version: SERVICE_VERSION },
    description: SERVICE_SUMMARY,
    documentationUrl: `${ctx.baseUrl}${DOCUMENTS.agentsMd}`,
    transport: { type: 'streamable-http', url: `${ctx.baseUrl}${MCP_PATH}` },
    instructions: MCP_INSTRUCTIONS,
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    authentication: { required: false, schemes: ['x402'] },
    payment: {
      protocol: 'x402',
      x402Version: 2,
      scheme: 'exact',
      transports: ['http', 'mcp'],
      ...paymentNetwork(ctx.payment),
      asset: ctx.payment.asset,
      payTo: ctx.payment.payTo,
    },
    // Every tool tools/list returns (the SKUs' and the free `discovery` tool), in the same order; a SKU's tool
    // also names its HTTP route.
    tools: tools.list.map((tool) => {
      const sku = skuByTool.get(tool.name);
      if (!sku) return tool;
      return {
        ...tool,
        _meta: {
          ...tool._meta,
          'x402/http': {
            method: sku.method,
            methods: methodsOf(sku),
            url: `${ctx.baseUrl}${sku.path}`,
            path: sku.path,
            free: sku.free,
            available: sku.available,
            pricing: pricing(sku),
          },
        },
      };
    }),
  };
}
