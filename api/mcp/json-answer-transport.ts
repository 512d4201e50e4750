/**
 * The MCP transport of one stateless POST answered with JSON: an SDK `Transport`
 * over the body Koa has already parsed. The SDK's Server (its Protocol, its zod
 * message schemas, its protocol-version list) does all of MCP; this file does
 * only the HTTP plumbing, in the one mode the door serves.
 *
 * Why not the SDK's StreamableHTTPServerTransport: for Node it wraps the web
 * standard transport through @hono/node-server, turning every request into a
 * web `Request` and its answer back from a web `Response` (web streams, header
 * objects): ~0.3 ms per call on a 2-core machine, a fifth of what the MCP door
 * added over the HTTP door for the same paid call (bench:doors, 1.57 -> 1.27 ms;
 * docs/routes.md). No SDK transport takes a parsed body without that conversion.
 *
 * It answers as the SDK's transport does with `sessionIdGenerator: undefined`
 * and `enableJsonResponse: true` (test/integration/mcp-door.test.ts checks both
 * against a raw HTTP client):
 *   Accept without application/json AND text/event-stream  406, JSON-RPC error -32000
 *   Content-Type not JSON                                    415, -32000
 *   a batch over MAX_BATCH_SIZE messages                     400, -32600
 *   not JSON-RPC messages                                    400, -32700
 *   an initialize request in a batch                         400, -32600
 *   Mcp-Protocol-Version set and not supported (not on initialize)  400, -32000
 *   notifications / responses only                           202, no body
 *   requests                                                 200, the answers (one object, or an array in the
 *                                                            order of the requests)
 * Server-to-client notifications and requests need a stream (SSE), which this
 * mode has not: they are dropped, as the SDK's transport drops them.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** The SDK transport's batch limit (not exported by the SDK). */
export const MAX_BATCH_SIZE = 100;

export interface JsonAnswer {
  status: number;
  /** The JSON-RPC answer (an object or an array), or none (202). */
  body?: unknown;
}

export interface PostedMessage {
  /** Lower-cased request headers, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as parsed JSON (undefined when the Content-Type was not JSON). */
  body: unknown;
  contentTypeIsJson: boolean;
}

const refusal = (status: number, code: number, message: string): JsonAnswer => ({
  status,
  body: { jsonrpc: '2.0', error: { code, message }, id: null },
});

const header = (headers: PostedMessage['headers'], name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

export class JsonAnswerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private order: RequestId[] = [];
  private readonly answers = new Map<RequestId, JSONRPCMessage>();
  private finish?: () => void;
  private used = false;
  private closed = false;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return; // needs a stream: dropped
    const id = message.id;
    if (id === undefined || !this.order.includes(id) || this.answers.has(id)) return;
    this.answers.set(id, message);
    if (this.answers.size === this.order.length) this.finish?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.finish?.();
    this.onclose?.();
  }

  /** Delivers the POSTed messages to the connected Server and resolves with what to answer. One call per transport. */
  async handle(post: PostedMessage): Promise<JsonAnswer> {
    if (this.used) throw new Error('a JsonAnswerTransport answers one request; create one per request');
    this.used = true;
    const accept = header(post.headers, 'accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return refusal(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!post.contentTypeIsJson)
      return refusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const raw = post.body;
    if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE)
      return refusal(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const parsed = (Array.isArray(raw) ? raw : [raw]).map((m) => JSONRPCMessageSchema.safeParse(m));
    if (parsed.some((p) => !p.success)) return refusal(400, -32700, 'Parse error: Invalid JSON-RPC message');
    const messages = parsed.map((p) => p.data as JSONRPCMessage);

    const initializing = messages.some(isInitializeRequest);
    if (initializing && messages.length > 1)
      return refusal(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    const version = header(post.headers, 'mcp-protocol-version');
    if (!initializing && version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return refusal(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }

    const extra: MessageExtraInfo = { requestInfo: { headers: post.headers } };
    this.order = messages.filter(isJSONRPCRequest).map((m) => m.id);
    if (this.order.length === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
      return { status: 202 };
    }
    const answered = new Promise<void>((resolve) => (this.finish = resolve));
    for (const message of messages) this.onmessage?.(message, extra);
    await answered;
    if (this.answers.size < this.order.length) return refusal(503, -32000, 'the server closed before answering');
    const answers = this.order.map((id) => this.answers.get(id)!);
    return { status: 200, body: answers.length === 1 ? answers[0] : answers };
  }
}
