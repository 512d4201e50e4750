/**
 * Day blocks of closed slices (api/telemetry/slice-blocks.ts) on both store
 * adapters, over realistic simulated history (simulator -> real detector ->
 * real paper executions, test/helpers/market-history.ts) with a two-hour gap:
 *
 *   - for every windowed route and a spread of inputs, the block filler's
 *     outcome of every slice of a day is byte for byte what the route's own
 *     pre-flight and handler answer for that slice alone (the 200 body, or the
 *     same 404 refusal for a slice without data);
 *   - through the closed-slice cache wrapper: every slice of the day answers
 *     what the route answers alone, the day costs one fill (the other slices
 *     make no store query), slices outside coverage take the ordinary path
 *     (404 `outside_coverage`), the other candle intervals of the day come from
 *     the same read, and concurrent misses of one day share one fill;
 *   - a slice long closed on the wall clock whose rows are still being
 *     written (the newest stored data is inside it: a backfill, a backlog
 *     replayed after an outage) is answered from the store and not kept, so
 *     its rows, once written, are in the next answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { answerValue } from '../../api/sku/json-text.js';
import type { Catalogue, PricedSku, SkuCall, SkuRuntime } from '../../api/sku/sku.js';
import { withClosedSliceCache } from '../../api/telemetry/closed-slice-cache.js';
import { coverageSpan } from '../../api/telemetry/window.js';
import type { DayBlockDeclaration, SliceBlockFiller, SliceOutcome } from '../../api/telemetry/slice-blocks.js';
import { AppError } from '../../core/errors.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { BASE_SLICE_MS } from '../../core/store/tables/query-helpers.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { seedMarketHistory } from '../helpers/market-history.js';

const config = testConfig({ MARKET_SOURCE: 'simulated' });
const all = loadPairs(config.PAIRS_FILE);
const pairs = { ...all, pairs: all.pairs.filter((p) => ['ETH/USD', 'AERO/USD'].includes(p.pair)) };
const catalogue: Catalogue = buildCatalogue({ config, pairs });
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/**
 * The day under test; coverage starts an hour before it and ends two hours after (so that its last slice is final
 * under the data margin, an hour); nothing between 10:00 and 12:00.
 */
const D = Date.UTC(2025, 2, 10);
const DATE = '2025-03-10';
const GAP = { fromMs: D + 10 * HOUR, toMs: D + 12 * HOUR };
/** The cache as the router sets it up: closed by the configured rule, the one that makes an answer `complete`. */
const CACHE = {
  maxBytes: 64 << 20,
  closedAfterMs: config.TELEMETRY_CACHE_CLOSED_AFTER_MS,
  dataMarginMs: config.TELEMETRY_CACHE_DATA_MARGIN_MS,
};

interface Adapter {
  name: string;
  open(): Promise<{ store: Store; close(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'duckdb',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'slice-blocks-'));
      const store = await createDuckDbStore({ path: join(dir, 'blocks.duckdb'), logger: testLogger() });
      return { store, close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  },
  {
    name: 'clickhouse',
    open: () => openClickHouseTestStore(config, 'slice_blocks'),
  },
];

/** Inputs per route (raw, as a client sends them), without date and time. */
const VARIANTS: Record<string, Record<string, unknown>[]> = {
  'spread-candles': [
    { pair: 'ETH/USD' },
    { pair: 'AERO-USD' },
    { pair: 'ETH/USD', interval: '1h' },
    { pair: 'AERO/USD', interval: '4H' },
    { pair: 'ETH/USD', interval: '1d' },
  ],
  dislocations: [{ pair: 'ETH/USD' }, { pair: 'AERO/USD', revisions: 'true' }],
  'execution-latency': [{}, { venue: config.CEX_EXCHANGE }, { venue: 'base_dex' }],
  'shadow-capacity': [{}, { pair: 'ETH/USD' }],
};

const pad = (n: number) => String(n).padStart(2, '0');
const timeOf = (ms: number) => `${pad(new Date(ms).getUTCHours())}${pad(new Date(ms).getUTCMinutes())}`;

/** A comparable outcome: the JSON of the body, or the refusal's status, code, text and details. */
function outcomeText(outcome: SliceOutcome): string {
  if ('answer' in outcome) return JSON.stringify(answerValue(outcome.answer)); // a kept answer comes back as its JSON text
  const r = outcome.refusal;
  return JSON.stringify({ refusal: { status: r.status, code: r.code, message: r.message, details: r.details } });
}

async function settle(run: () => Promise<unknown>): Promise<SliceOutcome> {
  try {
    return { answer: await run() };
  } catch (err) {
    if (err instanceof AppError && 'charged' in err.details) return { refusal: err };
    throw err;
  }
}

/** What the route answers for one slice on its own: pre-flight, then handler. */
function direct(sku: PricedSku, call: SkuCall<unknown>): Promise<SliceOutcome> {
  return settle(async () => sku.handler(call, await sku.preflight!(call)));
}

/** Runs `tasks` with at most `limit` at once. */
async function pooled<T>(tasks: (() => Promise<T>)[], limit = 6): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

describe.each(adapters)('closed-slice day blocks on $name', (adapter) => {
  let store: Store;
  let close: () => Promise<void>;
  let runtime: SkuRuntime;
  let queries = 0;

  beforeAll(async () => {
    ({ store, close } = await adapter.open());
    await store.migrate();
    const plan = { seed: 7, tickMs: 30_000 };
    await seedMarketHistory(store, pairs, config, { ...plan, startMs: D - HOUR, endMs: GAP.fromMs });
    await seedMarketHistory(store, pairs, config, { ...plan, seed: 8, startMs: GAP.toMs, endMs: D + DAY + 2 * HOUR });
    const query = store.query.bind(store);
    store.query = ((...args: Parameters<Store['query']>) => {
      queries += 1;
      return query(...args);
    }) as Store['query'];
    runtime = { store, config, pairs, catalogue, now: () => Date.now() };
  }, 240_000);

  afterAll(async () => {
    await close?.();
  });

  const callOf = (sku: PricedSku, raw: Record<string, unknown>): SkuCall<unknown> => ({
    input: sku.input.parse(raw),
    runtime,
    priceAtomic: sku.priceAtomic,
  });

  it('fills every slice of the day with what the route answers for that slice alone', async () => {
    const kinds = new Set<string>();
    for (const [id, variants] of Object.entries(VARIANTS)) {
      const sku = catalogue.byId(id)!;
      // The route's own filler, declared with it (api/telemetry/<route>/sku.ts).
      const filler = (sku as PricedSku & DayBlockDeclaration).dayBlock as SliceBlockFiller<unknown>;
      expect(filler, id).toBeTruthy();
      for (const variant of variants) {
        const sliceMs = filler.sliceMs(sku.input.parse({ ...variant, date: DATE }));
        const slices = Array.from({ length: DAY / sliceMs }, (_, i) => ({
          fromMs: D + i * sliceMs,
          toMs: D + (i + 1) * sliceMs,
        }));
        const filled = await filler.fill(callOf(sku, { ...variant, date: DATE }) as never, slices);
        const alone = await pooled(
          slices.map((s) => () => direct(sku, callOf(sku, { ...variant, date: DATE, time: timeOf(s.fromMs) }))),
        );
        slices.forEach((s, i) => {
          const got = filled.get(s.fromMs);
          expect(got, `${id} ${JSON.stringify(variant)} ${timeOf(s.fromMs)}`).toBeDefined();
          expect(outcomeText(got!), `${id} ${JSON.stringify(variant)} ${timeOf(s.fromMs)}`).toBe(
            outcomeText(alone[i]!),
          );
          kinds.add('answer' in got! ? `${id} answer` : `${id} ${got!.refusal.code}`);
        });
      }
    }
    // The data exercised both outcomes where a route has both (the gap has no samples).
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        'dislocations answer',
        'execution-latency answer',
        'execution-latency no_data_in_window',
        'shadow-capacity answer',
        'spread-candles answer',
        'spread-candles no_data_in_window',
      ]),
    );
  }, 240_000);

  it('through the cache: one fill per day, the same answers, coverage edges on the ordinary path, one fill for concurrent misses', async () => {
    const options = CACHE;
    const sku = catalogue.byId('spread-candles')!;
    const cached = withClosedSliceCache(sku, options);
    const through = (raw: Record<string, unknown>) => {
      const call = callOf(cached, raw);
      return settle(async () => cached.handler(call, await cached.preflight!(call)));
    };
    const times = Array.from({ length: 96 }, (_, i) => timeOf(D + i * BASE_SLICE_MS));

    const first = await through({ pair: 'ETH/USD', date: DATE, time: times[40] });
    expect(outcomeText(first)).toBe(
      outcomeText(await direct(sku, callOf(sku, { pair: 'ETH/USD', date: DATE, time: times[40] }))),
    );
    const before = queries;
    const served = [];
    for (const time of times) served.push(await through({ pair: 'ETH/USD', date: DATE, time }));
    // The span of coverage may be re-read in the background (it is cached for seconds): nothing else.
    expect(queries - before).toBeLessThanOrEqual(2);
    const alone = await pooled(
      times.map((time) => () => direct(sku, callOf(sku, { pair: 'ETH/USD', date: DATE, time }))),
    );
    expect(served.map(outcomeText)).toEqual(alone.map(outcomeText));
    expect(served.filter((o) => 'refusal' in o).length).toBe(8); // the two-hour gap

    // The other intervals of the day were filled from the same read (siblings), in the background.
    await new Promise((r) => setTimeout(r, 200));
    let siblingQueries = 0;
    for (const interval of ['1h', '4h', '1d']) {
      const q = queries;
      const got = await through({ pair: 'ETH/USD', date: DATE, time: '0915', interval });
      siblingQueries += queries - q;
      expect(outcomeText(got), interval).toBe(
        outcomeText(await direct(sku, callOf(sku, { pair: 'ETH/USD', date: DATE, time: '0915', interval }))),
      );
    }
    expect(siblingQueries).toBeLessThanOrEqual(1); // a possible re-read of the coverage span

    // The day before: only its last hour is inside coverage; earlier slices are refused as outside it, uncached.
    const previous = new Date(D - DAY).toISOString().slice(0, 10);
    const early = await through({ pair: 'ETH/USD', date: previous, time: '0900' });
    expect('refusal' in early && early.refusal.code).toBe('outside_coverage');
    const late = await through({ pair: 'ETH/USD', date: previous, time: '2330' });
    expect(outcomeText(late)).toBe(
      outcomeText(await direct(sku, callOf(sku, { pair: 'ETH/USD', date: previous, time: '2330' }))),
    );

    // Concurrent misses of one day (a route and input not read before): one fill, i.e. as many queries as one fill makes.
    const disl = catalogue.byId('dislocations')!;
    const one = withClosedSliceCache(disl, { ...options });
    const q0 = queries;
    const call = callOf(one, { pair: 'AERO/USD', date: DATE, time: '0100' });
    await one.handler(call, await one.preflight!(call));
    const perFill = queries - q0;
    const many = withClosedSliceCache(disl, { ...options });
    const q1 = queries;
    const answers = await Promise.all(
      times.slice(0, 30).map(async (time) => {
        const c = callOf(many, { pair: 'AERO/USD', date: DATE, time });
        return many.handler(c, await many.preflight!(c));
      }),
    );
    expect(answers).toHaveLength(30);
    expect(queries - q1).toBeLessThanOrEqual(perFill + 2);
    expect(perFill).toBeGreaterThan(0);
  }, 240_000);

  it('keeps no slice the pipeline is still writing: its late rows are in the next answer', async () => {
    // The pipeline writes the hour after coverage ended; its last slice is still being written.
    const start = D + DAY + 2 * HOUR;
    await seedMarketHistory(store, pairs, config, { seed: 9, tickMs: 30_000, startMs: start, endMs: start + HOUR });
    await coverageSpan(store, 'ETH/USD', { maxAgeMs: 0 }); // the API has seen the new hour (its span cache is fresh)
    const sku = catalogue.byId('spread-candles')!;
    const cached = withClosedSliceCache(sku, CACHE);
    const last = start + HOUR - BASE_SLICE_MS;
    const raw = { pair: 'ETH/USD', date: new Date(last).toISOString().slice(0, 10), time: timeOf(last) };
    const through = async () => {
      const call = callOf(cached, raw);
      return settle(async () => cached.handler(call, await cached.preflight!(call)));
    };
    const partial = await through();
    expect('answer' in partial, outcomeText(partial)).toBe(true);
    expect(outcomeText(partial)).toBe(outcomeText(await direct(sku, callOf(sku, raw))));
    // Late rows of that slice arrive (a second venue feed replayed, say).
    await seedMarketHistory(store, pairs, config, { seed: 10, tickMs: 30_000, startMs: start, endMs: start + HOUR });
    const complete = await through();
    expect(outcomeText(complete)).toBe(outcomeText(await direct(sku, callOf(sku, raw))));
    expect(outcomeText(complete)).not.toBe(outcomeText(partial));
  }, 240_000);
});
