/**
 * POST /mcp: the agents' second door, MCP over Streamable HTTP
 * (@modelcontextprotocol/sdk), stateless (no Mcp-Session-Id: every POST is
 * answered on its own, by any replica) with plain JSON responses. The request
 * goes through the same middleware as every route (request id, access log,
 * problem errors) and a JSON body limit; json-answer-transport.ts then checks
 * the Accept and Content-Type headers and the JSON-RPC messages, hands them to
 * the SDK's Server, and Koa writes the answer.
 * GET and DELETE (server-initiated streams, session ends) are not served in
 * stateless mode: 405 with a JSON-RPC error, as the SDK's examples answer.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { SkuRuntime } from '../sku/sku.js';
import type { PaymentInfo } from '../discovery/context.js';
import type { PaymentCore } from '../payment/payment-core.js';
import { DEFAULT_BODY_LIMIT, jsonBody } from '../middleware/json-body.js';
import { JsonAnswerTransport } from './json-answer-transport.js';
import { createMcpServer } from './mcp-server.js';
import { buildToolCatalogue } from '../discovery/mcp-tools.js';

export interface McpOptions {
  path: string;
  runtime: Omit<SkuRuntime, 'log'>;
  core: PaymentCore;
  payment: PaymentInfo;
  publicBaseUrl?: string;
  checkResponses?: boolean;
}

export function mountMcp(router: Router, options: McpOptions): void {
  const tools = buildToolCatalogue(options.runtime.catalogue, options.payment);
  const checkResponses = options.checkResponses ?? options.runtime.config.NODE_ENV !== 'production';
  const body = jsonBody(DEFAULT_BODY_LIMIT, 'JSON-RPC');

  router.post(options.path, body, async (ctx: Context) => {
    const baseUrl = (options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
    const server = createMcpServer({
      tools,
      runtime: options.runtime,
      core: options.core,
      checkResponses,
      discovery: { catalogue: options.runtime.catalogue, payment: options.payment, baseUrl },
      ...(ctx.state.log ? { log: ctx.state.log } : {}),
    });
    const transport = new JsonAnswerTransport();
    await server.connect(transport);
    try {
      const answer = await transport.handle({
        headers: ctx.req.headers,
        body: ctx.request.body,
        contentTypeIsJson: isJsonContentType(ctx.get('content-type')),
      });
      ctx.body = answer.body ?? null; // null, then the status: an empty 202 (Koa would write the status text, or make it a 204)
      ctx.status = answer.status;
    } finally {
      await server.close(); // closes the transport
    }
  });

  const notServed = (ctx: Context) => {
    ctx.status = 405;
    ctx.set('Allow', 'POST');
    ctx.body = {
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, POST JSON-RPC messages' },
      id: null,
    };
  };
  router.get(options.path, notServed);
  router.delete(options.path, notServed);
}
