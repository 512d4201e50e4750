import type { Router } from '@koa/router';
import { registry } from '../../core/metrics.js';

/** `GET /metrics`: Prometheus text format. */
export function mountMetrics(router: Router): void {
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
}
