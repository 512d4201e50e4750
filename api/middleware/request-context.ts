/**
 * Request id (taken from `X-Request-Id` when the caller sends a sane one),
 * a per-request child logger, one access-log line and the HTTP histogram.
 * What later middleware puts in `ctx.state.accessLog` joins the access line
 * (the payment gate: the settled payment's payer, transaction and timings).
 * A route that sets `ctx.state.accessLogLevel = 'debug'` (the dashboard's
 * polls and assets, api/dashboard/mount.ts) has its line at debug unless it
 * failed (5xx), so at info the log is the paid calls and the rest.
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
    /** 'debug': this request's access line is logged at debug (below 500). */
    accessLogLevel?: 'debug';
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
      const level = ctx.state.accessLogLevel === 'debug' && ctx.status < 500 ? 'debug' : 'info';
      ctx.state.log[level](
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
