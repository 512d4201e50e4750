/**
 * The x402 v2 payment gate as Koa middleware, over @x402/core's
 * x402HTTPResourceServer (the thin adapter is koa-adapter.ts).
 *
 * The router sets `ctx.state.paidRoute` for the matched route and calls the
 * gate only after input validation and pre-flight checks, so a request that
 * would fail is never challenged nor charged. Free routes (no paidRoute) pass
 * straight through. For a paid route:
 *
 *   no payment header          -> 402 + PAYMENT-REQUIRED (x402Version 2, error,
 *                                 resource, accepts[] with extra name/version,
 *                                 plus the Bazaar discovery declaration)
 *   PAYMENT-SIGNATURE/X-PAYMENT -> lock payer+nonce (replay-guard.ts): a nonce
 *                                 in flight or already used -> 402, handler not run
 *                              -> verify with the facilitator; invalid -> 402 + reason
 *                              -> run the handler
 *                              -> settle only when it answered 200 (the spec bills
 *                                 only 200); attach PAYMENT-RESPONSE. A failed
 *                                 settlement withholds the body: problem+json 402.
 *   facilitator unreachable    -> 503, nothing charged
 *
 * Once a handler has run under a signature, its nonce stays refused, whatever
 * the outcome: the same signature never runs a handler twice.
 */
import type { Context, Middleware, Next } from 'koa';
import {
  x402HTTPResourceServer,
  x402ResourceServer,
  withPrivateCacheControl,
  type FacilitatorClient,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
  type RouteConfig,
} from '@x402/core/server';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentRequiredHeader } from '@x402/core/http';
import { FacilitatorResponseError, type Network, type PaymentPayload, type PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { problem } from '../middleware/problem-errors.js';
import { bazaarCandidates, briefDescription } from './bazaar-declaration.js';
import { KoaAdapter, paymentHeaderOf } from './koa-adapter.js';
import { paymentMetrics } from './payment-metrics.js';
import { replayKey, type ReplayGuard } from './replay-guard.js';
import { FacilitatorUnavailableError, type PaymentTerms } from './settlement.js';

/** What the gate needs to know about the matched route; set by the router before the gate runs. */
export interface PaidRoute {
  method: 'GET' | 'POST';
  path: string;
  description: string;
  /** Price in USDC atomic units (6 decimals). */
  priceAtomic: string;
  mimeType: string;
  inputSchemaJson?: object;
  /** A request that validates against the input schema (query parameters or JSON body): the Bazaar `input` example. */
  inputExample?: Record<string, unknown>;
  outputExample?: unknown;
}

/** Set on `ctx.state.payment` for the handler once the payment is verified. */
export interface VerifiedPayment {
  payer: string;
  amount: string;
  asset: string;
  network: string;
  payTo: string;
}

declare module 'koa' {
  interface DefaultState {
    paidRoute?: PaidRoute;
    payment?: VerifiedPayment;
  }
}

export interface PaymentGateOptions extends PaymentTerms {
  facilitator: FacilitatorClient;
  replayGuard: ReplayGuard;
  logger?: Logger;
  /** Public origin for `resource.url` (e.g. https://api.example.com); default the request's own origin. */
  publicBaseUrl?: string;
  /** Declare the Bazaar discovery extension on each paid route. Default true. */
  discovery?: boolean;
  /** Which handler statuses are settled. Default: exactly 200 (the spec: "only 200 responses are settled"). */
  settleOnStatus?: (status: number) => boolean;
  /** Upper bound of the base64 PAYMENT-REQUIRED header; larger ones lose the discovery details. Default 3500. */
  headerBudgetBytes?: number;
}

export interface PaymentGate extends Middleware {
  /** Fetches the facilitator's supported kinds once and checks `exact` on the network; throws when unusable. */
  ready(): Promise<void>;
  readonly resourceServer: x402ResourceServer;
}

const MAX_RESOURCE_URL = 256;
const MAX_DESCRIPTION = 300;
const MAX_ERROR_TEXT = 120;
const USED_TTL_MIN_MS = 60_000;
const USED_TTL_MAX_MS = 7 * 24 * 3600_000;

export function createPaymentGate(options: PaymentGateOptions): PaymentGate {
  const network = options.network as Network;
  const budget = options.headerBudgetBytes ?? 3500;
  const settleOnStatus = options.settleOnStatus ?? ((status: number) => status === 200);
  const discovery = options.discovery ?? true;

  const resourceServer = new x402ResourceServer(options.facilitator).register(network, new ExactEvmScheme());
  if (discovery) resourceServer.registerExtension(bazaarResourceServerExtension);

  let initialized = false;
  let initializing: Promise<void> | undefined;
  const ready = async (): Promise<void> => {
    if (initialized) return;
    initializing ??= (async () => {
      await resourceServer.initialize();
      if (!resourceServer.getSupportedKind(2, network, 'exact')) throw new Error(`the facilitator does not support exact on ${network} (x402 v2)`);
    })();
    try {
      await initializing;
      initialized = true;
    } catch (err) {
      initializing = undefined; // retried by the next paid request
      throw err;
    }
  };

  // One HTTP resource server per paid route, keyed by its own pattern. The router already
  // matched the route, so the core is handed the route's pattern as the path (see
  // `context` below) and always matches it; a miss would fail closed, never serve free.
  const servers = new Map<string, { fingerprint: string; http: x402HTTPResourceServer }>();
  const serverFor = (route: PaidRoute): x402HTTPResourceServer => {
    const key = `${route.method} ${route.path}`;
    const fingerprint = `${route.priceAtomic}\u0000${route.description}\u0000${route.mimeType}`;
    const cached = servers.get(key);
    if (cached && cached.fingerprint === fingerprint) return cached.http;
    const http = new x402HTTPResourceServer(resourceServer, { [key]: routeConfig(route, options, discovery, budget) });
    servers.set(key, { fingerprint, http });
    return http;
  };

  const gate = (async (ctx: Context, next: Next) => {
    const route = ctx.state.paidRoute;
    if (!route) return next();
    const log = (ctx.state.log as Logger | undefined) ?? options.logger;

    try {
      await ready();
    } catch (err) {
      paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
      log?.warn({ err: errorMessage(err) }, 'x402: facilitator not ready');
      return writeProblem(ctx, 503, 'payment_unavailable', `payments are unavailable right now: ${firstLine(err)}`, { dependency: 'facilitator' });
    }

    const http = serverFor(route);
    const resourceUrl = resourceUrlOf(ctx, options.publicBaseUrl);
    const adapter = new KoaAdapter(ctx, { resourceUrl });
    const header = paymentHeaderOf(ctx);
    const context: HTTPRequestContext = { adapter, path: route.path, method: route.method, paymentHeader: header };

    // A bare challenge (also the answer to replays and unreadable headers).
    const challenge = async (code: string, detail: string, error?: string) => {
      const bare = await http.processHTTPRequest({ ...context, adapter: new KoaAdapter(ctx, { resourceUrl, hidePayment: true }), paymentHeader: undefined });
      if (bare.type !== 'payment-error') throw new Error(`x402: paid route ${route.method} ${route.path} produced no challenge`);
      const extra: Record<string, unknown> = { price_atomic: route.priceAtomic };
      if (error) extra.reason = error;
      writePaymentError(ctx, bare.response, budget, code, detail, extra, error);
    };

    if (!header) {
      paymentMetrics.outcomes.inc({ outcome: 'challenged' });
      return challenge('payment_required', `this route costs ${route.priceAtomic} atomic USDC (${readableUsdc(route.priceAtomic)} USDC); pay with x402 (PAYMENT-SIGNATURE)`);
    }

    let payload: PaymentPayload;
    try {
      payload = decodePaymentSignatureHeader(header);
    } catch {
      paymentMetrics.outcomes.inc({ outcome: 'refused' });
      return challenge('payment_invalid', 'the payment header is not base64-encoded x402 JSON', 'invalid_payment_header');
    }
    const lockable = lockFacts(payload);
    if (!lockable) {
      paymentMetrics.outcomes.inc({ outcome: 'refused' });
      return challenge('payment_invalid', 'the payment is not an x402 v2 exact EVM payload', 'invalid_payment_payload');
    }

    // Keyed on the gate's own network and asset, never on fields the client could vary.
    const key = replayKey({ network, asset: options.asset, payer: lockable.payer, nonce: lockable.nonce });
    const usedTtlMs = clamp(lockable.validBeforeMs - Date.now() + 60_000, USED_TTL_MIN_MS, USED_TTL_MAX_MS);
    let lock;
    try {
      // Held until the authorization expires should this process die mid-request.
      lock = await options.replayGuard.acquire(key, usedTtlMs);
    } catch (err) {
      paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
      log?.error({ err: errorMessage(err) }, 'x402: replay guard unavailable');
      return writeProblem(ctx, 503, 'payment_unavailable', 'payments are unavailable right now (replay guard)', { dependency: `replay-guard-${options.replayGuard.kind}` });
    }
    if (!lock.ok) {
      paymentMetrics.outcomes.inc({ outcome: 'replayed' });
      return lock.state === 'used'
        ? challenge('payment_replayed', 'this payment signature was already used; sign a new payment', 'nonce_already_used')
        : challenge('payment_in_progress', 'this payment signature is being used by another request; sign a new payment', 'nonce_in_progress');
    }

    let handlerRan = false;
    try {
      const t0 = performance.now();
      let result: HTTPProcessResult;
      try {
        result = await http.processHTTPRequest(context);
      } catch (err) {
        paymentMetrics.verifySeconds.observe({ outcome: 'error' }, (performance.now() - t0) / 1000);
        if (err instanceof FacilitatorResponseError) {
          paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
          log?.warn({ err: err.message }, 'x402: verification failed at the facilitator');
          const status = err instanceof FacilitatorUnavailableError ? 503 : 502;
          return writeProblem(ctx, status, 'payment_unavailable', `payment could not be verified: ${firstLine(err)}`, { dependency: 'facilitator' });
        }
        throw err;
      }
      const verifySeconds = (performance.now() - t0) / 1000;

      if (result.type === 'no-payment-required') {
        paymentMetrics.outcomes.inc({ outcome: 'unavailable' });
        log?.error({ route: `${route.method} ${route.path}` }, 'x402: the core did not match a paid route; refusing');
        return writeProblem(ctx, 500, 'payment_misconfigured', 'this paid route is not configured for payments');
      }
      if (result.type === 'payment-error') {
        paymentMetrics.verifySeconds.observe({ outcome: 'invalid' }, verifySeconds);
        paymentMetrics.outcomes.inc({ outcome: 'refused' });
        const reason = challengeError(result.response) ?? 'payment_invalid';
        log?.info({ reason }, 'x402: payment refused');
        return writePaymentError(ctx, result.response, budget, 'payment_invalid', `payment refused: ${reason}`, { reason, price_atomic: route.priceAtomic }, undefined);
      }
      paymentMetrics.verifySeconds.observe({ outcome: 'valid' }, verifySeconds);

      const { paymentPayload, paymentRequirements, declaredExtensions, cancellationDispatcher, beforeHandlerSettlement } = result;
      ctx.state.payment = {
        payer: lockable.payer,
        amount: paymentRequirements.amount,
        asset: paymentRequirements.asset,
        network: paymentRequirements.network,
        payTo: paymentRequirements.payTo,
      };

      handlerRan = true;
      try {
        await next();
      } catch (err) {
        await cancellationDispatcher.cancel({ reason: 'handler_threw', error: err }).catch(() => undefined);
        paymentMetrics.outcomes.inc({ outcome: 'not_settled' });
        throw err; // rendered by problemErrors; nothing is settled
      }
      if (!settleOnStatus(ctx.status)) {
        await cancellationDispatcher.cancel({ reason: 'handler_failed', responseStatus: ctx.status }).catch(() => undefined);
        paymentMetrics.outcomes.inc({ outcome: 'not_settled' });
        return;
      }

      const t1 = performance.now();
      let settled;
      try {
        // Explicit (empty) overrides: a handler's Settlement-Overrides header is never honoured.
        settled = await http.processSettlement(paymentPayload, paymentRequirements, declaredExtensions, { request: context }, {}, beforeHandlerSettlement);
      } catch (err) {
        paymentMetrics.settleSeconds.observe({ outcome: 'error' }, (performance.now() - t1) / 1000);
        paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
        log?.error({ err: errorMessage(err), payer: lockable.payer }, 'x402: settlement failed at the facilitator; body withheld');
        withholdBody(ctx);
        return writeProblem(ctx, err instanceof FacilitatorUnavailableError ? 503 : 502, 'settlement_unavailable', `payment could not be settled: ${firstLine(err)}`, {
          dependency: 'facilitator',
        });
      }
      const settleSeconds = (performance.now() - t1) / 1000;
      if (!settled.success) {
        paymentMetrics.settleSeconds.observe({ outcome: 'failed' }, settleSeconds);
        paymentMetrics.outcomes.inc({ outcome: 'settle_failed' });
        log?.warn({ reason: settled.errorReason, transaction: settled.transaction, payer: lockable.payer }, 'x402: settlement failed; body withheld');
        withholdBody(ctx);
        for (const [name, value] of Object.entries(settled.headers)) ctx.set(name, value);
        ctx.set('Cache-Control', 'no-store');
        return writeProblem(ctx, 402, 'settlement_failed', `payment could not be settled: ${settled.errorReason}`, {
          reason: settled.errorReason,
          ...(settled.transaction ? { transaction: settled.transaction } : {}),
        });
      }
      paymentMetrics.settleSeconds.observe({ outcome: 'settled' }, settleSeconds);
      paymentMetrics.outcomes.inc({ outcome: 'settled' });
      for (const [name, value] of Object.entries(settled.headers)) ctx.set(name, value);
      ctx.set('Cache-Control', withPrivateCacheControl(ctx.response.get('Cache-Control') || null));
      log?.info(
        { payer: settled.payer, transaction: settled.transaction, amount: paymentRequirements.amount, verify_ms: ms(verifySeconds), settle_ms: ms(settleSeconds) },
        'x402: payment settled',
      );
    } finally {
      const done = handlerRan ? options.replayGuard.markUsed(key, lock.token, usedTtlMs) : options.replayGuard.release(key, lock.token);
      await done.catch((err: unknown) => log?.error({ err: errorMessage(err) }, 'x402: replay guard update failed'));
    }
  }) as PaymentGate;

  return Object.assign(gate, { ready, resourceServer });
}

/** The core's route config for one paid route: `exact`, the configured asset with its EIP-712 domain, and the discovery declaration. */
function routeConfig(route: PaidRoute, terms: PaymentTerms, discovery: boolean, budget: number): RouteConfig {
  const config: RouteConfig = {
    accepts: {
      scheme: 'exact',
      network: terms.network,
      payTo: terms.payTo,
      price: { amount: route.priceAtomic, asset: terms.asset, extra: { name: terms.assetName, version: terms.assetVersion } },
      maxTimeoutSeconds: terms.maxTimeoutSeconds,
    },
    description: truncate(route.description, MAX_DESCRIPTION),
    mimeType: route.mimeType,
  };
  if (discovery) {
    const fitted = discoveryExtension(route, terms, config.description ?? '', budget);
    if (fitted) {
      config.extensions = fitted.declared;
      config.description = fitted.description;
    }
  }
  return config;
}

/**
 * The Bazaar declaration (api/payment/bazaar-declaration.ts), as rich as the
 * header budget allows: the input example and schema always, the prose and the
 * output example shortened until it fits (the route's description too, to its
 * first clause, before the output example is left out).
 */
function discoveryExtension(
  route: PaidRoute,
  terms: PaymentTerms,
  fullDescription: string,
  budget: number,
): { declared: Record<string, unknown>; description: string } | undefined {
  const descriptions = [...new Set([fullDescription, briefDescription(fullDescription)])];
  for (const [declared, description] of bazaarCandidates(route).flatMap((d) => descriptions.map((text): [Record<string, unknown>, string] => [d, text]))) {
    // Worst case of what the core will emit: longest URL and error text, plus the method the extension adds.
    const estimate: PaymentRequired = {
      x402Version: 2,
      error: 'x'.repeat(MAX_ERROR_TEXT),
      resource: { url: 'x'.repeat(MAX_RESOURCE_URL), description, mimeType: route.mimeType },
      accepts: [
        {
          scheme: 'exact',
          network: terms.network,
          amount: route.priceAtomic,
          asset: terms.asset,
          payTo: terms.payTo,
          maxTimeoutSeconds: terms.maxTimeoutSeconds,
          extra: { name: terms.assetName, version: terms.assetVersion },
        },
      ],
      extensions: declared,
    };
    if (encodePaymentRequiredHeader(estimate).length + 200 <= budget) return { declared, description };
  }
  return undefined;
}

/** EIP-3009 (or Permit2) payer and nonce of a v2 payload, which the replay lock is keyed on. */
function lockFacts(payload: PaymentPayload): { payer: string; nonce: string; validBeforeMs: number } | undefined {
  if (payload?.x402Version !== 2 || !payload.accepted || typeof payload.payload !== 'object' || payload.payload === null) return undefined;
  const auth = payload.payload.authorization as { from?: unknown; nonce?: unknown; validBefore?: unknown } | undefined;
  if (auth && typeof auth.from === 'string' && typeof auth.nonce === 'string') {
    return { payer: auth.from, nonce: auth.nonce, validBeforeMs: secondsToMs(auth.validBefore) };
  }
  const permit2 = payload.payload.permit2Authorization as { from?: unknown; nonce?: unknown; deadline?: unknown } | undefined;
  if (permit2 && typeof permit2.from === 'string' && typeof permit2.nonce === 'string') {
    return { payer: permit2.from, nonce: `permit2:${permit2.nonce}`, validBeforeMs: secondsToMs(permit2.deadline) };
  }
  return undefined;
}

/** Writes a 402 (or 412/403) from the core's instructions: its headers (PAYMENT-REQUIRED within budget) and a problem+json body. */
function writePaymentError(
  ctx: Context,
  response: HTTPResponseInstructions,
  budget: number,
  code: string,
  detail: string,
  extra: Record<string, unknown>,
  overrideError: string | undefined,
): void {
  for (const [name, value] of Object.entries(response.headers)) {
    if (name.toLowerCase() === 'content-type') continue;
    if (name.toLowerCase() === 'payment-required') ctx.set(name, fitChallenge(value, budget, overrideError));
    else ctx.set(name, value);
  }
  writeProblem(ctx, response.status, code, detail, extra);
}

/** Rewrites the challenge's `error` when asked, and trims it to the header budget (error text first, then the discovery declaration). */
function fitChallenge(encoded: string, budget: number, overrideError: string | undefined): string {
  if (overrideError === undefined && encoded.length <= budget) return encoded;
  const decoded = decodePaymentRequiredHeader(encoded);
  if (overrideError !== undefined) decoded.error = overrideError;
  let out = encodePaymentRequiredHeader(decoded);
  if (out.length > budget && decoded.error) {
    decoded.error = truncate(decoded.error, MAX_ERROR_TEXT);
    out = encodePaymentRequiredHeader(decoded);
  }
  if (out.length > budget && decoded.extensions) {
    delete decoded.extensions;
    out = encodePaymentRequiredHeader(decoded);
  }
  return out;
}

function challengeError(response: HTTPResponseInstructions): string | undefined {
  const header = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'payment-required')?.[1];
  if (!header) return undefined;
  try {
    return decodePaymentRequiredHeader(header).error;
  } catch {
    return undefined;
  }
}

function writeProblem(ctx: Context, status: number, code: string, detail: string, extra: Record<string, unknown> = {}): void {
  ctx.status = status;
  ctx.body = { ...problem(status, code, detail, extra), request_id: ctx.state.requestId };
  ctx.type = 'application/problem+json';
}

/** Drops what the handler produced, so an unsettled request gets nothing of the protected result. */
function withholdBody(ctx: Context): void {
  ctx.body = null;
  for (const name of ['ETag', 'Last-Modified', 'Content-Disposition', 'Content-Encoding', 'Content-Language']) ctx.remove(name);
}

function resourceUrlOf(ctx: Context, publicBaseUrl: string | undefined): string {
  // Koa 3's ctx.origin is the Origin request header, not this server's origin.
  const origin = (publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
  const full = `${origin}${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
  return full.length <= MAX_RESOURCE_URL ? full : truncate(`${origin}${ctx.path}`, MAX_RESOURCE_URL);
}

/** "15000" -> "0.015" (6 decimals, trailing zeros dropped). */
export function readableUsdc(atomic: string): string {
  const v = BigInt(atomic);
  const whole = v / 1_000_000n;
  const frac = (v % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Number.isFinite(v) ? v : lo));
const ms = (s: number) => Math.round(s * 10000) / 10;
const firstLine = (err: unknown) => truncate(errorMessage(err).split('\n')[0] ?? '', 200);

function secondsToMs(v: unknown): number {
  try {
    return Number(BigInt(String(v))) * 1000;
  } catch {
    return Number.NaN;
  }
}
