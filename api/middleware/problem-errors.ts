/**
 * One JSON error shape everywhere: RFC 9457 problem details
 * (`application/problem+json`) with a stable machine-readable `code`, the
 * offending `field` when there is one, and the request id. A 429 or 503 whose
 * details carry `retry_after_seconds` also gets a `Retry-After` header.
 */
import type { Middleware } from 'koa';
import { AppError } from '../../core/errors.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  field?: string;
  request_id?: string;
  [extension: string]: unknown;
}

export const PROBLEM_TYPE_BASE = 'https://docs.x402-gateway.dev/errors/';

export function problem(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): Problem {
  return { type: `${PROBLEM_TYPE_BASE}${code}`, title: code.replace(/_/g, ' '), status, code, detail, ...extra };
}

export function problemErrors(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.type = 'application/problem+json';
        ctx.body = {
          ...problem(404, 'route_not_found', `no route ${ctx.method} ${ctx.path}`),
          request_id: ctx.state.requestId,
        };
      } else if ((ctx.status === 405 || ctx.status === 501) && !ctx.body) {
        // The router's answer to a method the route does not have (501 for methods it does not know at all).
        const allow = ctx.response.get('Allow');
        ctx.status = 405;
        ctx.type = 'application/problem+json';
        ctx.body = {
          ...problem(
            405,
            'method_not_allowed',
            `${ctx.method} is not allowed on ${ctx.path}${allow ? `; allowed: ${allow}` : ''}`,
          ),
          request_id: ctx.state.requestId,
        };
      }
    } catch (err) {
      const known = err instanceof AppError;
      const httpish = err as { status?: number; expose?: boolean; message?: string };
      const status = known
        ? err.status
        : typeof httpish.status === 'number' && httpish.status >= 400 && httpish.status < 600
          ? httpish.status
          : 500;
      const code = known
        ? err.code
        : status === 500
          ? 'internal_error'
          : status === 413
            ? 'payload_too_large'
            : status === 415
              ? 'unsupported_media_type'
              : status === 405
                ? 'method_not_allowed'
                : 'bad_request';
      const detail = known || httpish.expose ? (httpish.message ?? code) : 'internal error';
      if (status >= 500) ctx.state.log?.error({ err }, 'request failed');
      ctx.status = status;
      ctx.type = 'application/problem+json';
      ctx.body = { ...problem(status, code, detail, known ? err.details : {}), request_id: ctx.state.requestId };
      const retryAfter = known ? retryAfterHeader(status, err.details) : undefined;
      if (retryAfter !== undefined) ctx.set('Retry-After', retryAfter);
    }
  };
}

/**
 * `Retry-After` (RFC 9110 §10.2.3, delta-seconds) for a 429 or 503 whose details carry
 * `retry_after_seconds` (e.g. domain-check's and dex-price-summary's `upstream_rate_limited`): the value a
 * client or proxy reads without parsing the body. Only a non-negative integer is sent; anything else
 * (a fraction, a string, a negative number) is left to the body.
 */
export function retryAfterHeader(status: number, details: Record<string, unknown>): string | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const seconds = details.retry_after_seconds;
  return typeof seconds === 'number' && Number.isSafeInteger(seconds) && seconds >= 0 ? String(seconds) : undefined;
}
