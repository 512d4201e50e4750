/** The Koa application: middleware order, then the routes mounted by each concern. */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Logger } from '../core/logger.js';
import type { HealthRegistry } from '../core/health.js';
import { requestContext } from './middleware/request-context.js';
import { problemErrors } from './middleware/problem-errors.js';
import { mountHealth } from './routes/health.js';
import { mountMetrics } from './routes/metrics.js';

export interface AppDeps {
  logger: Logger;
  health: HealthRegistry;
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by problemErrors with the request id
  const router = new Router();
  mountHealth(router, deps.health);
  mountMetrics(router);
  app.use(requestContext(deps.logger));
  app.use(problemErrors());
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}
