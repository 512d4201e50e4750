/**
 * The HTTP server of a process without the api role (ingest, aggregate,
 * worker): /health and /metrics only, with the API's request ids and
 * problem+json errors. Apart from api/app.ts so these roles do not load the
 * route catalogue, the payment stack and the discovery documents: that was
 * 4 s of module loading on 2 cores, during which a restarted aggregate had
 * joined its groups but could not consume.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { RoleContext } from '../core/role.js';
import { listen, type HttpServer } from './http-server.js';
import { problemErrors } from './middleware/problem-errors.js';
import { requestContext } from './middleware/request-context.js';
import { mountHealth } from './routes/health.js';
import { mountMetrics } from './routes/metrics.js';

export async function startOpsServer(ctx: RoleContext): Promise<HttpServer> {
  const app = new Koa({ proxy: ctx.config.HTTP_TRUST_PROXY });
  app.silent = true; // errors are logged by problemErrors with the request id
  const router = new Router();
  mountHealth(router, ctx.health);
  mountMetrics(router);
  app.use(requestContext(ctx.logger));
  app.use(problemErrors());
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  const http = await listen(app, ctx.config);
  ctx.logger.info({ url: http.url }, 'ops endpoints listening (/health, /metrics)');
  return http;
}
