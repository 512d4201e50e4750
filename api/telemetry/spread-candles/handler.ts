/**
 * GET|POST /api/v1/crypto/spread-candles: one OHLC candle of the raw CEX/DEX
 * spread of a pair over a 15-minute slice (or a 1h/4h/1d bucket), from the
 * stored spread samples (core/store/tables/spread-samples.ts, formulas in
 * docs/metrics.md section 3), rounded as precision.ts says, with its
 * completeness (`complete`, `as_of`, `coverage_pct` over the pair's spread
 * samples: completeness.ts). A window outside coverage, or one without any
 * sample of the pair, is refused by the pre-flight (404, no charge). Closed
 * slices are computed a day at a time (spreadCandlesBlock, slice-blocks.ts).
 */
import { z } from 'zod';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { sql } from '../../../core/store/sql.js';
import { LRUCache } from 'lru-cache';
import type { Store } from '../../../core/store/store.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import {
  CANDLE_INTERVALS,
  rollUpCandles,
  spreadBaseCandles,
  spreadCandles,
  type BaseCandle,
  type CandleInterval,
  type SpreadCandle,
} from '../../../core/store/tables/spread-samples.js';
import { DateParam, IsoTimestamp, SourceField, TimeParam, pairParam } from '../../sku/schemas.js';
import type { SkuCall, SkuRuntime } from '../../sku/sku.js';
import { caseInsensitiveEnum } from '../params.js';
import { PRECISION as P, servedFields } from '../precision.js';
import type { SliceBlockFiller, SliceOutcome } from '../slice-blocks.js';
import {
  blockCompleteness,
  closedEndNow,
  COMPLETENESS_FIELDS,
  observeSlices,
  spreadObservations,
  windowCompleteness,
  type Completeness,
  type Observed,
} from '../completeness.js';
import {
  hasRows,
  noDataInWindow,
  pairVenues,
  sourceText,
  windowField,
  windowWithinCoverage,
  type TimeWindow,
} from '../window.js';

const INTERVALS = Object.keys(CANDLE_INTERVALS) as [CandleInterval, ...CandleInterval[]];

export function spreadCandlesInput(pairs: PairsCatalogue) {
  return z.strictObject({
    pair: pairParam(pairs),
    date: DateParam.optional(),
    time: TimeParam.optional(),
    interval: caseInsensitiveEnum(INTERVALS)
      .default('15m')
      .describe('Candle interval: 15m (default), 1h, 4h or 1d (any case); UTC-aligned buckets'),
  });
}
export type SpreadCandlesInput = z.output<ReturnType<typeof spreadCandlesInput>>;

const bps = (what: string) => z.number().describe(`${what}, basis points of the buy price (2 decimals)`);

export const SpreadCandlesOutput = z.object({
  pair: z.string().describe('`<BASE>/USD`'),
  interval: z.enum(INTERVALS),
  slice_start: IsoTimestamp,
  slice_end: IsoTimestamp,
  ...COMPLETENESS_FIELDS,
  open_raw_spread_bps: bps('Raw top-of-book spread of the first sample of the bucket'),
  high_raw_spread_bps: bps('Highest raw spread'),
  low_raw_spread_bps: bps('Lowest raw spread'),
  close_raw_spread_bps: bps('Raw spread of the last sample'),
  avg_net_spread_bps: bps('Mean net spread (after fees, gas and slippage at the best size)'),
  max_net_spread_bps: bps('Highest net spread'),
  volume_depth_usd: z
    .number()
    .describe(
      'Mean measured two-venue depth of the samples: per sample, the smaller leg of the notional each venue fills within the impact bound (DEX: quoter search; CEX: book walk), USD (cents)',
    ),
  volume_depth_capped: z
    .boolean()
    .describe(
      "Some sample's depth was a lower bound (search hard maximum, end of the book): the mean is at least the value",
    ),
  dislocation_count: z
    .number()
    .int()
    .describe('Distinct dislocations (net spread above the threshold) of the pair opened in the bucket'),
  source: SourceField,
});
export type SpreadCandlesOutput = z.infer<typeof SpreadCandlesOutput>;

export async function spreadCandlesPreflight({ input, runtime }: SkuCall<SpreadCandlesInput>): Promise<TimeWindow> {
  const window = await windowWithinCoverage(runtime.store, input, {
    pair: input.pair,
    sizeMs: CANDLE_INTERVALS[input.interval],
  });
  if (!(await hasRows(runtime.store, 'spread_samples', window, sql`pair = ${input.pair}`))) {
    throw noDataInWindow(window, `spread samples of ${input.pair}`, windowField(input));
  }
  return window;
}

export async function spreadCandlesHandler(
  { input, runtime }: SkuCall<SpreadCandlesInput>,
  window: TimeWindow,
): Promise<SpreadCandlesOutput> {
  const [[candle], completeness] = await Promise.all([
    spreadCandles(runtime.store, input.pair, window.fromMs, window.toMs, input.interval),
    windowCompleteness(runtime, window, spreadObservations(input.pair), input.pair),
  ]);
  if (!candle) throw noDataInWindow(window, `spread samples of ${input.pair}`);
  return candleAnswer(candle, completeness, runtime);
}

/**
 * The day-block filler (slice-blocks.ts): the 15-minute candles of the range
 * in one read, rolled up to the interval as spreadCandles does; a bucket
 * without a sample gets the pre-flight's refusal. The 15-minute candles of a
 * closed range, and its covered 15-second steps per 15 minutes, are kept
 * briefly (closedBaseRead), so the other intervals of the same day (siblings,
 * filled right after) are rolled up from the same reads.
 */
export const spreadCandlesBlock: SliceBlockFiller<SpreadCandlesInput> = {
  sliceMs: (input) => CANDLE_INTERVALS[input.interval],
  coveragePair: (input) => input.pair,
  siblings: (input) => INTERVALS.filter((i) => i !== input.interval).map((interval) => ({ ...input, interval })),
  async fill({ input, runtime }, slices) {
    const [base, closedEnd] = await Promise.all([
      closedBaseRead(runtime.store, input.pair, slices[0]!.fromMs, slices[slices.length - 1]!.toMs),
      closedEndNow(runtime, input.pair),
    ]);
    const candles = rollUpCandles(input.pair, base.candles, input.interval);
    const byStart = new Map(candles.map((c) => [Date.parse(c.slice_start), c]));
    const observed = rollUpObserved(base.observed, slices);
    const field = windowField(input);
    return new Map(
      slices.map((s): [number, SliceOutcome] => {
        const candle = byStart.get(s.fromMs);
        const completeness = blockCompleteness(s, observed, closedEnd);
        return [
          s.fromMs,
          candle && completeness
            ? { answer: candleAnswer(candle, completeness, runtime) }
            : { refusal: noDataInWindow(s, `spread samples of ${input.pair}`, field) },
        ];
      }),
    );
  },
};

/** What the fills of every interval of a closed range share: its 15-minute candles and observations. */
interface BaseRead {
  candles: BaseCandle[];
  /** Covered 15-second steps and newest sample per 15-minute slice, by slice start. */
  observed: Map<number, Observed>;
}

const baseReads = new WeakMap<Store, LRUCache<string, Promise<BaseRead>>>();

/** The 15-minute candles and observations of a closed range (they never change), one read shared by the fills of every interval (a few minutes, a few dozen ranges). */
function closedBaseRead(store: Store, pair: string, fromMs: number, toMs: number): Promise<BaseRead> {
  let reads = baseReads.get(store);
  if (!reads) baseReads.set(store, (reads = new LRUCache<string, Promise<BaseRead>>({ max: 64, ttl: 300_000 })));
  const key = `${pair} ${fromMs} ${toMs}`;
  const known = reads.get(key);
  if (known) return known;
  const quarters: TimeWindow[] = [];
  for (let t = Math.floor(fromMs / BASE_SLICE_MS) * BASE_SLICE_MS; t < toMs; t += BASE_SLICE_MS)
    quarters.push({ fromMs: t, toMs: t + BASE_SLICE_MS });
  const read = Promise.all([
    spreadBaseCandles(store, pair, fromMs, toMs),
    observeSlices(store, spreadObservations(pair), quarters),
  ]).then(([candles, observed]) => ({ candles, observed }));
  reads.set(key, read);
  read.catch(() => reads.delete(key));
  return read;
}

/** The observations of each slice (a whole number of 15-minute ones) from those of its quarters: steps add up (they nest), the newest is the max. */
function rollUpObserved(quarters: ReadonlyMap<number, Observed>, slices: readonly TimeWindow[]): Map<number, Observed> {
  const out = new Map<number, Observed>();
  for (const s of slices) {
    let steps = 0;
    let newestMs = -Infinity;
    for (let t = s.fromMs; t < s.toMs; t += BASE_SLICE_MS) {
      const q = quarters.get(t);
      if (!q) continue;
      steps += q.steps;
      newestMs = Math.max(newestMs, q.newestMs);
    }
    if (steps > 0) out.set(s.fromMs, { steps, newestMs });
  }
  return out;
}

/** A candle as served (precision.ts): spreads to 2 decimals, the depth to cents; the source names the venues. */
const servedCandle = servedFields(SpreadCandlesOutput, {
  open_raw_spread_bps: P.bps,
  high_raw_spread_bps: P.bps,
  low_raw_spread_bps: P.bps,
  close_raw_spread_bps: P.bps,
  avg_net_spread_bps: P.bps,
  max_net_spread_bps: P.bps,
  volume_depth_usd: P.usd,
});

export function candleAnswer(
  candle: SpreadCandle,
  completeness: Completeness,
  runtime: SkuRuntime,
): SpreadCandlesOutput {
  const pools = runtime.pairs.pairs.find((p) => p.pair === candle.pair)?.dex ?? [];
  return servedCandle({
    ...candle,
    ...completeness,
    source: sourceText(pairVenues(runtime.config.CEX_EXCHANGE, pools), candle.source, runtime.config.MARKET_SOURCE),
  });
}
