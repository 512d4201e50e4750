/** The Koa application: middleware order, then the routes mounted by each concern. */
import Koa, { type Middleware } from 'koa';
import { Router } from '@koa/router';
import type { Logger } from '../core/logger.js';
import type { HealthRegistry } from '../core/health.js';
import type { Readiness } from '../core/readiness.js';
import { SERVICE_VERSION } from '../core/version.js';
import { requestContext } from './middleware/request-context.js';
import { problemErrors } from './middleware/problem-errors.js';
import { compression } from './middleware/compression.js';
import { securityHeaders } from './middleware/security-headers.js';
import { mountHealth } from './routes/health.js';
import { mountMetrics } from './routes/metrics.js';
import { mountSkuRoutes } from './router.js';
import { mountDiscovery } from './discovery/mount.js';
import { mountDashboard } from './dashboard/mount.js';
import { inlineStyleHashes } from './dashboard/assets.js';
import { browserFormPages, withBrowserPaywall } from './paywall/browser-paywall.js';
import { PAYWALL_STYLE_HASH } from './paywall/paywall-style.js';
import { mountMcp } from './mcp/mount.js';
import { MCP_PATH } from './discovery/mcp-tools.js';
import { mountA2a } from './a2a/mount.js';
import { A2A_PATH } from './a2a/a2a-protocol.js';
import type { PaymentCore } from './payment/payment-core.js';
import type { PaymentInfo } from './discovery/context.js';
import { exampleInputsOf, liveExampleSource } from './discovery/live-examples.js';
import type { SkuRuntime } from './sku/sku.js';

/** The public surface of the api role: the SKU routes (catalogue + x402 gate) and the discovery documents. */
export interface GatewayDeps {
  runtime: Omit<SkuRuntime, 'log'>;
  /** The x402 payment gate (startPayments(...).gate). */
  gate: Middleware;
  /** Payment terms advertised by the documents (the gate's own). */
  payment: PaymentInfo;
  /** The transport-neutral payment core behind `gate`; with it, the MCP and A2A doors are served at MCP_PATH and A2A_PATH. */
  paymentCore?: PaymentCore;
  publicBaseUrl?: string;
}

export interface AppDeps {
  logger: Logger;
  health: HealthRegistry;
  /** The process's readiness (/readyz); absent: /readyz answers from a full health check. */
  readiness?: Readiness;
  /** Absent for the ops server of processes without the api role (/health and /metrics only). */
  gateway?: GatewayDeps;
  /** HTTP_TRUST_PROXY: take the client address, protocol and host from a reverse proxy's X-Forwarded-* headers. */
  trustProxy?: boolean;
  /** HTTP_PROXY_IP_HEADER and HTTP_PROXY_HOPS: where the trusted proxies put the client address (ctx.ip). */
  proxyIpHeader?: string;
  proxyHops?: number;
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({
    proxy: deps.trustProxy ?? false,
    proxyIpHeader: deps.proxyIpHeader ?? 'X-Forwarded-For',
    maxIpsCount: deps.proxyHops ?? 1,
  });
  app.silent = true; // errors are logged by problemErrors with the request id
  const router = new Router();
  let formPages: Middleware | undefined;
  mountHealth(router, {
    health: deps.health,
    role: 'api',
    version: SERVICE_VERSION,
    ...(deps.readiness ? { readiness: deps.readiness } : {}),
  });
  mountMetrics(router);
  if (deps.gateway) {
    const { runtime, gate, payment, publicBaseUrl, paymentCore } = deps.gateway;
    // One source of this install's example requests: the discovery documents and the challenges' Bazaar listings.
    const examples = liveExampleSource({ ...runtime, log: deps.logger });
    paymentCore?.useExampleInputs(exampleInputsOf(examples));
    const paywall = {
      catalogue: runtime.catalogue,
      payment,
      mcpPath: MCP_PATH,
      ...(publicBaseUrl ? { publicBaseUrl } : {}),
    };
    mountSkuRoutes(router, { runtime, gate: withBrowserPaywall(gate, paywall) });
    formPages = browserFormPages(paywall);
    mountDiscovery(router, {
      catalogue: runtime.catalogue,
      payment,
      examples,
      ...(publicBaseUrl ? { publicBaseUrl } : {}),
    });
    if (paymentCore)
      mountMcp(router, {
        path: MCP_PATH,
        runtime,
        core: paymentCore,
        payment,
        ...(publicBaseUrl ? { publicBaseUrl } : {}),
      });
    if (paymentCore)
      mountA2a(router, { path: A2A_PATH, runtime, core: paymentCore, ...(publicBaseUrl ? { publicBaseUrl } : {}) });
    mountDashboard(router, {
      store: runtime.store,
      health: deps.health,
      catalogue: runtime.catalogue,
      pairs: runtime.pairs,
      payment,
      config: runtime.config,
      mcpPath: MCP_PATH,
      ...(publicBaseUrl ? { publicBaseUrl } : {}),
    });
  }
  app.use(requestContext(deps.logger));
  app.use(securityHeaders({ styleHashes: [...inlineStyleHashes(), PAYWALL_STYLE_HASH] }));
  // Outside problemErrors, so large error bodies are compressed too; signed paid answers never are (compression.ts).
  app.use(compression());
  app.use(problemErrors());
  // Before the router: a browser's GET of a paid POST route's path is the paywall's form page; nothing else is touched.
  if (formPages) app.use(formPages);
  app.use(router.routes());
  // Not thrown: a method the route does not answer (TRACE, DELETE, ...) gets 405 and `Allow` (problemErrors renders it).
  app.use(router.allowedMethods());
  return app;
}
