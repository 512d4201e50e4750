/**
 * The shapes of a tools/call result at the MCP door, per the x402 MCP
 * transport (coinbase/x402 specs/transports-v2/mcp.md):
 *
 *   success            content[0].text = the JSON body, structuredContent = the body,
 *                      _meta["x402/payment-response"] = the settlement (paid tools) with its signed receipt,
 *                      _meta["x402/answer-signature"] = the answer's signature over content[0].text
 *   payment required   isError, structuredContent = PaymentRequired,
 *                      content[0].text = {"x402/error": {code: 402, message, data: PaymentRequired}}
 *   settlement failed  the same, with structuredContent["x402/payment-response"] = the failed settlement
 *   any other refusal  isError, structuredContent = the HTTP door's problem (code, field, charged...),
 *                      content[0].text = its JSON: the same codes as over HTTP, never charged
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { AppError } from '../../core/errors.js';
import { problem } from '../middleware/problem-errors.js';
import { ANSWER_META_KEY } from '../payment/receipts/answer-signature.js';

export const PAYMENT_META_KEY = 'x402/payment';
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';
export const X402_ERROR_KEY = 'x402/error';
/** A sign-in-with-x proof (the SIWX payload object) sent with a tools/call, in place of the HTTP header. */
export const SIWX_META_KEY = 'sign-in-with-x';

export function successResult(body: unknown, settlement?: SettleResponse): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body as Record<string, unknown>,
    ...(settlement ? { _meta: { [PAYMENT_RESPONSE_META_KEY]: settlement } } : {}),
  };
}

/**
 * A paid result from the exact JSON text sent (a retry gets the very text its first call got): the settlement,
 * and the answer signature over that text when the server signs (`_meta["x402/answer-signature"]`).
 */
export function paidTextResult(
  text: string,
  body: unknown,
  settlement: SettleResponse,
  signature: Record<string, string> | undefined,
): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    structuredContent: body as Record<string, unknown>,
    _meta: { [PAYMENT_RESPONSE_META_KEY]: settlement, ...(signature ? { [ANSWER_META_KEY]: signature } : {}) },
  };
}

export function paymentRequiredResult(
  paymentRequired: PaymentRequired,
  message: string,
  failedSettlement?: SettleResponse,
): CallToolResult {
  const data: Record<string, unknown> = failedSettlement
    ? { ...paymentRequired, [PAYMENT_RESPONSE_META_KEY]: failedSettlement }
    : { ...paymentRequired };
  return {
    isError: true,
    structuredContent: data,
    content: [{ type: 'text', text: JSON.stringify({ [X402_ERROR_KEY]: { code: 402, message, data } }) }],
  };
}

export function problemResult(
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
): CallToolResult {
  const body = problem(status, code, detail, extra);
  return { isError: true, structuredContent: body, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** A handler's or pre-flight's error as the door's problem result (unknown errors are a 500 without details). */
export function errorResult(err: unknown): CallToolResult {
  if (err instanceof AppError) return problemResult(err.status, err.code, err.message, err.details);
  return problemResult(500, 'internal_error', 'internal error');
}
