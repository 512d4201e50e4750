/**
 * The client side of the x402 MCP transport (coinbase/x402
 * specs/transports-v2/mcp.md) over the MCP SDK's own Client: call a tool; when
 * the result is a payment requirement, have an x402 client sign it and call
 * again with `_meta["x402/payment"]`; return the result and its settlement.
 * No npm package provides this client side yet (no `@x402/mcp` release).
 *
 * A PaymentRequired is looked for in the spec's order: `structuredContent`
 * itself, `structuredContent["x402/error"].data`, then the JSON of
 * `content[0].text` (a PaymentRequired or the `x402/error` wrapper).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';

export const PAYMENT_META_KEY = 'x402/payment';
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPaymentRequired = (v: unknown): v is PaymentRequired =>
  isObject(v) && typeof v.x402Version === 'number' && Array.isArray(v.accepts);

/** The PaymentRequired an error result carries, if any. */
export function paymentRequiredOf(result: CallToolResult): PaymentRequired | undefined {
  if (!result.isError) return undefined;
  const structured = result.structuredContent;
  if (isPaymentRequired(structured)) return structured;
  const wrapped =
    isObject(structured) && isObject(structured['x402/error']) ? structured['x402/error'].data : undefined;
  if (isPaymentRequired(wrapped)) return wrapped;
  const first = result.content?.[0];
  if (first?.type === 'text') {
    try {
      const parsed = JSON.parse(first.text) as unknown;
      if (isPaymentRequired(parsed)) return parsed;
      const data = isObject(parsed) && isObject(parsed['x402/error']) ? parsed['x402/error'].data : undefined;
      if (isPaymentRequired(data)) return data;
    } catch {
      // plain text: no payment requirement
    }
  }
  return undefined;
}

/** The settlement of a paid result. */
export function settlementOf(result: CallToolResult): SettleResponse | undefined {
  const value = result._meta?.[PAYMENT_RESPONSE_META_KEY];
  return isObject(value) ? (value as unknown as SettleResponse) : undefined;
}

/** One tools/call with a payment payload (or none). */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  payment?: PaymentPayload,
): Promise<CallToolResult> {
  return (await client.callTool({
    name,
    arguments: args,
    ...(payment ? { _meta: { [PAYMENT_META_KEY]: payment } } : {}),
  })) as CallToolResult;
}

export interface PaidToolCall {
  /** The final result (the tool's, or the refusal). */
  result: CallToolResult;
  /** The challenge answered, when the tool asked for payment. */
  paymentRequired?: PaymentRequired;
  payment?: PaymentPayload;
  settlement?: SettleResponse;
}

/** Calls `name`; pays once if asked (x402 client `payer`), and returns what came back. */
export async function callPaidTool(
  client: Client,
  payer: x402Client,
  name: string,
  args: Record<string, unknown>,
): Promise<PaidToolCall> {
  const first = await callTool(client, name, args);
  const paymentRequired = paymentRequiredOf(first);
  if (!paymentRequired) return { result: first };
  const payment = await payer.createPaymentPayload(paymentRequired);
  const result = await callTool(client, name, args, payment);
  const settlement = settlementOf(result);
  return { result, paymentRequired, payment, ...(settlement ? { settlement } : {}) };
}
