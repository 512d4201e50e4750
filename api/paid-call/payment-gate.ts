/**
 * The HTTP door's payment step as Koa middleware: the paid-call pipeline's
 * payment step (api/paid-call/payment-step.ts) around the rest of the Koa
 * chain, the request mapped onto it and its outcome onto HTTP.
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
 *                              -> run the handler (the rest of the chain; ctx.state.payment set)
 *                              -> settle only when it answered 200 (the spec bills
 *                                 only 200); attach PAYMENT-RESPONSE (with its signed
 *                                 receipt) and, with a signing key, Content-Digest +
 *                                 Signature-Input + Signature over the body bytes sent.
 *                                 A failed settlement withholds the body: problem+json
 *                                 402 (503 when the facilitator dropped out).
 *   a payment identifier       -> a retry of a settled call: its stored status, body and
 *                                 PAYMENT-RESPONSE, signed again; nothing charged
 *   SIGN-IN-WITH-X             -> a proof of an earlier purchase of a closed slice: the
 *                                 handler's answer, no PAYMENT-RESPONSE, nothing paid
 *
 * The payment's resource identity is the request's method and path (query
 * ignored); `resource.url` of a challenge is the public origin + path + query.
 * The browser paywall (api/paywall/browser-paywall.ts) wraps this middleware.
 */
import type { Context, Middleware, Next } from 'koa';
import { withPrivateCacheControl, PAYMENT_REQUIRED_CACHE_CONTROL, type HTTPRequestContext } from '@x402/core/server';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { problem } from '../middleware/problem-errors.js';
import type { AdmittedCall } from './admission.js';
import { payForCall, type CallFacts } from './payment-step.js';
import type { StreamedAnswer } from '../sku/streamed-answer.js';
import { MAX_RESOURCE_URL, encodeChallenge, truncate, type PaidRoute } from '../payment/challenge.js';
import { KoaAdapter, paymentHeaderOf } from './koa-adapter.js';
import { base64Json } from '../payment/payload.js';
import {
  createPaymentCore,
  type PaidCall,
  type PaymentCore,
  type PaymentCoreOptions,
  type Refusal,
  type VerifiedPayment,
} from '../payment/payment-core.js';

export type { PaidRoute } from '../payment/challenge.js';

/** The sign-in-with-x proof's request header (x402's SIWx HTTP transport). */
const SIWX_HEADER = 'sign-in-with-x';
export type { VerifiedPayment } from '../payment/payment-core.js';
export { readableUsdc } from '../payment/usdc-amount.js';

declare module 'koa' {
  interface DefaultState {
    paidRoute?: PaidRoute;
    payment?: VerifiedPayment;
    /** The handler's answer is a stream (sku/streamed-answer.ts), sent as ctx.body. */
    streamed?: StreamedAnswer;
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
    // The handler is the rest of the chain; its status says whether the answer is billed.
    const outcome = await payForCall<undefined>(
      core,
      call,
      header === undefined ? undefined : { header },
      async (payment) => {
        if (payment) ctx.state.payment = payment;
        await next();
        return settleOnStatus(ctx.status)
          ? { billable: true, value: undefined }
          : { billable: false, status: ctx.status };
      },
      callFactsOf(ctx, options.publicBaseUrl),
    );

    switch (outcome.kind) {
      case 'payment_required':
      case 'refused':
        return writeRefusal(ctx, core, outcome.refusal, outcome.challenge);
      case 'failed':
        throw outcome.error; // rendered by problemErrors; nothing is settled
      case 'not_settled':
        return;
      case 'settlement_failed':
        withholdBody(ctx);
        if (outcome.response) {
          ctx.set('PAYMENT-RESPONSE', paymentResponseHeader(outcome.response));
          ctx.set('Cache-Control', 'no-store');
        }
        return writeProblem(ctx, outcome.refusal);
      case 'granted':
        // A re-read of a paid closed slice: the handler's answer, no PAYMENT-RESPONSE (nothing was paid now).
        ctx.set('Cache-Control', withPrivateCacheControl(ctx.response.get('Cache-Control') || null));
        return;
      case 'replayed': {
        const { answer } = outcome;
        ctx.status = answer.status;
        ctx.type = answer.contentType;
        ctx.body = answer.body;
        return sendPaid(ctx, core, answer.settlement, answer.body, options.publicBaseUrl);
      }
      case 'settled': {
        ctx.state.accessLog = { ...ctx.state.accessLog, payment: outcome.summary };
        const streamed = ctx.state.streamed;
        if (streamed) {
          // A stream's bytes are not known yet: nothing signs them; a retry gets how to resume (api/sku/streamed-answer.ts).
          await outcome.keep({ status: 200, ...streamed.retryAnswer });
          ctx.set('PAYMENT-RESPONSE', paymentResponseHeader(outcome.response));
          return;
        }
        const body = bodyBytes(ctx.body);
        ctx.body = body; // the exact bytes the digest and a retry's replay cover (Content-Type stays)
        await outcome.keep({
          status: ctx.status,
          contentType: ctx.response.get('Content-Type') || 'application/json',
          body,
        });
        return sendPaid(ctx, core, outcome.response, body, options.publicBaseUrl);
      }
    }
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

/**
 * A paid answer's headers: PAYMENT-RESPONSE (the settlement and its receipt), and with a signing key its
 * Content-Digest + Signature-Input + Signature (receipts/answer-signature.ts) over the body sent, for the URL the
 * client asked for (never shortened). A replayed answer is signed again, over the same bytes and settlement.
 */
function sendPaid(
  ctx: Context,
  core: PaymentCore,
  response: SettleResponse,
  body: Buffer,
  publicBaseUrl: string | undefined,
): void {
  const paymentResponse = paymentResponseHeader(response);
  ctx.set('PAYMENT-RESPONSE', paymentResponse);
  ctx.set('Cache-Control', withPrivateCacheControl(ctx.response.get('Cache-Control') || null));
  const signed = core.evidence?.answerHeaders({
    status: ctx.status,
    method: ctx.method,
    targetUri: `${originOf(ctx, publicBaseUrl)}${ctx.originalUrl}`,
    body,
    paymentResponse,
  });
  if (signed) ctx.set(signed);
}

/** The body as the bytes sent: JSON for an object, UTF-8 for text. */
function bodyBytes(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body ?? null), 'utf8');
}

/** What the payment-identifier and sign-in-with-x steps need of the request (the router admitted it). */
function callFactsOf(ctx: Context, publicBaseUrl: string | undefined): CallFacts | undefined {
  const admitted = (ctx.state as { sku?: AdmittedCall }).sku;
  if (!admitted) return undefined;
  const proof = ctx.get(SIWX_HEADER);
  return {
    subject: { sku: admitted.sku, input: admitted.call.input },
    origin: originOf(ctx, publicBaseUrl),
    resourcePath: ctx.path,
    ...(proof ? { proof: { header: proof } } : {}),
  };
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

/** A refusal as HTTP: problem+json, with the challenge in PAYMENT-REQUIRED when the payer may pay (again). */
function writeRefusal(ctx: Context, core: PaymentCore, refusal: Refusal, challenge: PaymentRequired | undefined): void {
  if (challenge) {
    ctx.set('PAYMENT-REQUIRED', encodeChallenge(challenge, core.headerBudgetBytes));
    ctx.set('Cache-Control', PAYMENT_REQUIRED_CACHE_CONTROL);
  }
  writeProblem(ctx, refusal);
}

function writeProblem(ctx: Context, refusal: Refusal): void {
  ctx.status = refusal.status;
  ctx.body = {
    ...problem(refusal.status, refusal.code, refusal.detail, refusal.extra),
    request_id: ctx.state.requestId,
  };
  ctx.type = 'application/problem+json';
}

/** Drops what the handler produced, so an unsettled request gets nothing of the protected result. */
function withholdBody(ctx: Context): void {
  ctx.body = null;
  for (const name of ['ETag', 'Last-Modified', 'Content-Disposition', 'Content-Encoding', 'Content-Language'])
    ctx.remove(name);
}

/** The public origin: PUBLIC_BASE_URL, or the request's own (Koa 3's ctx.origin is the Origin request header). */
const originOf = (ctx: Context, publicBaseUrl: string | undefined) =>
  (publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');

function resourceUrlOf(ctx: Context, publicBaseUrl: string | undefined): string {
  const origin = originOf(ctx, publicBaseUrl);
  const full = `${origin}${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
  return full.length <= MAX_RESOURCE_URL ? full : truncate(`${origin}${ctx.path}`, MAX_RESOURCE_URL);
}
