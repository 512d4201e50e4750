/**
 * `npm run bench:api`: the paid telemetry routes of the real api role on
 * ClickHouse holding 30 days x 13 pairs of simulated market data, with x402
 * verification included and on-chain settlement excluded; the payment gate's
 * own cost; and the settler's throughput on the dev chain. Needs the engines
 * (`npm run engines:up`).
 *
 *   npm run bench:api                 # reuses the seeded database when its counts match
 *   npm run bench:api -- --reseed     # drops and reseeds it
 *   npm run bench:api -- --seed-only  # only makes sure the data set is there
 *   BENCH_E2E=1 npm run bench:api     # paid calls end to end, settlement included, on interval-mined and
 *                                     # automined dev chains, beside the official x402 stack (paid-end-to-end.ts;
 *                                     # also npm run bench:paid)
 *   npm run bench:api -- --pipeline-parts  # only the CPU of the paid-call pipeline's added steps
 *                                          # (payment identifiers, sign-in-with-x, offers, receipts,
 *                                          # answer signatures: pipeline-parts.ts), no ClickHouse data
 *
 * 1. Seed (database BENCH_DB, default `bench_api`): the seeded simulator at a
 *    coarse tick (BENCH_TICK_MS, default 20 s) over BENCH_DAYS (30) days, its
 *    quotes driven in-process through the real dislocation detector and the
 *    real paper-execution function, written with the tables' insert functions
 *    one simulated day per batch (test/helpers/market-history.ts). A row
 *    `bench_seed` records the parameters and the counts; a later run reuses
 *    the data when the counts still match.
 *    BENCH_DROP_DB=1 drops the database at the end.
 * 2. The app in-process (ROLE=api as deployed, STORE=clickhouse,
 *    SETTLEMENT=devchain) on a loopback port, its access log in a file, and a
 *    live feed writing the newest quotes, books and latency samples. Each paid
 *    request carries its own PAYMENT-SIGNATURE (BENCH_PAYERS payers, signed
 *    natively in the load generator: native-signer.ts), verified for real by
 *    the in-process facilitator; settlement is excluded by a no-op `settle`.
 * 3. Open loop (the issue's measure; a closed loop at N connections measures
 *    the load generator's patience, not the service): each paid telemetry
 *    route at each offered rate of BENCH_RATES (100,250,500,1000 /s) for
 *    BENCH_OPEN_S (60) s after BENCH_WARM_S (5) s of warm-up, requests sent on
 *    schedule whatever the answers, latency from the scheduled send time;
 *    random slices of the seeded window (BENCH_VARIANTS per route). A rate the
 *    server cannot keep up with ends that route's ladder. Reported: p50/p99
 *    against a quarter of the spec's latency target, the highest rate meeting
 *    it, closed-slice cache hits, and how late the generator sent.
 * 4. The gate at saturation: the same route (BENCH_GATE_ROUTE, spread-candles)
 *    and requests through the app and through a second app from the same
 *    runtime with the gate replaced by a pass-through, closed loop at
 *    BENCH_GATE_CONNECTIONS (50) for BENCH_SATURATION_S (20) s, over 2,000
 *    closed slices both apps answered once beforehand (each has its own
 *    closed-slice cache, so the handler is the same memory lookup on both
 *    sides): paid/unpaid throughput, and the gate's CPU per paid request (app
 *    CPU per request, gated minus ungated). Then the 402 challenge alone:
 *    BENCH_CHALLENGE_N (500) sequential unpaid requests of that route, each
 *    answered 402 with its PAYMENT-REQUIRED header, next to the free coverage
 *    route of the same app (p50/p99; moved here from test/integration/payment.test.ts).
 * 5. Settlement throughput (settlement-throughput.ts): BENCH_SETTLE_N
 *    authorizations settled on a fresh dev chain, with and without Multicall3
 *    batching, on automine and on 2 s blocks only (as on Base).
 * 6. CPU per process from /proc, and the load average before and after each
 *    phase (other work on the shared cores shows there).
 *
 * Any non-2xx response makes the run INVALID (exit code 1). BENCH_CPU_PROFILE=<file>
 * writes V8 profiles of the app process: <file> over the open loop, and
 * <file>.ungated.cpuprofile / <file>.gated.cpuprofile over the two gate rows
 * (diff their per-request self times to see what the gate costs).
 * BENCH_HEAP_PROFILE=<file> writes a sampling heap profile of the app process
 * over the open loop holding only what was promoted to the old generation and
 * later collected there (what drives the major-GC pauses).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Middleware } from 'koa';
import type { PaymentRequired } from '@x402/core/types';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import type { BookEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { createStore } from '../../core/ports.js';
import { ident, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { TOPICS } from '../../core/topics.js';
import { insertBookSnapshots } from '../../core/store/tables/book-snapshots.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { BASE_SLICE_MS, num } from '../../core/store/tables/query-helpers.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { createApp } from '../../api/app.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import type { PricedSku } from '../../api/sku/sku.js';
import { paymentInfoOf } from '../../api/discovery/context.js';
import { testConfig } from '../helpers/config.js';
import { seededRandom as prng } from '../helpers/seeded-random.js';
import { startPaidApi as startDevChainApi } from '../helpers/paid-api.js';
import { testLogger } from '../helpers/config.js';
import { paidRouteOf } from '../../api/paid-call/paid-route.js';
import type { PaidCall } from '../../api/payment/payment-core.js';
import { measureDoorRows, measurePipelineParts, printDoorRows, printPipelineParts } from './pipeline-parts.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { insertInBatches, seedMarketHistory } from '../helpers/market-history.js';
import { benchLogger, cleanupOnSignal, envNum, PAID_API_ROLE, startPaidApi } from './bench-app.js';
import { cpuMeter, descendantsMatching, pidsMatching, type CpuSplit as Split } from './cpu.js';
import { challengeOf, LoadGenerator, type OpenRunResult, type RequestVariant, type RunResult } from './x402-load.js';
import { settlementThroughput, type SettlementRun } from './settlement-throughput.js';
import { paidEndToEnd } from './paid-end-to-end.js';
import { startProfile } from './inspector-profile.js';
import { registry } from '../../core/metrics.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
// v3: the time-keyed simulator of issue 27 (seeded per start, heavy tails): an older seed is not reused.
const SEED_VERSION = 'api-bench-v3';
const HISTORICAL_SEED = 42;
const TARGET_RATIO = 0.25;

const ms1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
/** Nearest rank of sorted figures (NaN when there are none). */
const rank = (sorted: readonly number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : NaN;
const seconds = (t0: number) => (performance.now() - t0) / 1000;
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

// ==================================================================== seeding

interface SeedPlan {
  seed: number;
  days: number;
  tickMs: number;
  startMs: number;
  endMs: number;
}

const TABLES = [
  'quotes',
  'book_snapshots',
  'latency_samples',
  'spread_samples',
  'dislocations',
  'paper_executions',
] as const;
type TableName = (typeof TABLES)[number];
type Counts = Record<TableName, number>;

interface SeedReport {
  plan: SeedPlan;
  counts: Counts;
  reused: boolean;
  seconds: number;
  /** Seconds spent generating + detecting vs waiting for inserts (fresh seeds only). */
  generateS?: number;
  insertWaitS?: number;
}

/**
 * Rows of the seeded window. Raw tables are also written by the live feed
 * (after the window), so they are counted below its end; the derived tables
 * hold only seeded rows.
 */
async function countRows(store: Store, plan: Pick<SeedPlan, 'endMs'>): Promise<Counts> {
  const end = new Date(plan.endMs);
  const count = async (statement: ReturnType<typeof sql>) => num((await store.query(statement))[0]?.n ?? 0);
  const [quotes, books, latency, samples, dislocations, executions] = await Promise.all([
    count(sql`SELECT count() AS n FROM quotes WHERE ts < ${end}`),
    count(sql`SELECT count() AS n FROM book_snapshots WHERE ts < ${end}`),
    count(sql`SELECT count() AS n FROM latency_samples WHERE ts < ${end}`),
    count(sql`SELECT count() AS n FROM spread_samples`),
    count(sql`SELECT count() AS n FROM dislocations`),
    count(sql`SELECT count() AS n FROM paper_executions`),
  ]);
  return {
    quotes,
    book_snapshots: books,
    latency_samples: latency,
    spread_samples: samples,
    dislocations,
    paper_executions: executions,
  };
}

const META_DDL = sql`
  CREATE TABLE IF NOT EXISTS bench_seed (
    version String, seed UInt32, days UInt32, tick_ms UInt32, start_ms UInt64, end_ms UInt64,
    quotes UInt64, book_snapshots UInt64, latency_samples UInt64, spread_samples UInt64, dislocations UInt64, paper_executions UInt64,
    seed_seconds Float64, seeded_at DateTime
  ) ENGINE = TinyLog`;

async function readSeedMeta(store: Store): Promise<{ plan: SeedPlan; counts: Counts; seconds: number } | undefined> {
  await store.command(META_DDL);
  const [row] = await store.query(sql`SELECT * FROM bench_seed ORDER BY seeded_at DESC LIMIT 1`);
  if (!row) return undefined;
  const counts = Object.fromEntries(TABLES.map((t) => [t, num(row[t])])) as Counts;
  return {
    plan: {
      seed: num(row.seed),
      days: num(row.days),
      tickMs: num(row.tick_ms),
      startMs: num(row.start_ms),
      endMs: num(row.end_ms),
    },
    counts,
    seconds: num(row.seed_seconds),
  };
}

/** Reuses the seeded database when its parameters and counts match; otherwise drops it and seeds again. */
async function ensureSeeded(
  config: Config,
  logger: Logger,
  pairs: PairsCatalogue,
  wanted: Omit<SeedPlan, 'startMs' | 'endMs'>,
  reseed: boolean,
): Promise<SeedReport> {
  let store = await createStore(config, logger);
  try {
    await store.migrate();
    if (!reseed) {
      const meta = await readSeedMeta(store);
      if (
        meta &&
        meta.plan.seed === wanted.seed &&
        meta.plan.days === wanted.days &&
        meta.plan.tickMs === wanted.tickMs
      ) {
        const counts = await countRows(store, meta.plan);
        const same = TABLES.every((t) => counts[t] === meta.counts[t] && counts[t] > 0);
        if (same) return { plan: meta.plan, counts, reused: true, seconds: meta.seconds };
        console.log(
          `bench: seeded counts changed (${JSON.stringify(meta.counts)} -> ${JSON.stringify(counts)}); reseeding`,
        );
      } else if (meta) {
        console.log('bench: seeded with other parameters; reseeding');
      }
    }
    await store.command(sql`DROP DATABASE IF EXISTS ${ident(config.CLICKHOUSE_DATABASE)}`);
    await store.close();
    store = await createStore(config, logger);
    await store.migrate();
    await store.command(META_DDL);
    // The window ends an hour before now: the live feed writes the last hour (and on), never inside the window.
    const endMs = Math.floor((Date.now() - HOUR_MS) / BASE_SLICE_MS) * BASE_SLICE_MS;
    const plan: SeedPlan = { ...wanted, startMs: endMs - wanted.days * DAY_MS, endMs };
    const t0 = performance.now();
    const timing = await seedMarketHistory(store, pairs, config, plan, (day, text) => {
      if (day % 5 === 0 || day === plan.days) process.stdout.write(`  seeded day ${day}/${plan.days}: ${text}\n`);
    });
    const secondsTaken = seconds(t0);
    const counts = await countRows(store, plan);
    await store.command(sql`
      INSERT INTO bench_seed VALUES (${SEED_VERSION}, ${plan.seed}, ${plan.days}, ${plan.tickMs}, ${plan.startMs}, ${plan.endMs},
        ${counts.quotes}, ${counts.book_snapshots}, ${counts.latency_samples}, ${counts.spread_samples}, ${counts.dislocations}, ${counts.paper_executions},
        ${secondsTaken}, ${new Date()})`);
    return { plan, counts, reused: false, seconds: secondsTaken, ...timing };
  } finally {
    await store.close();
  }
}

// ==================================================================== live feed

/**
 * What the aggregate role keeps writing in production: the newest quotes,
 * level-2 books and latency samples (1 s CEX tick, a book every 5 s, a block
 * every 2 s). An hour of history first (the impact simulation reads 15 minutes
 * of quotes for its volatility and an hour of REST round trips), then every
 * second until stopped.
 */
class LiveFeed {
  private readonly sim: MarketSimulator;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  rows = 0;
  failures = 0;

  constructor(
    private readonly store: Store,
    pairs: PairsCatalogue,
    config: Config,
    private readonly log: Logger,
    seededEndMs: number,
  ) {
    const now = Math.floor(Date.now() / 1000) * 1000;
    this.sim = new MarketSimulator(pairs, {
      seed: Math.floor(now / 1000) % 2_000_000_000,
      startMs: Math.max(now - HOUR_MS, seededEndMs),
      cexVenue: config.CEX_EXCHANGE,
      ladderUsd: config.DEX_LADDER_USD,
      cexTickMs: 1000,
      blockMs: 2000,
      probeMs: config.CEX_PROBE_INTERVAL_MS,
      bookDepth: config.CEX_BOOK_DEPTH,
      bookEveryTicks: 5,
    });
  }

  private async flush(): Promise<void> {
    const quotes: QuoteEvent[] = [];
    const books: BookEvent[] = [];
    const lats: LatencyEvent[] = [];
    for (const e of this.sim.generate(Date.now())) {
      if (e.topic === TOPICS.quotes) quotes.push(e.event);
      else if (e.topic === TOPICS.books) books.push(e.event);
      else lats.push(e.event);
    }
    await Promise.all([
      insertInBatches(quotes, (b) => insertQuotes(this.store, b)),
      insertInBatches(books, (b) => insertBookSnapshots(this.store, b)),
      insertInBatches(lats, (b) => insertLatencySamples(this.store, b)),
    ]);
    this.rows += quotes.length + books.length + lats.length;
  }

  async backfill(): Promise<void> {
    await this.flush();
  }

  start(intervalMs = 1000): void {
    const tick = () => {
      this.running = this.flush().catch((err: unknown) => {
        this.failures += 1;
        this.log.warn({ err: String(err) }, 'bench live feed: insert failed');
      });
      void this.running.then(() => {
        if (this.timer) this.timer = setTimeout(tick, intervalMs);
      });
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  async stop(): Promise<void> {
    const t = this.timer;
    this.timer = undefined;
    if (t) clearTimeout(t);
    await this.running;
  }
}

// ==================================================================== request mixes

interface RouteBench {
  sku: PricedSku;
  /** Concrete request of the route used for its 402 challenge. */
  probe: RequestVariant;
  variants: RequestVariant[];
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Random requests of each telemetry route, inside the seeded window. */
function requestMixes(
  skus: readonly PricedSku[],
  pairs: PairsCatalogue,
  config: Config,
  plan: SeedPlan,
  count: number,
): RouteBench[] {
  const rand = prng(plan.seed * 7919 + 17);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const pairNames = pairs.pairs.map((p) => p.pair);
  const slices = Math.floor((plan.endMs - plan.startMs) / BASE_SLICE_MS);
  // A random slice, away from the first and last day (where 1d candles would be partial).
  const slice = () => {
    const i = 96 + Math.floor(rand() * (slices - 2 * 96));
    const d = new Date(plan.startMs + i * BASE_SLICE_MS);
    return {
      date: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`,
      time: `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`,
    };
  };
  const q = (params: Record<string, string | undefined>) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, v);
    const text = s.toString();
    return text ? `?${text}` : '';
  };
  const weighted = <T>(choices: [T, number][]): T => {
    let x = rand();
    for (const [v, w] of choices) if ((x -= w) < 0) return v;
    return choices[choices.length - 1]![0];
  };
  const builders: Record<string, () => RequestVariant> = {
    coverage: () => ({
      method: 'GET',
      path: `/api/v1/crypto/coverage${q({ pair: rand() < 0.5 ? pick(pairNames) : undefined })}`,
    }),
    'spread-candles': () => {
      const interval = weighted<string>([
        ['15m', 0.7],
        ['1h', 0.15],
        ['4h', 0.1],
        ['1d', 0.05],
      ]);
      return {
        method: 'GET',
        path: `/api/v1/crypto/spread-candles${q({ pair: pick(pairNames), ...slice(), interval: interval === '15m' ? undefined : interval })}`,
      };
    },
    dislocations: () => ({
      method: 'GET',
      path: `/api/v1/crypto/dislocations${q({ pair: pick(pairNames), ...slice() })}`,
    }),
    'execution-latency': () => ({
      method: 'GET',
      path: `/api/v1/crypto/execution-latency${q({
        ...slice(),
        venue: weighted<string | undefined>([
          [undefined, 0.5],
          [config.CEX_EXCHANGE, 0.25],
          ['base_dex', 0.25],
        ]),
      })}`,
    }),
    'shadow-capacity': () => ({
      method: 'GET',
      path: `/api/v1/crypto/shadow-capacity${q({ ...slice(), pair: rand() < 0.5 ? pick(pairNames) : undefined })}`,
    }),
    'impact-simulation': () => {
      const side = rand() < 0.5 ? 'buy' : 'sell';
      const body =
        rand() < 0.8
          ? { pair: pick(pairNames), side, size_usd: pick([1000, 5000, 10_000, 25_000, 50_000, 100_000, 250_000]) }
          : { pair: pick(pairNames).replace('/', '-'), side, size_base: Math.round(rand() * 1000) / 100 + 0.01 };
      return { method: 'POST', path: '/api/v1/crypto/impact-simulation', body: JSON.stringify(body) };
    },
  };
  const out: RouteBench[] = [];
  for (const sku of skus) {
    const build = builders[sku.id];
    if (!build) continue;
    const variants = Array.from({ length: count }, build);
    out.push({ sku, probe: variants[0]!, variants });
  }
  return out;
}

// ==================================================================== CPU accounting (Linux /proc)

/** CPU ms over a run of the app (this process), ClickHouse, the dev chain node and the load generator; `other`: the rest of the machine. */
type CpuSplit = Split<'app' | 'clickhouse' | 'chain' | 'loader'>;

// ==================================================================== measurement

interface OpenRow {
  route: string;
  method: string;
  rate: number;
  targetMs: number;
  result?: OpenRunResult;
  skipped?: string;
  cacheHits: number;
  /** Size of the closed-slice cache after the row, MB of JSON. */
  cacheMb?: number;
  cpu?: CpuSplit;
}

/** The closed-slice cache's hit counter of a route, from the app's metrics registry. */
async function cacheHitsOf(route: string): Promise<number> {
  const metric = await registry.getSingleMetric('telemetry_closed_slice_cache_total')?.get();
  return (
    metric?.values
      .filter((v) => v.labels.route === route && v.labels.result === 'hit')
      .reduce((n, v) => n + v.value, 0) ?? 0
  );
}

/** What the closed-slice cache holds now (JSON characters), from the app's metrics registry. */
async function cacheBytes(): Promise<number> {
  const metric = await registry.getSingleMetric('telemetry_closed_slice_cache_bytes')?.get();
  return metric?.values[0]?.value ?? 0;
}

const uptimeText = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} on ${cpus().length} cores`;

async function main(reseed: boolean, seedOnly: boolean): Promise<void> {
  const tStart = performance.now();
  const database = process.env.BENCH_DB ?? 'bench_api';
  const rates = (process.env.BENCH_RATES ?? '100,250,500,1000').split(',').map((r) => Number(r.trim()));
  const openS = envNum('BENCH_OPEN_S', 60);
  const warmS = envNum('BENCH_WARM_S', 5);
  const saturationS = envNum('BENCH_SATURATION_S', 20);
  const variantCount = envNum('BENCH_VARIANTS', 100_000);
  const onlyRoutes = process.env.BENCH_ROUTES?.split(',').map((r) => r.trim());
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-api-'));
  const logFile = process.env.BENCH_LOG_FILE ?? join(dataDir, 'app.log');
  // The app logs as in production (one access line per request), into a file.
  const logger = benchLogger(logFile);
  const config = testConfig({
    ...PAID_API_ROLE,
    STORE: 'clickhouse',
    CLICKHOUSE_DATABASE: database,
    BUS: 'memory',
    QUEUE: 'inprocess',
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    MARKET_SOURCE: 'simulated',
    STARTUP_TIMEOUT_MS: '30000',
  });
  const pairs = loadPairs(config.PAIRS_FILE);

  // ---- 1. data
  console.log(
    `bench:api: ClickHouse ${config.CLICKHOUSE_URL} database ${database}; app log ${logFile}; at start: ${uptimeText()}`,
  );
  const seeded = await ensureSeeded(
    config,
    logger,
    pairs,
    { seed: HISTORICAL_SEED, days: envNum('BENCH_DAYS', 30), tickMs: envNum('BENCH_TICK_MS', 20_000) },
    reseed,
  );
  const { plan, counts } = seeded;
  console.log(
    `\nData set: ${plan.days} days x ${pairs.pairs.length} pairs, ${new Date(plan.startMs).toISOString()} .. ${new Date(plan.endMs).toISOString()}, simulator tick ${plan.tickMs / 1000} s ` +
      `(${seeded.reused ? `reused; seeded earlier in ${seeded.seconds.toFixed(0)} s` : `seeded now in ${seeded.seconds.toFixed(1)} s: generate+detect ${seeded.generateS?.toFixed(1)} s, waiting for inserts ${seeded.insertWaitS?.toFixed(1)} s`})`,
  );
  console.log('| table | rows |\n|---|---|');
  for (const t of TABLES) console.log(`| ${t} | ${fmtInt(counts[t])} |`);
  if (seedOnly) {
    await rm(dataDir, { recursive: true, force: true });
    return;
  }

  // ---- 2. the app (x402 verified on the dev chain, settlement excluded)
  const { proc, api, url, settlement, payment } = await startPaidApi(config, logger);
  let feed: LiveFeed | undefined;
  let ungated: HttpServer | undefined;
  let loader: LoadGenerator | undefined;
  const cleanup = cleanupOnSignal(async () => {
    await loader?.exit();
    await feed?.stop();
    await ungated?.close();
    await proc.shutdown('bench done'); // stops the dev chain too
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    if (process.env.BENCH_DROP_DB === '1') {
      const store = await createStore(config, logger);
      await store.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).finally(() => store.close());
      console.log(`dropped database ${database}`);
    }
  });

  try {
    const store = proc.ctx.store!;
    feed = new LiveFeed(store, pairs, config, logger, plan.endMs);
    await feed.backfill();
    feed.start();

    // The same routes, same runtime, with the gate replaced by a pass-through (the payment gate's cost).
    const passThrough: Middleware = (_ctx, next) => next();
    ungated = await listen(
      createApp({
        logger,
        health: proc.ctx.health,
        gateway: {
          runtime: { store, config: proc.ctx.config, pairs, catalogue: api.catalogue, now: () => Date.now() },
          gate: passThrough,
          payment: paymentInfoOf({ ...settlement, mode: settlement.mode }),
        },
      }),
      { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 },
    );
    loader = LoadGenerator.start();
    const load = loader;

    // Several payers, as real traffic has: each costs the verifier one balance read per block.
    const payerKeys = Array.from({ length: envNum('BENCH_PAYERS', 16) }, () => generatePrivateKey());
    for (const key of payerKeys) await settlement.devChain!.mint(privateKeyToAccount(key).address, 10n ** 15n);
    await load.setPayers(payerKeys);
    const telemetry = api.catalogue.skus.filter(
      (s) =>
        s.path.startsWith('/api/v1/crypto/') && s.available && !s.free && (!onlyRoutes || onlyRoutes.includes(s.id)),
    );
    const routes = requestMixes(telemetry, pairs, config, plan, variantCount);
    const challenges = new Map<string, PaymentRequired>();
    for (const r of routes) {
      challenges.set(r.sku.id, await challengeOf(url, r.probe));
      // Every variant must pass validation and pre-flight (a 402 challenge, never 400/404/503).
      for (const v of r.variants.slice(0, 20)) await challengeOf(url, v);
    }
    const meter = cpuMeter({
      app: [process.pid],
      clickhouse: pidsMatching(/clickhouse(-server| server)/),
      chain: descendantsMatching(/hardhat/),
      loader: [load.pid],
    });
    let signS = 0;
    const sign = async (pool: string, needed: number) => {
      signS += await load.sign(pool, challenges.get(pool)!, Math.ceil(needed), { native: true });
    };

    const idleOf = meter();
    await new Promise((r) => setTimeout(r, 3000));
    const idle = idleOf();
    console.log(
      `\nIdle (3 s, no requests): app ${(idle.app / 3000).toFixed(2)}, ClickHouse ${(idle.clickhouse / 3000).toFixed(2)}, dev chain ${(idle.chain / 3000).toFixed(2)}, other work ${(idle.other / 3000).toFixed(2)} cores busy; ${uptimeText()}`,
    );

    // ---- 3. open loop: each paid route at fixed offered rates
    const profiler = process.env.BENCH_CPU_PROFILE ? await startProfile('cpu') : undefined;
    const heapProfiler = process.env.BENCH_HEAP_PROFILE ? await startProfile('promoted') : undefined;
    const rows: OpenRow[] = [];
    for (const r of routes) {
      let saturated: string | undefined;
      for (const rate of rates) {
        const base = { route: r.sku.id, method: r.sku.method, rate, targetMs: r.sku.latencyTargetMs, cacheHits: 0 };
        if (saturated) {
          rows.push({ ...base, skipped: saturated });
          continue;
        }
        await sign(r.sku.id, rate * (openS + warmS) + 10);
        await load.open({ url, rate, durationS: warmS, variants: r.variants, pool: r.sku.id });
        const hits0 = await cacheHitsOf(r.sku.id);
        const cpuOf = meter();
        const result = await load.open({ url, rate, durationS: openS, variants: r.variants, pool: r.sku.id });
        const cpu = cpuOf();
        const row: OpenRow = { ...base, result, cacheHits: (await cacheHitsOf(r.sku.id)) - hits0, cpu };
        rows.push(row);
        console.log(
          `  ${r.sku.id} @${rate}/s: ${result.completed} answered in ${result.durationS.toFixed(1)} s (${result.achievedRps.toFixed(0)}/s), p50 ${ms1(result.p50)} ms, p99 ${ms1(result.p99)} ms, ` +
            `non-2xx ${result.non2xx}, errors ${result.errors + result.timeouts}, send lag p99 ${ms1(result.sendLagP99)} ms, cache hits ${row.cacheHits} ` +
            `(cache ${(row.cacheMb = (await cacheBytes()) / 1e6).toFixed(0)} MB); ${uptimeText()}`,
        );
        if (result.firstFailure) console.log(`    first failure: ${result.firstFailure}`);
        // A rate the server cannot keep up with makes the next ones only a queue: stop there.
        if (result.achievedRps < rate * 0.9 || result.p99 > 20 * r.sku.latencyTargetMs)
          saturated = `not run: the server could not keep up at ${rate}/s`;
      }
    }

    if (profiler)
      console.log(
        `CPU profile of the app process over the open loop: ${await profiler.stop(process.env.BENCH_CPU_PROFILE!)}`,
      );
    if (heapProfiler)
      console.log(
        `Heap profile (promoted, then collected) of the app process over the open loop: ${await heapProfiler.stop(process.env.BENCH_HEAP_PROFILE!)}`,
      );

    // ---- 4. the gate alone at saturation: same route and requests, gated and pass-through, closed loop
    const gateRoute = routes.find((r) => r.sku.id === (process.env.BENCH_GATE_ROUTE ?? 'spread-candles')) ?? routes[0];
    const gateRows: { label: string; result: RunResult; cpu: CpuSplit }[] = [];
    if (gateRoute) {
      const connections = envNum('BENCH_GATE_CONNECTIONS', 50);
      // A set of closed slices both apps have answered once (each has its own closed-slice cache): the handler is then
      // the same memory lookup on both sides, and the difference is the gate.
      const gateVariants = gateRoute.variants.slice(0, 2000);
      for (const [label, target, pool] of [
        ['no gate', ungated.url, undefined],
        ['gated (paid)', url, gateRoute.sku.id],
      ] as const) {
        if (pool) await sign(pool, gateVariants.length + 100);
        await load.run({
          url: target,
          connections,
          amount: gateVariants.length,
          variants: gateVariants,
          clock: 'autocannon',
          ...(pool ? { pool } : {}),
        });
        if (pool) await sign(pool, 4000 * saturationS);
        const rowProfiler = process.env.BENCH_CPU_PROFILE ? await startProfile('cpu') : undefined;
        const cpuOf = meter();
        const result = await load.run({
          url: target,
          connections,
          durationS: saturationS,
          reserve: 4 * connections,
          variants: gateVariants,
          clock: 'autocannon',
          ...(pool ? { pool } : {}),
        });
        gateRows.push({ label, result, cpu: cpuOf() });
        if (rowProfiler)
          console.log(
            `  CPU profile of the app over this row (${result.requests} requests): ${await rowProfiler.stop(process.env.BENCH_CPU_PROFILE!.replace(/(\.cpuprofile)?$/, `.${pool ? 'gated' : 'ungated'}.cpuprofile`))}`,
          );
        console.log(
          `  ${gateRoute.sku.id} ${label} @${connections} connections: ${result.requests} in ${result.durationS.toFixed(0)} s, ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}${result.exhausted ? ' (signatures ran dry: stopped early)' : ''}; ${uptimeText()}`,
        );
      }
    }

    // ---- 4b. the 402 challenge: sequential unpaid requests, next to a free route of the same app
    let challenge: { n: number; route: string; unpaid: number[]; free: number[] } | undefined;
    if (gateRoute) {
      const n = envNum('BENCH_CHALLENGE_N', 500);
      const sequential = async (v: RequestVariant, status: number): Promise<number[]> => {
        const times: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const body = v.body !== undefined ? { body: v.body, headers: { 'content-type': 'application/json' } } : {};
          const res = await fetch(`${url}${v.path}`, { method: v.method, ...body });
          await res.arrayBuffer();
          times.push(performance.now() - t0);
          if (res.status !== status) throw new Error(`${v.method} ${v.path}: expected ${status}, got ${res.status}`);
        }
        return times.sort((a, b) => a - b);
      };
      const free: RequestVariant = { method: 'GET', path: '/api/v1/crypto/coverage?pair=ETH/USD' };
      await sequential(gateRoute.probe, 402); // warm-up
      await sequential(free, 200);
      const unpaid = await sequential(gateRoute.probe, 402);
      challenge = { n, route: gateRoute.sku.id, unpaid, free: await sequential(free, 200) };
      console.log(
        `  402 challenge (${gateRoute.sku.id}, ${n} sequential): p50 ${ms1(rank(unpaid, 0.5))} ms, ` +
          `p99 ${ms1(rank(unpaid, 0.99))} ms; ${uptimeText()}`,
      );
    }

    // ---- 5. settlement throughput on the dev chain
    const settleRuns: SettlementRun[] = [];
    for (const [blocks, batchMax, count] of [
      ['automine', 100, envNum('BENCH_SETTLE_N', 2000)],
      ['automine', 1, envNum('BENCH_SETTLE_N', 2000)],
      ['2 s blocks', 100, envNum('BENCH_SETTLE_N', 2000)],
      ['2 s blocks', 1, envNum('BENCH_SETTLE_N_UNBATCHED_BLOCKS', 64)],
    ] as const) {
      const run = await settlementThroughput({ blocks, batchMax, count, logger });
      settleRuns.push(run);
      console.log(
        `  settlement ${blocks}, batch ${batchMax}: ${run.settlements} settled (${run.failed} failed) in ${run.seconds.toFixed(1)} s = ${run.perSecond.toFixed(1)}/s in ${run.transactions} transactions; ${uptimeText()}`,
      );
    }

    // ---- 6. report
    console.log(
      `\n## bench:api (${new Date().toISOString()}; app, dev chain, ClickHouse 18.16 and the load generator on ${cpus().length} shared cores; at the end: ${uptimeText()})`,
    );
    console.log(
      `\nOpen loop: each paid telemetry route at fixed offered rates, ${openS} s each after ${warmS} s of warm-up, every request with its own signature (${payerKeys.length} payers), ` +
        "x402 verification included, settlement excluded; latency from each request's scheduled send time. Target: p99 <= 1/4 of the spec's latency target.",
    );
    console.log(
      `Closed-slice cache: TELEMETRY_CACHE_MAX_MB=${config.TELEMETRY_CACHE_MAX_MB}; "cache hits" = answered from memory / answered, "cache MB" = its size after the row.`,
    );
    console.log(
      '| route | offered /s | answered /s | p50 ms | p99 ms | target / 4 | p99 ok | non-2xx | cache hits | cache MB | send lag p99 ms | CPU ms/req app / ClickHouse |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const quarter = row.targetMs * TARGET_RATIO;
      if (!row.result) {
        console.log(`| ${row.method} ${row.route} | ${row.rate} | ${row.skipped} | | | ${quarter} | no | | | | | |`);
        continue;
      }
      const x = row.result;
      const ok = x.p99 <= quarter && x.non2xx + x.errors + x.timeouts === 0 && x.achievedRps >= row.rate * 0.95;
      console.log(
        `| ${row.method} ${row.route} | ${row.rate} | ${x.achievedRps.toFixed(0)} | ${ms1(x.p50)} | ${ms1(x.p99)} | ${quarter} | ${ok ? 'yes' : 'NO'} | ${x.non2xx + x.errors + x.timeouts} | ${fmtInt(row.cacheHits)} / ${fmtInt(x.completed)} (${((100 * row.cacheHits) / Math.max(1, x.completed)).toFixed(0)} %) | ${row.cacheMb?.toFixed(0) ?? ''} | ${ms1(x.sendLagP99)} | ${row.cpu ? `${(row.cpu.app / x.completed).toFixed(2)} / ${(row.cpu.clickhouse / x.completed).toFixed(2)}` : 'n/a'} |`,
      );
    }
    console.log('\n| route | highest offered rate with p99 <= target / 4 | target: >= 500/s |');
    console.log('|---|---|---|');
    for (const r of routes) {
      const passing = rows.filter(
        (x) =>
          x.route === r.sku.id &&
          x.result &&
          x.result.p99 <= x.targetMs * TARGET_RATIO &&
          x.result.non2xx + x.result.errors + x.result.timeouts === 0 &&
          x.result.achievedRps >= x.rate * 0.95,
      );
      const best = passing.length ? Math.max(...passing.map((x) => x.rate)) : 0;
      console.log(
        `| ${r.sku.method} ${r.sku.id} | ${best ? `${best}/s` : 'none'} | ${best >= 500 ? 'met' : 'NOT met'} |`,
      );
    }

    if (gateRows.length === 2 && gateRoute) {
      const [bare, gated] = gateRows as [(typeof gateRows)[0], (typeof gateRows)[0]];
      const cpuPer = (g: (typeof gateRows)[0]) => g.cpu.app / Math.max(1, g.result.requests);
      console.log(
        `\nGate overhead at saturation: ${gateRoute.sku.method} ${gateRoute.sku.id}, closed loop at ${envNum('BENCH_GATE_CONNECTIONS', 50)} connections for ${saturationS} s over 2,000 closed slices both apps had answered once (the handler a memory lookup on both sides), gated (each request paid with its own signature, verified, "settled" by the no-op) vs the same app without the gate`,
      );
      console.log('| | req/s | p50 ms | p99 ms | app CPU ms/req | ClickHouse CPU ms/req |');
      console.log('|---|---|---|---|---|---|');
      for (const g of gateRows) {
        console.log(
          `| ${g.label} | ${fmtInt(g.result.rps)} | ${g.result.p50} | ${g.result.p99} | ${cpuPer(g).toFixed(3)} | ${(g.cpu.clickhouse / Math.max(1, g.result.requests)).toFixed(3)} |`,
        );
      }
      const gateCpu = cpuPer(gated) - cpuPer(bare);
      console.log(
        `Paid / unpaid throughput: ${(gated.result.rps / bare.result.rps).toFixed(2)}. Gate CPU per paid request (app CPU per request gated minus ungated): ${gateCpu.toFixed(3)} ms (target <= 0.3 ms: ${gateCpu <= 0.3 ? 'met' : 'NOT met'}).`,
      );
    }

    if (challenge) {
      console.log(
        `\nThe 402 challenge: ${challenge.n} sequential unpaid requests of ${challenge.route} (each answered 402 with ` +
          'its PAYMENT-REQUIRED header), next to as many of the free coverage route on the same app',
      );
      const row = (label: string, sorted: number[]) =>
        `| ${label} | ${ms1(rank(sorted, 0.5))} | ${ms1(rank(sorted, 0.99))} |`;
      console.log('| request | p50 ms | p99 ms |');
      console.log('|---|---|---|');
      console.log(row(`unpaid ${challenge.route} (402)`, challenge.unpaid));
      console.log(row('free coverage (200)', challenge.free));
    }

    console.log(
      '\nSettlement throughput on the dev chain: authorizations handed to the in-process facilitator at once, settled on chain by one settler key (8 transactions in flight).',
    );
    console.log(
      '| chain clock | batch (Multicall3) | settled | failed | seconds | settlements/s | transactions | gas per settlement | latency p50 / p99 ms |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const s of settleRuns) {
      console.log(
        `| ${s.blocks} | ${s.batchMax === 1 ? 'off' : `up to ${s.batchMax}`} | ${fmtInt(s.settlements)} | ${s.failed} | ${s.seconds.toFixed(1)} | ${s.perSecond.toFixed(1)} | ${fmtInt(s.transactions)} | ${fmtInt(s.gasPerSettlement)} | ${fmtInt(s.p50Ms)} / ${fmtInt(s.p99Ms)} |`,
      );
    }

    const paid = rows.reduce((n, r) => n + (r.result?.ok2xx ?? 0), 0);
    const verifySorted = [...payment.verifyMs].sort((a, b) => a - b);
    console.log(
      `\nPayments: ${fmtInt(payment.verifyMs.length)} verifications (in-process facilitator, dev chain; ` +
        `p50 ${ms1(rank(verifySorted, 0.5))} ms, p99 ${ms1(rank(verifySorted, 0.99))} ms), ` +
        `${fmtInt(payment.settleCalls())} settle calls answered by the no-op; ` +
        `${fmtInt(paid)} paid 200s in the open-loop table; signing ${signS.toFixed(1)} s (native) in the load generator. Live feed: ${fmtInt(feed.rows)} rows, ${feed.failures} failed inserts.`,
    );
    console.log(`Total ${seconds(tStart).toFixed(0)} s; ${uptimeText()}.`);
    const failures =
      rows.reduce((n, r) => n + (r.result ? r.result.non2xx + r.result.errors + r.result.timeouts : 0), 0) +
      gateRows.reduce((n, g) => n + g.result.non2xx + g.result.errors, 0);
    if (failures) {
      console.log(`\nINVALID: ${failures} non-2xx responses or errors: the tables measure failures.`);
      process.exitCode = 1;
    }
  } finally {
    await cleanup();
  }
}

/**
 * `--pipeline-parts`: only the paid-call pipeline's added steps (pipeline-parts.ts), on an api role with an
 * in-memory DuckDB and the dev chain: payment identifiers, sign-in-with-x re-reads, offers, receipts, answer
 * signatures, part by part.
 */
async function pipelinePartsOnly(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-parts-'));
  const started = await startDevChainApi(dir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:' }, testLogger());
  try {
    const { api, url, payer } = started;
    const sku = api.catalogue.byId('spread-candles')!;
    const route = paidRouteOf(sku, 'GET');
    const call: PaidCall = {
      route,
      resourceUrl: `${url}${sku.path}`,
      identity: { transport: 'http', method: 'GET', path: sku.path },
      transport: { method: 'GET', context: {} },
    };
    const parts = await measurePipelineParts({
      core: api.payments.core,
      call,
      sku,
      closedInput: { pair: 'ETH/USD', date: '2025-03-10', time: '0915', interval: '1m' },
      origin: url,
      payer,
      n: envNum('BENCH_PARTS_N', 300),
    });
    printPipelineParts(parts);
    // A closed day of ETH/USD for the door rows (its slices qualify for sign-in-with-x).
    const closed = Date.UTC(2025, 2, 10, 9, 15);
    await insertSpreadSamples(started.proc.ctx.store!, [
      spreadSample(1, closed + 10_000),
      spreadSample(2, closed + 60_000),
    ]);
    const rows = await measureDoorRows({
      core: api.payments.core,
      call,
      sku,
      closedInput: { pair: 'ETH/USD', date: '2025-03-10', time: '0915' },
      url,
      payer,
      n: envNum('BENCH_PARTS_DOOR_N', 200),
      concurrency: envNum('BENCH_PARTS_CONNECTIONS', 8),
    });
    printDoorRows(rows);
    if (rows.some((r) => r.non200 > 0)) process.exitCode = 1;
  } finally {
    await started.proc.shutdown('bench done');
    await rm(dir, { recursive: true, force: true });
  }
}

const { values: cli } = parseArgs({
  options: {
    reseed: { type: 'boolean', default: false },
    'seed-only': { type: 'boolean', default: false },
    'pipeline-parts': { type: 'boolean', default: false },
  },
});
if (cli['pipeline-parts']) await pipelinePartsOnly();
// BENCH_E2E=1: paid calls end to end, settlement included (paid-end-to-end.ts).
else if (process.env.BENCH_E2E === '1') await paidEndToEnd();
else await main(cli.reseed ?? false, cli['seed-only'] ?? false);
process.exit(process.exitCode ?? 0);
