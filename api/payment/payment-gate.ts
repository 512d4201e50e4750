/**
 * The HTTP door of the x402 payment core (payment-core.ts) as Koa middleware:
 * maps a Koa request onto the core's calls and its answers onto HTTP.
 *
 * The router sets `ctx.state.paidRoute` for the matched route and calls the
 * gate only after input validation and pre-flight checks, so a request that
 * would fail is never challenged nor charged. Free routes (no paidRoute) pass
 * straight through. For a paid route:
 *
 *   no payment header          -> 402 + PAYMENT-REQUIRED (x402Version 2, error,
 *                                 resource, accepts[] with extra name/version,
 *                                 plus the Bazaar discovery declaration)
 *   PAYMENT-SIGNATURE/X-PAYMENT -> core.begin: binding checks, replay lock, verify;
 *                                 a refusal -> 402 + a fresh challenge whose
 *                                 `error` is the reason; unreachable facilitator -> 503
 *                              -> run the handler
 *                              -> settle only when it answered 200 (the spec bills
 *                                 only 200); attach PAYMENT-RESPONSE. A failed
 *                                 settlement withholds the body: problem+json 402
 *                                 (503 when the facilitator dropped out).
 *
 * The payment's resource identity is the request's method and path (query
 * ignored); `resource.url` of a challenge is the public origin + path + query.
 */
import type { Context, Middleware, Next } from 'koa';
import { withPrivateCacheControl, PAYMENT_REQUIRED_CACHE_CONTROL, type HTTPRequestContext } from '@x402/core/server';
import type { SettleResponse } from '@x402/core/types';
import { problem } from '../middleware/problem-errors.js';
import { MAX_RESOURCE_URL, encodeChallenge, truncate, type PaidRoute } from './challenge.js';
import { KoaAdapter, paymentHeaderOf } from './koa-adapter.js';
import { base64Json } from './payload.js';
import { paymentMetrics } from './payment-metrics.js';
import {
  createPaymentCore,
  paymentRequiredText,
  type PaidCall,
  type PaymentCore,
  type PaymentCoreOptions,
  type Refusal,
  type VerifiedPayment,
} from './payment-core.js';

export type { PaidRoute } from './challenge.js';
export type { VerifiedPayment } from './payment-core.js';
export { readableUsdc } from './usdc-amount.js';

declare module 'koa' {
  interface DefaultState {
    paidRoute?: PaidRoute;
    payment?: VerifiedPayment;
  }
}

export interface GateOptions {
  /** Public origin for `resource.url` (e.g. https://api.example.com); default the request's own origin. */
  publicBaseUrl?: string;
  /** Which handler statuses are settled. Default: exactly 200 (the spec: "only 200 responses are settled"). */
  settleOnStatus?: (status: number) => boolean;
}

export interface PaymentGateOptions extends PaymentCoreOptions, GateOptions {}

export interface PaymentGate extends Middleware {
  /** Fetches the facilitator's supported kinds once and checks `exact` on the network; throws when unusable. */
  ready(): Promise<void>;
  readonly core: PaymentCore;
  readonly resourceServer: PaymentCore['resourceServer'];
}

/** A gate with its own core. */
export function createPaymentGate(options: PaymentGateOptions): PaymentGate {
  return gateOverCore(createPaymentCore(options), options);
}

/** The HTTP door over an existing core (shared with the MCP door: one replay guard, one set of challenges). */
export function gateOverCore(core: PaymentCore, options: GateOptions = {}): PaymentGate {
  const settleOnStatus = options.settleOnStatus ?? ((status: number) => status === 200);

  const gate = (async (ctx: Context, next: Next) => {
    const route = ctx.state.paidRoute;
    if (!route) return next();
    const call = paidCallOf(ctx, route, options.publicBaseUrl);

    const header = paymentHeaderOf(ctx);
    if (!header) {
      try {
        await core.ready();
      } catch {
        paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
        return writeProblem(ctx, 503, 'payment_unavailable', 'payments are unavailable right now (facilitator)', {
          dependency: 'facilitator',
        });
      }
      paymentMetrics.outcomes.inc({ outcome: 'challenged' });
      return writeRefusal(ctx, core, call, {
        status: 402,
        code: 'payment_required',
        detail: paymentRequiredText(route),
        reason: 'Payment required',
        challenge: true,
        extra: { price_atomic: route.priceAtomic },
      });
    }

    const attempt = await core.begin(call, { header });
    if (!attempt.ok) return writeRefusal(ctx, core, call, attempt.refusal);

    ctx.state.payment = attempt.payment;
    try {
      await next();
    } catch (err) {
      await attempt.abandon('handler_threw', { error: err });
      throw err; // rendered by problemErrors; nothing is settled
    }
    if (!settleOnStatus(ctx.status)) return attempt.abandon('handler_failed', { status: ctx.status });

    const outcome = await attempt.settle();
    if (!outcome.ok) {
      withholdBody(ctx);
      if (outcome.response) {
        ctx.set('PAYMENT-RESPONSE', paymentResponseHeader(outcome.response));
        ctx.set('Cache-Control', 'no-store');
      }
      return writeProblem(
        ctx,
        outcome.refusal.status,
        outcome.refusal.code,
        outcome.refusal.detail,
        outcome.refusal.extra,
      );
    }
    ctx.state.accessLog = { ...ctx.state.accessLog, payment: outcome.summary };
    ctx.set('PAYMENT-RESPONSE', paymentResponseHeader(outcome.response));
    ctx.set('Cache-Control', withPrivateCacheControl(ctx.response.get('Cache-Control') || null));
  }) as PaymentGate;

  return Object.assign(gate, { ready: core.ready, core, resourceServer: core.resourceServer });
}

/** `PAYMENT-RESPONSE`: what @x402/core's encodePaymentResponseHeader writes (extension responses left out), encoded through Buffer. */
function paymentResponseHeader(response: SettleResponse): string {
  const { extensionResponses: _omitted, ...buyerFacing } = response as SettleResponse & {
    extensionResponses?: unknown;
  };
  return base64Json(buyerFacing);
}

/** The core's view of a Koa request to a paid route. */
export function paidCallOf(ctx: Context, route: PaidRoute, publicBaseUrl: string | undefined): PaidCall {
  const resourceUrl = resourceUrlOf(ctx, publicBaseUrl);
  const adapter = new KoaAdapter(ctx, { resourceUrl });
  const context: HTTPRequestContext = { adapter, path: route.path, method: route.method };
  return {
    route,
    resourceUrl,
    identity: { transport: 'http', method: ctx.method, path: ctx.path },
    transport: { method: route.method, context },
    doorLogsSettlement: true, // in the access line (request-context.ts): one log line per paid request
    ...(ctx.state.log ? { log: ctx.state.log } : {}),
  };
}

/** A refusal as HTTP: problem+json, with a fresh challenge in PAYMENT-REQUIRED when the payer may pay again. */
async function writeRefusal(ctx: Context, core: PaymentCore, call: PaidCall, refusal: Refusal): Promise<void> {
  if (refusal.challenge) {
    const paymentRequired =
      refusal.paymentRequired ?? (await core.paymentRequired(call, refusal.reason ?? 'Payment required'));
    ctx.set('PAYMENT-REQUIRED', encodeChallenge(paymentRequired, core.headerBudgetBytes));
    ctx.set('Cache-Control', PAYMENT_REQUIRED_CACHE_CONTROL);
  }
  writeProblem(ctx, refusal.status, refusal.code, refusal.detail, refusal.extra);
}

function writeProblem(
  ctx: Context,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
): void {
  ctx.status = status;
  ctx.body = { ...problem(status, code, detail, extra), request_id: ctx.state.requestId };
  ctx.type = 'application/problem+json';
}

/** Drops what the handler produced, so an unsettled request gets nothing of the protected result. */
function withholdBody(ctx: Context): void {
  ctx.body = null;
  for (const name of ['ETag', 'Last-Modified', 'Content-Disposition', 'Content-Encoding', 'Content-Language'])
    ctx.remove(name);
}

function resourceUrlOf(ctx: Context, publicBaseUrl: string | undefined): string {
  // Koa 3's ctx.origin is the Origin request header, not this server's origin.
  const origin = (publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
  const full = `${origin}${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
  return full.length <= MAX_RESOURCE_URL ? full : truncate(`${origin}${ctx.path}`, MAX_RESOURCE_URL);
}
