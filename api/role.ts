/**
 * The api role: serves the public HTTP surface and reports the health of the
 * whole pipeline (canary age, a worker answering a ping job).
 */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { createApp } from './app.js';
import { listen, type HttpServer } from './http-server.js';
import { latestHeartbeat } from '../core/store/tables/pipeline-heartbeats.js';
import { SYSTEM_PING } from '../jobs/system-ping.js';
import { loadPairs } from '../core/markets/pairs.js';
import { buildCatalogue } from './catalogue/catalogue.js';
import type { Catalogue } from './catalogue/sku.js';
import type { JobSku } from '../jobs/job-sku.js';
import { paymentInfoOf } from './discovery/context.js';
import { startPayments, type Payments } from './payment/payments.js';

export interface RunningApi extends RunningRole {
  http: HttpServer;
  catalogue: Catalogue;
  payments: Payments;
}

/** `jobSkus`: the job SKUs the catalogue declares; default the catalogue's list (api/catalogue/sku-list.ts). */
export async function startApi(ctx: RoleContext, jobSkus?: readonly JobSku[]): Promise<RunningApi> {
  const store = need(ctx.store, 'store', 'api');
  const queue = need(ctx.queue, 'queue', 'api');
  const { config } = ctx;

  ctx.health.register('pipeline', async () => {
    const latest = await latestHeartbeat(store);
    if (!latest)
      return {
        status: 'degraded',
        reason: 'no canary stored in the last hour (is an ingest and an aggregate role running?)',
      };
    const age = Date.now() - latest.emitted_at_ms;
    const facts = {
      last_canary_at: new Date(latest.emitted_at_ms).toISOString(),
      event_to_store_ms: latest.latency_ms,
      age_ms: age,
    };
    if (age > config.HEARTBEAT_STALE_MS)
      return { status: 'degraded', reason: `newest canary is ${Math.round(age / 1000)} s old`, ...facts };
    return { status: 'ok', ...facts };
  });
  ctx.health.register('workers', async () => {
    const result = await queue
      .run<Record<string, never>, { worker: string }>(SYSTEM_PING, {}, { deadlineMs: 1500 })
      .catch((err: Error) => {
        throw new Error(`no worker answered ${SYSTEM_PING}: ${err.message}`);
      });
    return { status: 'ok', answered_by: result.worker };
  });

  // The catalogue first: a bad PRICE_OVERRIDES refuses start-up before anything listens or settles.
  const pairs = loadPairs(config.PAIRS_FILE);
  const catalogue = buildCatalogue({ config, pairs, ...(jobSkus ? { jobSkus } : {}) });
  const payments = await startPayments(config, { logger: ctx.logger, health: ctx.health });
  let http: HttpServer;
  try {
    const gateway = {
      runtime: { store, config, pairs, catalogue, queue, now: () => Date.now() },
      gate: payments.gate,
      paymentCore: payments.core,
      payment: paymentInfoOf({ ...payments.settlement, mode: payments.settlement.mode }),
      ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
    };
    const app = createApp({ logger: ctx.logger, health: ctx.health, gateway, trustProxy: config.HTTP_TRUST_PROXY });
    http = await listen(app, config);
  } catch (err) {
    await payments.stop();
    throw err;
  }
  await payments.listening(http.url);
  ctx.logger.info(
    { url: http.url, routes: catalogue.skus.length, available: catalogue.skus.filter((s) => s.available).length },
    'api listening',
  );
  return {
    name: 'api',
    http,
    catalogue,
    payments,
    stop: async () => {
      await http.close();
      await payments.stop();
    },
  };
}

/**
 * Processes without the api role still serve `/health` and `/metrics` on
 * HTTP_PORT, so an orchestrator can probe and scrape every role: their
 * server is api/ops-server.ts, light to load.
 */
export { startOpsServer } from './ops-server.js';
