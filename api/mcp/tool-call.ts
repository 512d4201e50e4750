/**
 * One tools/call at the MCP door, with the HTTP door's semantics in the HTTP
 * door's order (api/router.ts) and through the same payment core:
 *
 *   available?      no -> sku_unavailable (503, zero charge), never challenged
 *   validate        the SKU's zod schema -> invalid_parameter | missing_parameter | unknown_parameter + field
 *   pre-flight      outside_coverage / no_data_in_window / book_unavailable (zero charge)
 *   free tool       -> run the handler
 *   no payment      -> PaymentRequired (isError, structuredContent, x402/error text)
 *   _meta["x402/payment"]
 *                   -> core.begin: payload shape, binding to this tool's resource
 *                      (mcp://tool/<name>) and its requirements, replay lock on
 *                      payer + nonce, verify -> refused: a fresh PaymentRequired
 *                      with the reason (or payment_unavailable when the facilitator is down)
 *                   -> the handler; a failure abandons the payment (nothing settled)
 *                   -> settle; the result with _meta["x402/payment-response"], or,
 *                      when settlement fails, the result withheld (isError + the failed settlement)
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { answerValue } from '../catalogue/json-text.js';
import { ZERO_CHARGE_TEXT } from '../catalogue/schemas.js';
import type { PricedSku, SkuCall, SkuRuntime } from '../catalogue/sku.js';
import type { PaymentCore, PaidCall } from '../payment/payment-core.js';
import type { PaidRoute } from '../payment/challenge.js';
import { validationError } from '../router.js';
import { errorResult, paymentRequiredResult, problemResult, successResult, PAYMENT_META_KEY } from './tool-results.js';
import { toolResourceUrl } from './tools.js';

export interface ToolCallScope {
  runtime: Omit<SkuRuntime, 'log'>;
  core: PaymentCore;
  log?: Logger;
  /** Check each result against the output schema and log a mismatch (as the HTTP door does outside production). */
  checkResponses: boolean;
}

export async function callSkuTool(
  scope: ToolCallScope,
  name: string,
  sku: PricedSku,
  route: PaidRoute | undefined,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  if (!sku.available) {
    return problemResult(
      503,
      'sku_unavailable',
      `${name} is declared but not served yet; see the discovery tool for the available tools`,
      { charged: ZERO_CHARGE_TEXT },
    );
  }
  const parsed = sku.input.safeParse(args);
  if (!parsed.success) return errorResult(validationError(parsed.error, args));
  const call: SkuCall<unknown> = {
    input: parsed.data,
    runtime: { ...scope.runtime, ...(scope.log ? { log: scope.log } : {}) },
    priceAtomic: sku.priceAtomic,
  };
  let prepared: unknown;
  try {
    prepared = sku.preflight ? await sku.preflight(call) : undefined;
  } catch (err) {
    if (err instanceof AppError && 'charged' in err.details)
      scope.log?.info({ code: err.code, status: err.status, tool: name }, 'mcp: rejected before payment');
    else scope.log?.error({ err, tool: name }, 'mcp: pre-flight failed');
    return errorResult(err);
  }
  const run = async () => {
    const result = answerValue(await sku.handler(call, prepared)); // structured content is an object
    if (scope.checkResponses) {
      const check = sku.output.safeParse(result);
      if (!check.success)
        scope.log?.error(
          { sku: sku.id, issues: check.error.issues.slice(0, 10) },
          `RESPONSE SCHEMA MISMATCH: MCP tool ${name} answered a body that does not match its output schema`,
        );
    }
    return result;
  };

  if (!route) {
    try {
      return successResult(await run());
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) scope.log?.error({ err, tool: name }, 'mcp: tool failed');
      return errorResult(err);
    }
  }

  const paid: PaidCall = {
    route,
    resourceUrl: toolResourceUrl(name),
    identity: { transport: 'url', url: toolResourceUrl(name) },
    transport: { method: 'tools/call', context: { tool: name, arguments: args } },
    ...(scope.log ? { log: scope.log } : {}),
  };
  const payload = meta?.[PAYMENT_META_KEY];
  if (payload === undefined) {
    try {
      await scope.core.ready();
    } catch {
      return problemResult(503, 'payment_unavailable', 'payments are unavailable right now (facilitator)', {
        dependency: 'facilitator',
      });
    }
    return paymentRequiredResult(
      await scope.core.paymentRequired(paid, 'Payment required'),
      `Payment required: ${name} costs ${sku.priceAtomic} atomic USDC`,
    );
  }

  const attempt = await scope.core.begin(paid, { payload });
  if (!attempt.ok) {
    const r = attempt.refusal;
    if (!r.challenge) return problemResult(r.status, r.code, r.detail, r.extra);
    const challenge = r.paymentRequired ?? (await scope.core.paymentRequired(paid, r.reason ?? 'Payment required'));
    return paymentRequiredResult(challenge, `${r.code}: ${r.detail}`);
  }

  let result: unknown;
  try {
    result = await run();
  } catch (err) {
    await attempt.abandon('handler_threw', { error: err });
    if (!(err instanceof AppError) || err.status >= 500)
      scope.log?.error({ err, tool: name }, 'mcp: paid tool failed; not settled');
    return errorResult(err);
  }
  const outcome = await attempt.settle();
  if (!outcome.ok) {
    const r = outcome.refusal;
    if (outcome.response) {
      const challenge = await scope.core.paymentRequired(
        paid,
        `Payment settlement failed: ${outcome.response.errorReason ?? r.code}`,
      );
      return paymentRequiredResult(challenge, 'Payment settlement failed', outcome.response);
    }
    return problemResult(r.status, r.code, r.detail, r.extra);
  }
  return successResult(result, outcome.response);
}
