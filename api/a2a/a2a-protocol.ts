/**
 * The A2A v0.3 JSON-RPC surface the A2A door serves, as zod schemas at the
 * boundary (what a caller sends) and types (what the door answers), with the
 * x402 A2A transport's metadata keys (coinbase/x402 specs/transports-v2/a2a.md).
 *
 * Hand-written rather than @a2a-js/sdk's server: the door serves two methods
 * over the project's paid-call pipeline, and the SDK's request handler brings
 * an executor/event-bus model and an unbounded in-memory task store (this door
 * bounds its tasks: task-store.ts). Only what the door reads is checked;
 * unknown fields are let through, as A2A's own schema allows.
 */
import { z } from 'zod';

/** Where the A2A door answers (JSON-RPC 2.0 over HTTP POST): the agent card's `url`. */
export const A2A_PATH = '/a2a';

/** The x402 A2A extension (declared in the agent card; a client activates it with X-A2A-Extensions). */
export const X402_EXTENSION_URI = 'https://github.com/google-a2a/a2a-x402/v0.1';

/** The message metadata key naming the skill a new task calls (an agent card skill id). */
export const SKILL_KEY = 'skill';

export const X402_STATUS_KEY = 'x402.payment.status';
export const X402_REQUIRED_KEY = 'x402.payment.required';
export const X402_PAYLOAD_KEY = 'x402.payment.payload';
export const X402_RECEIPTS_KEY = 'x402.payment.receipts';
export const X402_ERROR_KEY = 'x402.payment.error';
/** The artifact metadata key of a paid answer's signature (the server's RFC 9421 signature over its JSON text). */
export const X402_ANSWER_SIGNATURE_KEY = 'x402.answer.signature';
/** The message metadata key of a sign-in-with-x proof (the parsed SIGN-IN-WITH-X payload, as MCP's `_meta`). */
export const SIWX_KEY = 'sign-in-with-x';

export type X402PaymentStatus =
  'payment-required' | 'payment-rejected' | 'payment-submitted' | 'payment-completed' | 'payment-failed';

/** JSON-RPC and A2A error codes (A2A v0.3 specification, section 8). */
export const RPC_ERRORS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
} as const;

const Id = z.string().min(1).max(200);
const Metadata = z.record(z.string(), z.unknown());

export const JsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string().max(200), z.number()]),
  method: z.string().max(100),
  params: z.unknown().optional(),
});

const Part = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('text'), text: z.string() }),
  z.looseObject({ kind: z.literal('data'), data: Metadata }),
  z.looseObject({ kind: z.literal('file'), file: z.unknown() }),
]);

export const MessageSendParams = z.looseObject({
  message: z.looseObject({
    kind: z.literal('message').optional(),
    messageId: Id,
    role: z.literal('user'),
    parts: z.array(Part).max(32),
    taskId: Id.optional(),
    contextId: Id.optional(),
    metadata: Metadata.optional(),
  }),
  metadata: Metadata.optional(),
});
export type MessageSendParams = z.infer<typeof MessageSendParams>;

export const TaskIdParams = z.looseObject({ id: Id });

export type TaskState = 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';

export type OutPart =
  { kind: 'text'; text: string; metadata?: Record<string, unknown> } | { kind: 'data'; data: Record<string, unknown> };

export interface AgentMessage {
  kind: 'message';
  messageId: string;
  role: 'agent';
  parts: OutPart[];
  taskId: string;
  contextId: string;
  metadata?: Record<string, unknown>;
}

export interface Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: { state: TaskState; message?: AgentMessage; timestamp: string };
  artifacts?: { artifactId: string; name: string; parts: OutPart[]; metadata?: Record<string, unknown> }[];
}

/** A JSON-RPC error answer; `data` is the project's problem (stable code, field) when there is one. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}
