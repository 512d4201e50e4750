import type { Router } from '@koa/router';
import type { HealthRegistry } from '../../core/health.js';

/** `GET /health`: 200 while every component is ok or degraded, 503 when one is down. */
export function mountHealth(router: Router, health: HealthRegistry): void {
  router.get('/health', async (ctx) => {
    const report = await health.check();
    ctx.status = report.status === 'down' ? 503 : 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = report;
  });
}
