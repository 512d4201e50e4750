/**
 * The HTTP door: mounts every SKU of the catalogue and maps Koa onto the
 * paid-call pipeline (api/paid-call/), one middleware per stage. Per route, in this order:
 *
 *   admission         availability -> 503 `sku_unavailable` (+ zero `charged`), never challenged
 *                     input: GET: query string; POST: JSON body (middleware/json-body.ts, size limit)
 *                       -> 400 `invalid_json` / 413 `payload_too_large` / 415 `unsupported_media_type`
 *                     validation -> 400 `invalid_parameter` | `missing_parameter` | `unknown_parameter`, `field`
 *                     pre-flight -> 404 `outside_coverage` / `no_data_in_window`, 503 `book_unavailable` (+ zero `charged`)
 *                     then ctx.state.paidRoute (paid routes only)
 *   x402 gate         paid-call/payment-gate.ts: 402 challenge, verify; settles only a 200 (5xx never settles)
 *   handler           -> 200 JSON; in non-production the body is checked against the output schema (mismatch logged loudly)
 *
 * Pre-flight and handler of a windowed SKU are wrapped by the closed-slice
 * cache (api/telemetry/closed-slice-cache.ts): a window named by its date that
 * can no longer change is answered from memory.
 *
 * Telemetry routes answer their spec method (GET, query parameters) and POST
 * with a JSON body (the original service's published clients send POST);
 * the other SKUs are POST only, as the spec lists them.
 */
import type { Context, Middleware, Next } from 'koa';
import type { Router } from '@koa/router';
import { AppError } from '../core/errors.js';
import { problem, retryAfterHeader } from './middleware/problem-errors.js';
import { DEFAULT_BODY_LIMIT, jsonBodyReader } from './middleware/json-body.js';
import { admit, type AdmittedCall, type CallNaming } from './paid-call/admission.js';
import { runHandler } from './paid-call/handler-step.js';
import { isEventStreamSku, isStreamedAnswer } from './sku/streamed-answer.js';
import { paidRouteOf } from './paid-call/paid-route.js';
import { pricedRoute } from './sku/call-price.js';
import { withClosedSliceCache } from './telemetry/closed-slice-cache.js';
import { JsonText } from './sku/json-text.js';
import type { HttpMethod, PricedSku, SkuRuntime } from './sku/sku.js';

export { DEFAULT_BODY_LIMIT, DEFAULT_BODY_LIMIT_BYTES } from './middleware/json-body.js';
export { paidRouteOf } from './paid-call/paid-route.js';

declare module 'koa' {
  interface DefaultState {
    /** The admitted call (validated input, what its pre-flight prepared), for the SKU handler. */
    sku?: AdmittedCall;
  }
}

export interface SkuRoutesOptions {
  runtime: Omit<SkuRuntime, 'log'>;
  /** The x402 gate (api/paid-call/payment-gate.ts); free routes pass through it. */
  gate: Middleware;
  /** Check every 200 body against the SKU's output schema and log mismatches (default: NODE_ENV !== production). */
  checkResponses?: boolean;
  /** Largest JSON body accepted (koa-body `jsonLimit`). Default 4mb. */
  bodyLimit?: string;
}

export function mountSkuRoutes(router: Router, options: SkuRoutesOptions): void {
  const checkResponses = options.checkResponses ?? options.runtime.config.NODE_ENV !== 'production';
  const readBody = jsonBodyReader(options.bodyLimit ?? DEFAULT_BODY_LIMIT);
  const { config } = options.runtime;
  const cache = {
    maxBytes: config.TELEMETRY_CACHE_MAX_MB * 1024 * 1024,
    closedAfterMs: config.TELEMETRY_CACHE_CLOSED_AFTER_MS,
    dataMarginMs: config.TELEMETRY_CACHE_DATA_MARGIN_MS,
    now: () => options.runtime.now(),
  };
  for (const declared of options.runtime.catalogue.skus) {
    const sku = withClosedSliceCache(declared, cache);
    const methods: HttpMethod[] = sku.alsoPost && sku.method !== 'POST' ? [sku.method, 'POST'] : [sku.method];
    for (const method of methods) {
      const read = method === 'GET' ? queryObject : async (ctx: Context) => (await readBody(ctx), bodyObject(ctx));
      const chain = [admission(sku, method, options.runtime, read), options.gate, serve(checkResponses)];
      if (method === 'GET') router.get(sku.path, ...chain);
      else router.post(sku.path, ...chain);
    }
  }
}

/** Availability, input, validation and pre-flight; a paid route is then marked for the gate. */
function admission(
  sku: PricedSku,
  method: HttpMethod,
  runtime: Omit<SkuRuntime, 'log'>,
  read: (ctx: Context) => Record<string, unknown> | Promise<Record<string, unknown>>,
): Middleware {
  const paidRoute = sku.free ? undefined : paidRouteOf(sku, method);
  const naming: CallNaming = {
    subject: `${sku.method} ${sku.path}`,
    discovery: '/api/v1/discovery for the available routes',
  };
  return async (ctx: Context, next: Next) => {
    const input = async () => {
      const raw = await read(ctx);
      // A stream's resume cursor comes as the SSE `Last-Event-ID` header (api/telemetry/stream/).
      const lastEventId = isEventStreamSku(sku) ? ctx.get('last-event-id') : '';
      return lastEventId ? { ...raw, last_event_id: lastEventId } : raw;
    };
    const admitted = await admit(runtime, { sku, input, naming, log: ctx.state.log });
    if (!admitted.ok) return writeRejection(ctx, admitted.rejection);
    ctx.state.sku = admitted.admitted;
    const price = admitted.admitted.call.priceAtomic; // call-price.ts; '0': already paid (a resumed stream)
    if (paidRoute && price !== '0') ctx.state.paidRoute = pricedRoute(paidRoute, price);
    await next();
  };
}

/** A rejection before payment (an expected outcome, never charged) as problem+json, logged at info level. */
function writeRejection(ctx: Context, err: AppError): void {
  ctx.state.log?.info({ code: err.code, status: err.status }, 'rejected before payment');
  ctx.status = err.status;
  ctx.type = 'application/problem+json';
  ctx.body = { ...problem(err.status, err.code, err.message, err.details), request_id: ctx.state.requestId };
  const retryAfter = retryAfterHeader(err.status, err.details); // a dependency that is down says when to retry
  if (retryAfter !== undefined) ctx.set('Retry-After', retryAfter);
}

function serve(checkResponses: boolean): Middleware {
  return async (ctx: Context) => {
    const admitted = ctx.state.sku;
    if (!admitted) throw new AppError('internal_error', 'the SKU call was not prepared', 500);
    const answer = await runHandler(admitted, { checkResponses });
    if (isStreamedAnswer(answer)) {
      // Paid in advance: the gate settles before the first byte (sku/streamed-answer.ts).
      ctx.state.streamed = answer;
      ctx.status = 200;
      ctx.type = answer.contentType;
      ctx.set(answer.headers);
      ctx.body = answer.body;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = answer instanceof JsonText ? answer.text : answer; // a kept answer goes out as the text it was kept as
  };
}

function queryObject(ctx: Context): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    if (Array.isArray(value))
      throw new AppError('invalid_parameter', `${name} is given more than once`, 400, { field: name });
    out[name] = value;
  }
  return out;
}

function bodyObject(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body as unknown;
  if (body === undefined || body === null || (typeof body === 'string' && body === '')) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new AppError('invalid_json', 'the JSON body must be an object', 400);
  return body as Record<string, unknown>;
}
