/**
 * The people's door, all free:
 *
 *   GET /                          the landing page (landing-page.ts)
 *   GET /dashboard/assets/:name    its script, stylesheet and chart library (assets.ts; cached by hash)
 *   GET /dashboard/api/overview    pipeline health (component -> status), the pairs, the window, and the
 *                                  track record (paid calls, distinct payers, settled USDC since start)
 *   GET /dashboard/api/market?pair=ETH-USD
 *                                  the free preview of one pair: hourly median spread, the tape an hour
 *                                  late, hourly median latency (dashboard-data.ts; docs/routes.md)
 *   GET /dashboard/docs/metrics.md the metric definitions the charts link to (docs/metrics.md, plain text)
 *
 * The data endpoints are rate limited per client address (koa-ratelimit,
 * DASHBOARD_RATE_LIMIT_PER_MINUTE; 429 `rate_limited` with Retry-After) and
 * answer from snapshots shared by every viewer for half the refresh period,
 * so a crowd of viewers costs one store read per pair and period.
 *
 * Every answer here has a validator (the page and the data: @koa/etag's hash of
 * the body; the assets: their content hash) and koa-conditional-get turns a
 * matching If-None-Match into a 304: a reload of `/` costs headers only. The
 * data polls and the assets are logged at debug (request-context.ts), so the
 * access log at info is the paid calls and everything else.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import type { Router } from '@koa/router';
import conditional from 'koa-conditional-get';
import etag from '@koa/etag';
import ratelimit from 'koa-ratelimit';
import type { Config } from '../../core/config.js';
import type { HealthRegistry, HealthReport } from '../../core/health.js';
import type { Store } from '../../core/store/store.js';
import { normalisePair, type PairsCatalogue } from '../../core/markets/pairs.js';
import { AppError } from '../../core/errors.js';
import { problem } from '../middleware/problem-errors.js';
import type { Catalogue } from '../sku/sku.js';
import type { PaymentInfo } from '../discovery/context.js';
import { settlementTotals } from '../payment/payment-metrics.js';
import { serveAsset, ASSET_PREFIX } from './assets.js';
import { dashboardWindow, marketView, type MarketView } from './dashboard-data.js';
import { landingPage, METRICS_DOC } from './landing-page.js';
import { SnapshotCache } from './snapshot-cache.js';

export const DASHBOARD_API = '/dashboard/api';
const METRICS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'metrics.md');

export interface DashboardOptions {
  store: Store;
  health: HealthRegistry;
  catalogue: Catalogue;
  pairs: PairsCatalogue;
  payment: PaymentInfo;
  config: Pick<
    Config,
    | 'DASHBOARD_DELAY_SECONDS'
    | 'DASHBOARD_WINDOW_HOURS'
    | 'DASHBOARD_REFRESH_SECONDS'
    | 'DASHBOARD_RATE_LIMIT_PER_MINUTE'
    | 'MARKET_SOURCE'
  >;
  mcpPath: string;
  publicBaseUrl?: string;
  now?: () => number;
}

export interface Overview {
  generated_at: string;
  status: HealthReport['status'];
  components: Record<string, { status: string; reason?: string }>;
  pairs: string[];
  market_source: string;
  window_hours: number;
  delay_seconds: number;
  refresh_seconds: number;
  /** This process's own figures since it started (api/payment/payment-metrics.ts): a restart resets them. */
  track_record: {
    since: string;
    scope: string;
    paid_calls: number;
    distinct_payers: number;
    distinct_payers_at_least: boolean;
    settled_usdc: number;
  };
}

const startedAt = new Date().toISOString();

async function trackRecord(): Promise<Overview['track_record']> {
  const totals = await settlementTotals();
  return {
    since: startedAt,
    scope: 'this instance, since it started',
    paid_calls: totals.paidCalls,
    distinct_payers: totals.distinctPayers,
    distinct_payers_at_least: totals.distinctPayersCapped,
    // Atomic USDC (6 decimals) to USDC, to the cent.
    settled_usdc: Math.round(totals.settledAtomic / 10_000) / 100,
  };
}

export function mountDashboard(router: Router, options: DashboardOptions): void {
  const { config } = options;
  const now = options.now ?? Date.now;
  const ttlMs = Math.max(1000, (config.DASHBOARD_REFRESH_SECONDS * 1000) / 2);
  const markets = new SnapshotCache<MarketView>(ttlMs, now);
  const overviews = new SnapshotCache<Overview>(ttlMs, now);
  const pairs = options.pairs.pairs.map((p) => p.pair);
  const baseUrlOf = (ctx: Context) => (options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');

  const revalidated = conditional();
  const hashed = etag();
  // Polls and assets: at debug in the access log.
  const quiet: Middleware = async (ctx, next) => {
    ctx.state.accessLogLevel = 'debug';
    await next();
  };

  router.get('/', revalidated, hashed, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = landingPage(
      { catalogue: options.catalogue, payment: options.payment, baseUrl: baseUrlOf(ctx) },
      {
        pairs,
        marketSource: config.MARKET_SOURCE,
        refreshSeconds: config.DASHBOARD_REFRESH_SECONDS,
        delaySeconds: config.DASHBOARD_DELAY_SECONDS,
        windowHours: config.DASHBOARD_WINDOW_HOURS,
        mcpPath: options.mcpPath,
      },
    );
  });

  router.get(`${ASSET_PREFIX}/:name`, quiet, revalidated, async (ctx, next) => {
    if (!(await serveAsset(ctx, ctx.params.name ?? ''))) return next();
  });

  let metricsDoc: Promise<string> | undefined;
  router.get(METRICS_DOC, quiet, revalidated, hashed, async (ctx) => {
    metricsDoc ??= readFile(METRICS_FILE, 'utf8');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = await metricsDoc.catch((err: unknown) => {
      metricsDoc = undefined;
      throw err;
    });
  });

  const countRequests = ratelimit({
    driver: 'memory',
    db: new Map(),
    duration: 60_000,
    max: config.DASHBOARD_RATE_LIMIT_PER_MINUTE,
    id: (ctx) => ctx.ip,
  });
  // koa-ratelimit answers a bare text 429; ours is the one problem shape with a stable code.
  const limiter = async (ctx: Context, next: () => Promise<unknown>) => {
    await countRequests(ctx, next);
    if (ctx.status !== 429 || !ctx.state.rateLimit) return;
    const after = Number((ctx.state.rateLimit as { after?: number }).after ?? 60);
    ctx.type = 'application/problem+json';
    ctx.body = {
      ...problem(
        429,
        'rate_limited',
        `the dashboard data endpoints answer ${config.DASHBOARD_RATE_LIMIT_PER_MINUTE} requests per minute per client; retry in ${after} s`,
        { retry_after_seconds: after },
      ),
      request_id: ctx.state.requestId,
    };
  };
  const json = (ctx: Context, body: unknown) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', `public, max-age=${Math.floor(ttlMs / 1000)}`);
    ctx.body = body;
  };

  router.get(`${DASHBOARD_API}/overview`, quiet, limiter, revalidated, hashed, async (ctx) => {
    json(
      ctx,
      await overviews.get('overview', async () => {
        const report = await options.health.check();
        return {
          generated_at: new Date(now()).toISOString(),
          status: report.status,
          components: Object.fromEntries(
            Object.entries(report.components).map(([name, c]) => [
              name,
              { status: c.status, ...(c.reason ? { reason: c.reason } : {}) },
            ]),
          ),
          pairs,
          market_source: config.MARKET_SOURCE,
          window_hours: config.DASHBOARD_WINDOW_HOURS,
          delay_seconds: config.DASHBOARD_DELAY_SECONDS,
          refresh_seconds: config.DASHBOARD_REFRESH_SECONDS,
          track_record: await trackRecord(),
        };
      }),
    );
  });

  router.get(`${DASHBOARD_API}/market`, quiet, limiter, revalidated, hashed, async (ctx) => {
    const raw = typeof ctx.query.pair === 'string' ? ctx.query.pair : undefined;
    const pair = raw === undefined ? pairs[0] : normalisePair(options.pairs, raw);
    if (!pair)
      throw new AppError('invalid_parameter', `unknown pair ${raw}; supported: ${pairs.join(', ')}`, 400, {
        field: 'pair',
      });
    json(
      ctx,
      await markets.get(pair, () =>
        marketView(
          options.store,
          pair,
          dashboardWindow(now(), config.DASHBOARD_DELAY_SECONDS, config.DASHBOARD_WINDOW_HOURS),
          config.DASHBOARD_DELAY_SECONDS,
        ),
      ),
    );
  });
}
