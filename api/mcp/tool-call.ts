/**
 * One tools/call at the MCP door: the paid-call pipeline (api/paid-call/:
 * the HTTP door's steps in the HTTP door's order, through the same payment
 * core) in one go, its outcome rendered as a tools/call result (tool-results.ts):
 *
 *   rejected before payment   sku_unavailable / invalid_parameter | missing_parameter | unknown_parameter
 *                             + field / outside_coverage | no_data_in_window | book_unavailable (zero charge)
 *   free tool                 the result
 *   no _meta["x402/payment"]  PaymentRequired (isError, structuredContent, x402/error text), or
 *                             payment_unavailable when the facilitator is down
 *   refused payment           a fresh PaymentRequired with the reason (a problem when not payable again)
 *   handler failed            its problem; the payment abandoned (nothing settled)
 *   settled                   the result with _meta["x402/payment-response"] (with its signed receipt) and
 *                             _meta["x402/answer-signature"] (receipts/answer-signature.ts)
 *   a payment identifier      a retry of a settled call: the stored result, same settlement, nothing charged
 *   _meta["sign-in-with-x"]   a proof of an earlier purchase (closed telemetry slices): the result, nothing paid
 *   settlement failed         the result withheld (isError + the failed settlement)
 *
 * The payment's resource is the tool (mcp://tool/<name>), bound by the payload's `resource`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { PricedSku } from '../sku/sku.js';
import { PreflightRejection, runPaidCall, type PaidCallScope } from '../paid-call/paid-call.js';
import type { PaidRoute } from '../payment/challenge.js';
import type { PaidCall } from '../payment/payment-core.js';
import type { SettleResponse } from '@x402/core/types';
import { base64Json } from '../payment/payload.js';
import {
  errorResult,
  paidTextResult,
  paymentRequiredResult,
  problemResult,
  successResult,
  PAYMENT_META_KEY,
  SIWX_META_KEY,
} from './tool-results.js';
import { toolResourceUrl } from '../discovery/mcp-tools.js';

export interface ToolCallScope extends PaidCallScope {
  log?: Logger;
  /** The MCP endpoint's public origin (mount.ts): a sign-in-with-x proof is bound to it. */
  discovery?: { baseUrl: string };
}

export async function callSkuTool(
  scope: ToolCallScope,
  name: string,
  sku: PricedSku,
  route: PaidRoute | undefined,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const { log } = scope;
  const paid: PaidCall | undefined = route && {
    route,
    resourceUrl: toolResourceUrl(name),
    identity: { transport: 'url', url: toolResourceUrl(name) },
    transport: { method: 'tools/call', context: { tool: name, arguments: args } },
    ...(log ? { log } : {}),
  };
  const payload = meta?.[PAYMENT_META_KEY];
  const proof = meta?.[SIWX_META_KEY];
  // A sign-in-with-x proof names the tool's HTTP route on the server's origin (a proof's uri must be a URL there).
  const place = scope.discovery && {
    origin: scope.discovery.baseUrl,
    resourcePath: sku.path,
    ...(proof !== undefined ? { proof: { payload: proof } } : {}),
  };
  const outcome = await runPaidCall(scope, {
    sku,
    input: args,
    naming: { subject: name, discovery: 'the discovery tool for the available tools' },
    paid,
    payment: payload === undefined ? undefined : { payload },
    ...(place ? { place } : {}),
    ...(log ? { log } : {}),
  });

  switch (outcome.kind) {
    case 'rejected':
      if (outcome.rejection instanceof PreflightRejection)
        log?.info(
          { code: outcome.rejection.code, status: outcome.rejection.status, tool: name },
          'mcp: rejected before payment',
        );
      return errorResult(outcome.rejection);
    case 'answered':
      return successResult(outcome.value);
    case 'failed': {
      const { error } = outcome;
      if (outcome.step === 'preflight') log?.error({ err: error, tool: name }, 'mcp: pre-flight failed');
      else if (!(error instanceof AppError) || error.status >= 500)
        log?.error({ err: error, tool: name }, paid ? 'mcp: paid tool failed; not settled' : 'mcp: tool failed');
      return errorResult(error);
    }
    case 'payment_required':
      return paymentRequiredResult(
        outcome.challenge,
        `Payment required: ${name} costs ${outcome.challenge.accepts[0]?.amount ?? sku.priceAtomic} atomic USDC`,
      );
    case 'refused': {
      const r = outcome.refusal;
      if (!outcome.challenge) return problemResult(r.status, r.code, r.detail, r.extra);
      return paymentRequiredResult(outcome.challenge, `${r.code}: ${r.detail}`);
    }
    case 'settlement_failed': {
      const r = outcome.refusal;
      if (!outcome.response || !paid) return problemResult(r.status, r.code, r.detail, r.extra);
      const reason = `Payment settlement failed: ${outcome.response.errorReason ?? r.code}`;
      const challenge = await scope.core.paymentRequired(paid, reason);
      return paymentRequiredResult(challenge, 'Payment settlement failed', outcome.response);
    }
    case 'granted':
      return successResult(outcome.value);
    case 'settled':
      return signedResult(scope, name, JSON.stringify(outcome.value), outcome.value, outcome.response);
    case 'replayed': {
      const text = outcome.answer.body.toString('utf8');
      return signedResult(scope, name, text, JSON.parse(text), outcome.answer.settlement);
    }
  }
}

/** A paid result (settled, or replayed for a retry) with its answer signature when the core signs. */
function signedResult(
  scope: ToolCallScope,
  name: string,
  text: string,
  body: unknown,
  settlement: SettleResponse,
): CallToolResult {
  const signature = scope.core.evidence?.mcpAnswerMeta({
    toolResourceUrl: toolResourceUrl(name),
    text,
    paymentResponse: base64Json(settlement),
  });
  return paidTextResult(text, body, settlement, signature);
}
