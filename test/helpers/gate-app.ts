/**
 * A small Koa app behind the real x402 gate for payment tests: two GET
 * routes at the same price (`/api/v1/test/a`, `/api/v1/test/b`) and a POST
 * route, each counting how often its handler ran, in the router's order
 * (validate -> paidRoute -> gate -> handler), on a loopback port.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import { listen, type HttpServer } from '../../api/http-server.js';
import { requestContext } from '../../api/middleware/request-context.js';
import { problemErrors } from '../../api/middleware/problem-errors.js';
import type { PaidRoute, PaymentGate } from '../../api/paid-call/payment-gate.js';
import type { Logger } from '../../core/logger.js';

export const GATE_APP_PRICE = '15000';

export const GATE_APP_ROUTES = {
  a: {
    method: 'GET',
    path: '/api/v1/test/a',
    description: 'Test route A',
    priceAtomic: GATE_APP_PRICE,
    mimeType: 'application/json',
  },
  b: {
    method: 'GET',
    path: '/api/v1/test/b',
    description: 'Test route B',
    priceAtomic: GATE_APP_PRICE,
    mimeType: 'application/json',
  },
  post: {
    method: 'POST',
    path: '/api/v1/test/a',
    description: 'Test route A (POST)',
    priceAtomic: GATE_APP_PRICE,
    mimeType: 'application/json',
  },
} satisfies Record<string, PaidRoute>;

export interface GateApp {
  url: string;
  http: HttpServer;
  /** Handler runs per route key. */
  runs: Record<keyof typeof GATE_APP_ROUTES, number>;
}

export async function startGateApp(gate: PaymentGate, logger: Logger, handlerDelayMs = 0): Promise<GateApp> {
  const runs = { a: 0, b: 0, post: 0 };
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  for (const [key, route] of Object.entries(GATE_APP_ROUTES) as [keyof typeof GATE_APP_ROUTES, PaidRoute][]) {
    const mark = async (ctx: Koa.Context, next: Koa.Next) => {
      ctx.state.paidRoute = route;
      await next();
    };
    const handler = async (ctx: Koa.Context) => {
      runs[key] += 1;
      if (handlerDelayMs) await new Promise((r) => setTimeout(r, handlerDelayMs));
      ctx.body = { route: key, payer: ctx.state.payment?.payer, query: ctx.query };
    };
    if (route.method === 'GET') router.get(route.path, mark, gate, handler);
    else router.post(route.path, mark, gate, handler);
  }
  app.use(requestContext(logger));
  app.use(problemErrors());
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  const http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
  return { url: http.url, http, runs };
}
