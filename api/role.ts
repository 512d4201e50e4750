/**
 * The api role: serves the public HTTP surface and reports the health of the
 * whole pipeline (canary age, workers alive). `workers` is the job SKUs'
 * worker heartbeats when the queue has them (BullMQ: a worker able to take a
 * job of that name, core/queue/bullmq-heartbeat.ts), else a worker answering
 * a ping job; with a Readiness (core/readiness.ts) every SKU route is refused
 * with 503 while its family is not ready (api/route-readiness.ts).
 */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { createApp } from './app.js';
import { listen, type HttpServer } from './http-server.js';
import { latestHeartbeat } from '../core/store/tables/pipeline-heartbeats.js';
import { SYSTEM_PING } from '../jobs/system-ping.js';
import { loadPairs } from '../core/markets/pairs.js';
import { buildCatalogue } from './catalogue/catalogue.js';
import type { Catalogue } from './sku/sku.js';
import type { JobSku } from '../jobs/job-sku.js';
import { paymentInfoOf } from './discovery/context.js';
import { startPayments, type Payments } from './payment/payments.js';
import { gateOverCore } from './paid-call/payment-gate.js';
import type { Readiness } from '../core/readiness.js';
import type { JobQueue } from '../core/queue/queue.js';
import type { HealthProbe } from '../core/health.js';
import { skuJobName } from '../jobs/sku-processor.js';
import { JOB_SKUS } from './catalogue/sku-list.js';
import { routeReadiness, WORKERS_COMPONENT } from './route-readiness.js';

export interface RunningApi extends RunningRole {
  http: HttpServer;
  catalogue: Catalogue;
  payments: Payments;
}

/**
 * `jobSkus`: the job SKUs the catalogue declares; default the catalogue's list (api/catalogue/sku-list.ts).
 * `readiness`: the process's (roles/process.ts); without it every available route is served whatever its dependencies.
 */
export async function startApi(
  ctx: RoleContext,
  jobSkus?: readonly JobSku[],
  readiness?: Readiness,
): Promise<RunningApi> {
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

  // The catalogue first: a bad PRICE_OVERRIDES refuses start-up before anything listens or settles.
  const pairs = loadPairs(config.PAIRS_FILE);
  const catalogue = buildCatalogue({ config, pairs, ...(jobSkus ? { jobSkus } : {}) });
  const jobSkuIds = (jobSkus ?? JOB_SKUS).map((s) => s.id);
  const servedJobs = jobSkuIds.filter((id) => catalogue.byId(id)?.available).map(skuJobName);
  ctx.health.register(WORKERS_COMPONENT, workersProbe(queue, servedJobs));
  const payments = await startPayments(config, { logger: ctx.logger, health: ctx.health });
  // Draining: open streams end with `event: end` (reason server_stopping) instead of holding the close for their period.
  const stopping = new AbortController();
  let http: HttpServer;
  try {
    const gateway = {
      runtime: {
        store,
        config,
        pairs,
        catalogue,
        queue,
        now: () => Date.now(),
        stopping: stopping.signal,
        ...(readiness ? { readiness: routeReadiness(readiness, ctx.health, jobSkuIds) } : {}),
      },
      // Challenges' `resource.url`: PUBLIC_BASE_URL, or each request's own origin.
      gate: gateOverCore(payments.core, config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
      paymentCore: payments.core,
      payment: paymentInfoOf({
        ...payments.settlement,
        mode: payments.settlement.mode,
        ...(payments.core.evidence ? { signing: payments.core.evidence.key } : {}),
      }),
      ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
    };
    const app = createApp({
      logger: ctx.logger,
      health: ctx.health,
      gateway,
      trustProxy: config.HTTP_TRUST_PROXY,
      proxyIpHeader: config.HTTP_PROXY_IP_HEADER,
      proxyHops: config.HTTP_PROXY_HOPS,
      ...(readiness ? { readiness } : {}),
    });
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
      stopping.abort();
      await http.close();
      await payments.stop();
    },
  };
}

/**
 * Workers able to take a job of each served name: their heartbeats when the queue has them (one MGET, cheap
 * enough for readiness every second): `down` when none is fresh, `degraded` with the `missing` names when some
 * are not. Else (in-process queue) a worker answering a ping job.
 */
function workersProbe(queue: JobQueue, served: readonly string[]): HealthProbe {
  const heartbeats = queue.workerHeartbeats?.bind(queue);
  if (!heartbeats)
    return async () => {
      const result = await queue
        .run<Record<string, never>, { worker: string }>(SYSTEM_PING, {}, { deadlineMs: 1500 })
        .catch((err: Error) => {
          throw new Error(`no worker answered ${SYSTEM_PING}: ${err.message}`);
        });
      return { status: 'ok', answered_by: result.worker };
    };
  return async () => {
    const fresh = await heartbeats(served);
    const missing = served.filter((name) => !fresh.has(name));
    const facts = { serving: served.length - missing.length, missing };
    if (served.length > 0 && missing.length === served.length)
      return { status: 'down', reason: 'no worker heartbeat: no worker able to take a job is connected', ...facts };
    if (missing.length > 0)
      return { status: 'degraded', reason: `no worker heartbeat for ${missing.join(', ')}`, ...facts };
    return { status: 'ok', ...facts };
  };
}

/**
 * Processes without the api role still serve `/livez`, `/readyz`, `/health`
 * and `/metrics` on HTTP_PORT, so an orchestrator can probe and scrape every role: their
 * server is api/ops-server.ts, light to load.
 */
export { startOpsServer } from './ops-server.js';
