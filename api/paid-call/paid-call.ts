/**
 * The paid-call pipeline, transport-neutral: every door (HTTP, MCP, later
 * A2A) runs the same steps in the same order and maps its transport onto
 * them and their outcome back, as x402's packages adapt their core to
 * Express or Hono:
 *
 *   admission.ts      availability -> input -> validation -> pre-flight   (rejected: never charged)
 *   payment-step.ts   challenge | begin (binding, replay lock, verify) -> handler -> settle | abandon
 *   handler-step.ts   the SKU's handler, its answer checked against the output schema outside production
 *
 * A door that answers a call in one go (MCP's tools/call) calls
 * `runPaidCall` and renders the outcome. A door built of middleware (Koa:
 * api/router.ts and api/paid-call/payment-gate.ts) calls the same steps one
 * per middleware, the framework's `next()` being the handler run, so that
 * the payment gate stays one middleware (the browser paywall wraps it).
 *
 * Every outcome says whether the caller was charged: only `settled` was
 * (`replayed` answers a settled call again; `granted` answers a paid one again).
 */
import type { AppError } from '../../core/errors.js';
import type { SkuRuntime } from '../sku/sku.js';
import type { PaidCall, PaymentCore } from '../payment/payment-core.js';
import { admit, type Admission, type CallRequest } from './admission.js';
import { pricedRoute } from '../sku/call-price.js';
import { runHandler } from './handler-step.js';
import { payForCall, type CallPlace, type PaymentInput, type PaymentOutcome } from './payment-step.js';
import { PreflightRejection } from './preflight-rejection.js';
import { isStreamedSku } from '../sku/streamed-answer.js';

export { PreflightRejection } from './preflight-rejection.js';
export type { AdmittedCall, CallNaming, CallRequest } from './admission.js';
export type { CallPlace, PaymentInput, PaymentOutcome, StoredAnswer } from './payment-step.js';

export interface PaidCallScope {
  runtime: Omit<SkuRuntime, 'log'>;
  core: PaymentCore;
  /** Check every answer against the SKU's output schema and log a mismatch (outside production). */
  checkResponses: boolean;
}

/** A call answered in one go. */
export interface OneShotCallRequest extends CallRequest {
  /** The priced resource as the payment core sees it (the door's resource identity); undefined for a free SKU. */
  paid: PaidCall | undefined;
  /** The payment sent with the call, if any. */
  payment: PaymentInput | undefined;
  /**
   * Where the call was made and the sign-in-with-x proof sent with it: without it, the call neither declares nor
   * takes repeat access, nor replays a payment identifier's stored answer.
   */
  place?: CallPlace;
}

export type PaidCallOutcome =
  /** Refused before payment (availability, validation, pre-flight): never charged. */
  | { kind: 'rejected'; step: Extract<Admission, { ok: false }>['step']; rejection: AppError }
  /** A free SKU's answer (a value: JSON text parsed). */
  | { kind: 'answered'; value: unknown }
  /** The pre-flight or the handler failed; a payment made for the call was abandoned (never settled). */
  | { kind: 'failed'; step: 'preflight' | 'handler'; error: unknown }
  | Exclude<PaymentOutcome<unknown>, { kind: 'failed' | 'not_settled' }>;

export async function runPaidCall(scope: PaidCallScope, request: OneShotCallRequest): Promise<PaidCallOutcome> {
  let admission: Admission;
  try {
    admission = await admit(scope.runtime, request);
  } catch (error) {
    return { kind: 'failed', step: 'preflight', error };
  }
  if (!admission.ok) return { kind: 'rejected', step: admission.step, rejection: admission.rejection };
  const { admitted } = admission;
  if (isStreamedSku(admitted.sku))
    return { kind: 'rejected', step: 'availability', rejection: streamOnlyOverHttp(request) };
  const handle = () => runHandler(admitted, { checkResponses: scope.checkResponses, asValue: true });

  if (!request.paid) {
    try {
      return { kind: 'answered', value: await handle() };
    } catch (error) {
      return { kind: 'failed', step: 'handler', error };
    }
  }
  const facts = request.place && {
    ...request.place,
    subject: { sku: admitted.sku, input: admitted.call.input },
  };
  // The call's own price (a range buys several slices: call-price.ts), known now that the pre-flight ran.
  const paid = { ...request.paid, route: pricedRoute(request.paid.route, admitted.call.priceAtomic) };
  const outcome = await payForCall(
    scope.core,
    paid,
    request.payment,
    async () => ({ billable: true as const, value: await handle() }),
    facts,
  );
  if (outcome.kind === 'failed') return { kind: 'failed', step: 'handler', error: outcome.error };
  if (outcome.kind === 'not_settled') throw new Error('paid-call: a one-shot handler run is always billable');
  // A one-shot door sends the value as JSON text (MCP: content[0].text): that is what a retry gets back.
  if (outcome.kind === 'settled')
    await outcome.keep({ status: 200, contentType: 'application/json', body: JSON.stringify(outcome.value) });
  return outcome;
}

/** A one-shot door answers one JSON per call: a streamed SKU (server-sent events, a file) is served over HTTP only. */
function streamOnlyOverHttp(request: OneShotCallRequest): PreflightRejection {
  return new PreflightRejection(
    'stream_http_only',
    `${request.naming.subject} is streamed (server-sent events or a file), served over HTTP only (GET ${request.sku.path})`,
    400,
  );
}
