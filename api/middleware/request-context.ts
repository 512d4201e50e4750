/**
 * Request id (taken from `X-Request-Id` when the caller sends a sane one),
 * a per-request child logger, one access-log line and the HTTP histogram.
 * What later middleware puts in `ctx.state.accessLog` joins the access line
 * (the payment gate: the settled payment's payer, transaction and timings).
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger.js';
import { metrics } from '../../core/metrics.js';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    /** Extra fields of this request's access line. */
    accessLog?: Record<string, unknown>;
  }
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = SANE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ request_id: requestId });
    ctx.set('X-Request-Id', requestId);
    const t0 = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - t0) / 1000;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequests.observe({ method: ctx.method, route: String(route), status: String(ctx.status) }, seconds);
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          duration_ms: Math.round(seconds * 10000) / 10,
          ...ctx.state.accessLog,
        },
        'request',
      );
    }
  };
}
