/**
 * Mounts every SKU of the catalogue. Per route, in this order:
 *
 *   available?        no  -> 503 `sku_unavailable` (+ zero `charged`), never challenged
 *   parse input          GET: query string; POST: JSON body (koa-body, size limit)
 *                        -> 400 `invalid_json` / 413 `payload_too_large` / 415 `unsupported_media_type`
 *   zod validate         -> 400 `invalid_parameter` | `missing_parameter` | `unknown_parameter`, `field` = first offending path
 *   pre-flight           -> 404 `outside_coverage` / `no_data_in_window`, 503 `book_unavailable` (+ zero `charged`)
 *   ctx.state.paidRoute  (paid routes only)
 *   x402 gate            -> 402 challenge, verify; settles only a 200 (5xx never settles)
 *   handler              -> 200 JSON; in non-production the body is checked against the output schema (mismatch logged loudly)
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
import { koaBody } from 'koa-body';
import type { z } from 'zod';
import { AppError } from '../core/errors.js';
import { problem } from './middleware/problem-errors.js';
import type { PaidRoute } from './payment/payment-gate.js';
import { inputJsonSchema } from './catalogue/json-schema.js';
import { withClosedSliceCache } from './telemetry/closed-slice-cache.js';
import { answerValue, JsonText } from './catalogue/json-text.js';
import { ZERO_CHARGE_TEXT } from './catalogue/schemas.js';
import type { HttpMethod, PricedSku, SkuCall, SkuRuntime } from './catalogue/sku.js';

declare module 'koa' {
  interface DefaultState {
    /** The validated call and what its pre-flight prepared, for the SKU handler. */
    sku?: { call: SkuCall<unknown>; prepared: unknown };
  }
}

export interface SkuRoutesOptions {
  runtime: Omit<SkuRuntime, 'log'>;
  /** The x402 gate (api/payment/payment-gate.ts); free routes pass through it. */
  gate: Middleware;
  /** Check every 200 body against the SKU's output schema and log mismatches (default: NODE_ENV !== production). */
  checkResponses?: boolean;
  /** Largest JSON body accepted (koa-body `jsonLimit`). Default 4mb. */
  bodyLimit?: string;
}

/**
 * The JSON body limit: the largest inputs the schemas admit (1,000,000 characters of HTML or code, 64 texts to
 * embed) escaped as JSON fit; past it, 413 `payload_too_large` before any challenge.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
export const DEFAULT_BODY_LIMIT = '4mb';

export function mountSkuRoutes(router: Router, options: SkuRoutesOptions): void {
  const checkResponses = options.checkResponses ?? options.runtime.config.NODE_ENV !== 'production';
  const body = jsonBody(options.bodyLimit ?? DEFAULT_BODY_LIMIT);
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
      const chain: Middleware[] = [
        availability(sku),
        ...(method === 'POST' ? [body] : []),
        prepare(sku, method, options.runtime),
        options.gate,
        serve(sku, checkResponses),
      ];
      if (method === 'GET') router.get(sku.path, ...chain);
      else router.post(sku.path, ...chain);
    }
  }
}

/** The gate's view of a paid route (one per method: GET and its POST alias are distinct x402 resources). */
export function paidRouteOf(sku: PricedSku, method: HttpMethod): PaidRoute {
  return {
    method,
    path: sku.path,
    description: sku.description,
    priceAtomic: sku.priceAtomic,
    mimeType: 'application/json',
    inputSchemaJson: inputJsonSchema(sku),
    inputExample: sku.exampleInput,
    outputExample: sku.example,
  };
}

function availability(sku: PricedSku): Middleware {
  return async (ctx: Context, next: Next) => {
    if (!sku.available) {
      // An expected answer, not a failure: written here so it is not logged as a server error.
      const detail = `${sku.method} ${sku.path} is declared but not served yet; see /api/v1/discovery for the available routes`;
      return writeRejection(ctx, new AppError('sku_unavailable', detail, 503, { charged: ZERO_CHARGE_TEXT }));
    }
    await next();
  };
}

/** A pre-flight rejection (an expected outcome, never charged) as problem+json, logged at info level. */
function writeRejection(ctx: Context, err: AppError): void {
  ctx.state.log?.info({ code: err.code, status: err.status }, 'rejected before payment');
  ctx.status = err.status;
  ctx.type = 'application/problem+json';
  ctx.body = { ...problem(err.status, err.code, err.message, err.details), request_id: ctx.state.requestId };
}

/** JSON bodies only, with a size limit; parse failures become problem codes. */
function jsonBody(limit: string): Middleware {
  const parse = koaBody({
    json: true,
    jsonLimit: limit,
    jsonStrict: true,
    multipart: false,
    urlencoded: false,
    text: false,
    onError: (err: Error) => {
      const e = err as Error & { status?: number; type?: string };
      if (e.status === 413 || e.type === 'entity.too.large')
        throw new AppError('payload_too_large', `the JSON body exceeds ${limit}`, 413);
      throw new AppError('invalid_json', `the body is not valid JSON: ${e.message}`, 400);
    },
  });
  return async (ctx: Context, next: Next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.is('application/json', '+json')) {
      throw new AppError(
        'unsupported_media_type',
        'send the request body as JSON (Content-Type: application/json)',
        415,
      );
    }
    await parse(ctx, next);
  };
}

/** Parses and validates the input, runs the pre-flight, and marks the route paid for the gate. */
function prepare(sku: PricedSku, method: HttpMethod, runtime: Omit<SkuRuntime, 'log'>): Middleware {
  const paidRoute = sku.free ? undefined : paidRouteOf(sku, method);
  return async (ctx: Context, next: Next) => {
    const raw = method === 'GET' ? queryObject(ctx) : bodyObject(ctx);
    const parsed = sku.input.safeParse(raw);
    if (!parsed.success) throw validationError(parsed.error, raw);
    const call: SkuCall<unknown> = {
      input: parsed.data,
      runtime: { ...runtime, log: ctx.state.log },
      priceAtomic: sku.priceAtomic,
    };
    let prepared: unknown;
    try {
      prepared = sku.preflight ? await sku.preflight(call) : undefined;
    } catch (err) {
      // Pre-flight rejections carry `charged` (the zero charge); anything else is a failure for problemErrors.
      if (err instanceof AppError && 'charged' in err.details) return writeRejection(ctx, err);
      throw err;
    }
    ctx.state.sku = { call, prepared };
    if (paidRoute) ctx.state.paidRoute = paidRoute;
    await next();
  };
}

function serve(sku: PricedSku, checkResponses: boolean): Middleware {
  return async (ctx: Context) => {
    const state = ctx.state.sku;
    if (!state) throw new AppError('internal_error', 'the SKU call was not prepared', 500);
    const result = await sku.handler(state.call, state.prepared);
    if (checkResponses) {
      const check = sku.output.safeParse(answerValue(result));
      if (!check.success) {
        ctx.state.log?.error(
          { sku: sku.id, issues: check.error.issues.slice(0, 10) },
          `RESPONSE SCHEMA MISMATCH: ${sku.method} ${sku.path} answered a body that does not match its output schema`,
        );
      }
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = result instanceof JsonText ? result.text : result; // a kept answer goes out as the text it was kept as
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

/** The first issue as a 400 problem: a stable code and the offending field. */
export function validationError(error: z.ZodError, raw: Record<string, unknown>): AppError {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = issue.keys[0] ?? '';
    return new AppError('unknown_parameter', `unknown parameter ${field}`, 400, { field });
  }
  const field = issue.path.map(String).join('.');
  // A refinement may name its own stable code (and details): `params: { code: 'unsupported_language', details: {...} }`.
  const params =
    issue.code === 'custom'
      ? (issue.params as { code?: unknown; details?: Record<string, unknown> } | undefined)
      : undefined;
  if (typeof params?.code === 'string')
    return new AppError(params.code, `${field ? `${field}: ` : ''}${issue.message}`, 400, {
      ...(params.details ?? {}),
      ...(field ? { field } : {}),
    });
  const missing = issue.code === 'invalid_type' && issue.path.length === 1 && raw[String(issue.path[0])] === undefined;
  return new AppError(
    missing ? 'missing_parameter' : 'invalid_parameter',
    `${field ? `${field}: ` : ''}${missing ? 'required' : issue.message}`,
    400,
    field ? { field } : {},
  );
}
