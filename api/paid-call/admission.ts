/**
 * The steps of a call before any payment, in this order; each answers a
 * rejection (never charged, never challenged) or hands the next step on:
 *
 *   availability   declared but not served -> 503 `sku_unavailable`; the runtime's
 *                  readiness hook (`SkuRuntime.readiness`: a dependency down) -> its 503
 *   input          the door reads what the caller sent (HTTP: query or JSON body, where a
 *                  400/413/415 is the door's own error, thrown); read after availability
 *   validation     the SKU's zod schema -> 400 `invalid_parameter` | `missing_parameter` |
 *                  `unknown_parameter` (core/validation-error.ts), `field` = the offending path
 *   pre-flight     the SKU's data checks -> PreflightRejection (404 `outside_coverage`,
 *                  503 `book_unavailable`...); any other error is a failure, thrown
 *
 * The result is the admitted call: the validated input, the runtime the
 * handler reads, what the pre-flight prepared for it, and its price
 * (`call.priceAtomic`: api/sku/call-price.ts, from the SKU's price and the pre-flight).
 */
import type { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { validationError } from '../../core/validation-error.js';
import type { PricedSku, SkuCall, SkuRuntime } from '../sku/sku.js';
import { callPriceAtomic } from '../sku/call-price.js';
import { PreflightRejection, preflightRejectionOf } from './preflight-rejection.js';

/** How a door names the call in its answers and logs, and where its callers find what is served. */
export interface CallNaming {
  /** `GET /api/v1/crypto/spread-candles` (HTTP), `spread_candles` (MCP). */
  subject: string;
  /** `/api/v1/discovery for the available routes` (HTTP), `the discovery tool for the available tools` (MCP). */
  discovery: string;
}

/** One call as a door hands it to the pipeline. */
export interface CallRequest {
  sku: PricedSku;
  /** What the caller sent, or how to read it (called after the availability step; its errors are thrown). */
  input: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
  naming: CallNaming;
  log?: Logger;
}

/** A call that passed every step before payment. */
export interface AdmittedCall {
  sku: PricedSku;
  call: SkuCall<unknown>;
  /** What the pre-flight handed the handler. */
  prepared: unknown;
  naming: CallNaming;
  log?: Logger;
}

export type Admission =
  | { ok: true; admitted: AdmittedCall }
  | { ok: false; step: 'availability' | 'validation' | 'preflight'; rejection: AppError };

type Runtime = Omit<SkuRuntime, 'log'>;

export async function admit(runtime: Runtime, request: CallRequest): Promise<Admission> {
  const { sku, naming, log } = request;
  const unavailable = await checkAvailability(runtime, sku, naming);
  if (unavailable) return { ok: false, step: 'availability', rejection: unavailable };
  const raw = typeof request.input === 'function' ? await request.input() : request.input;
  const valid = validateInput(sku, raw);
  if (!valid.ok) return { ok: false, step: 'validation', rejection: valid.rejection };
  const call: SkuCall<unknown> = {
    input: valid.input,
    runtime: { ...runtime, ...(log ? { log } : {}) },
    priceAtomic: sku.priceAtomic,
  };
  const preflight = await runPreflight(sku, call);
  if (!preflight.ok) return { ok: false, step: 'preflight', rejection: preflight.rejection };
  call.priceAtomic = callPriceAtomic(sku.priceAtomic, preflight.prepared); // known before any challenge (call-price.ts)
  return { ok: true, admitted: { sku, call, prepared: preflight.prepared, naming, ...(log ? { log } : {}) } };
}

/** Served at all, and (the runtime's readiness hook) served right now. */
export async function checkAvailability(
  runtime: Runtime,
  sku: PricedSku,
  naming: CallNaming,
): Promise<PreflightRejection | undefined> {
  if (!sku.available)
    return new PreflightRejection(
      'sku_unavailable',
      `${naming.subject} is declared but not served yet; see ${naming.discovery}`,
      503,
    );
  const notReady = runtime.readiness ? await runtime.readiness(sku) : undefined;
  if (!notReady || notReady instanceof PreflightRejection) return notReady;
  return new PreflightRejection(notReady.code, notReady.message, notReady.status, notReady.details);
}

export function validateInput(
  sku: PricedSku,
  raw: Record<string, unknown>,
): { ok: true; input: unknown } | { ok: false; rejection: AppError } {
  const parsed = sku.input.safeParse(raw);
  return parsed.success
    ? { ok: true, input: parsed.data }
    : { ok: false, rejection: validationError(parsed.error, { input: raw }) };
}

/** The SKU's pre-flight: a rejection is an outcome; any other error is a failure and is thrown. */
export async function runPreflight(
  sku: PricedSku,
  call: SkuCall<unknown>,
): Promise<{ ok: true; prepared: unknown } | { ok: false; rejection: PreflightRejection }> {
  if (!sku.preflight) return { ok: true, prepared: undefined };
  try {
    return { ok: true, prepared: await sku.preflight(call) };
  } catch (err) {
    const rejection = preflightRejectionOf(err);
    if (rejection) return { ok: false, rejection };
    throw err;
  }
}
