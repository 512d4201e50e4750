/**
 * The MCP server of one request (stateless Streamable HTTP: no session is
 * kept between requests, so any API replica answers any call): the SDK's
 * low-level Server with the gateway's handlers, so tools/list carries the
 * catalogue's JSON Schemas exactly as /openapi.json and /.well-known/mcp.json
 * publish them, and tools/call runs the paid-call pipeline every door runs
 * (api/paid-call/, through tool-call.ts).
 *
 *   tools/list       every SKU tool and the free discovery tool (api/discovery/mcp-tools.ts)
 *   tools/call       unknown tool -> JSON-RPC error -32602 (InvalidParams); else tool-call.ts
 *   resources/list   the discovery documents (resources.ts)
 *   resources/read   one of them; unknown URI -> -32602
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  SERVICE_ID,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  type DiscoveryContext,
} from '../discovery/context.js';
import { buildDiscovery } from '../discovery/discovery.js';
import { listResources, readResource } from './resources.js';
import { callSkuTool, type ToolCallScope } from './tool-call.js';
import { successResult } from './tool-results.js';
import { MCP_INSTRUCTIONS, type ToolCatalogue } from '../discovery/mcp-tools.js';

export interface McpRequestScope extends ToolCallScope {
  tools: ToolCatalogue;
  discovery: DiscoveryContext;
}

/**
 * One JSON Schema validator for every per-request Server: the SDK would build
 * a new Ajv (with its formats) for each one, a seventh of an MCP request's CPU.
 */
const sharedValidator = new AjvJsonSchemaValidator();

export function createMcpServer(scope: McpRequestScope): Server {
  const server = new Server(
    { name: SERVICE_ID, title: SERVICE_NAME, version: SERVICE_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: `${SERVICE_SUMMARY} ${MCP_INSTRUCTIONS}`,
      jsonSchemaValidator: sharedValidator,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: scope.tools.list }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {}, _meta } = request.params;
    const tool = scope.tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (tool.kind === 'discovery') return successResult(buildDiscovery(scope.discovery));
    return callSkuTool(scope, name, tool.sku, tool.route, args, _meta as Record<string, unknown> | undefined);
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources(scope.discovery) }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const result = readResource(scope.discovery, request.params.uri);
    if (!result) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${request.params.uri}`);
    return result;
  });

  return server;
}
