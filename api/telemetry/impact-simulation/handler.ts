/**
 * POST /api/v1/crypto/impact-simulation: a paper taker order walked through
 * the newest level-2 book of the pair's centralized venue (book-walk.ts has the
 * definitions and the fill-probability model). Read-only: it places no order
 * and touches no custody.
 *
 * Inputs read: the newest `book_snapshots` row of the pair (latest-book.ts;
 * older than 2 x CEX_STALE_MS counts as no book: 503 `book_unavailable`
 * before any challenge, never charged), the venue's quotes of the 15 minutes
 * before the snapshot (volatility), and the venue's median REST round trip of
 * the last hour (horizon; 250 ms without samples), and the venue's book
 * history of the pair over IMPACT_FILL_WINDOW_MS (depth-survival calibration,
 * depth-survival.ts). They are shared between requests for a bounded time
 * (impact-inputs.ts: the book and the median for at most 250 ms, the
 * volatility once per book, the history for IMPACT_FILL_REFRESH_MS).
 *
 * Fill model: depth survival when the history holds at least
 * IMPACT_FILL_MIN_SAMPLES snapshot pairs for the request's horizon, else the
 * adverse-sweep model (book-walk.ts); `fill_model` and `fill_model_samples`
 * say which answered and on how many pairs.
 */
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import type { BookEvent } from '../../../core/events/market.js';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { IsoTimestamp, SourceField, ZERO_CHARGE_TEXT, pairParam, priceText } from '../../sku/schemas.js';
import type { SkuCall } from '../../sku/sku.js';
import { cleanSide, fillProbabilities, walkBook } from '../book-walk.js';
import { chooseFillModel, depthSurvivalProbabilities } from '../depth-survival.js';
import { sharedLatestBook, sharedMedianRoundTrip, sharedSurvivalTable, sharedVolatility } from '../impact-inputs.js';
import { caseInsensitiveEnum } from '../params.js';
import { PRECISION as P } from '../precision.js';
import { sourceText } from '../window.js';

export { VOLATILITY_WINDOW_MS } from '../impact-inputs.js';
export const DEFAULT_LATENCY_MS = 250;
const MAX_SIZE = 1e12;

export function impactSimulationInput(pairs: PairsCatalogue) {
  const size = (what: string) => z.number().positive().finite().max(MAX_SIZE).optional().describe(what);
  return z
    .strictObject({
      pair: pairParam(pairs),
      side: caseInsensitiveEnum(['buy', 'sell']).describe(
        "`buy` walks the asks, `sell` walks the bids (any case: `BUY`, the response's own form, is accepted)",
      ),
      size_base: size('Order size in base units; give this or `size_usd`'),
      size_usd: size('Order notional in USD; give this or `size_base`'),
    })
    .superRefine((v, ctx) => {
      if (v.size_base === undefined && v.size_usd === undefined) {
        ctx.addIssue({ code: 'custom', path: ['size_base'], message: 'provide size_base or size_usd' });
      } else if (v.size_base !== undefined && v.size_usd !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['size_usd'], message: 'provide only one of size_base and size_usd' });
      }
    });
}
export type ImpactSimulationInput = z.output<ReturnType<typeof impactSimulationInput>>;

const probability = (what: string) => z.number().min(0).max(1).describe(what);

export const ImpactSimulationOutput = z.object({
  pair: z.string(),
  side: z.enum(['BUY', 'SELL']),
  requested_size_base: z.number().describe('Requested size in base units (size_usd / mid when the request gave USD)'),
  requested_size_usd: z
    .number()
    .describe('Requested notional in USD (size_base x mid when the request gave base units)'),
  mid_price: z.number().describe('(best bid + best ask) / 2'),
  best_bid: z.number(),
  best_ask: z.number(),
  spread_bps: z.number().describe('(ask - bid) / mid x 1e4'),
  expected_fill_price: z.number().describe('VWAP of the fillable part of the order'),
  slippage_bps: z.number().describe('VWAP against mid, basis points; positive = worse than mid'),
  fillable_size_base: z.number().describe('Base units the visible book fills'),
  fillable_size_usd: z.number().describe('USD notional the visible book fills'),
  fill_ratio: z.number().min(0).max(1).describe('Fillable / requested, in the unit of the request'),
  full_fill_probability: probability(
    'Probability the whole size fills at arrival (book age + median REST round trip later). depth_survival: fills at prices no worse than the deepest level the walk needs, rounded out to the grid (0, 1, 2, 5, 10, 20, 50, 100, 200 bps from the best), as a marketable limit there would: the share of the stored snapshot pairs over that horizon in which the depth offered within that distance, scaled by its observed survival ratio, still holds the size (for a size the best level holds: the share in which the best price is still offered); adverse_sweep: Phi(distance kept / sigma_h) of a price move sweeping the levels near the touch',
  ),
  partial_fill_probability: probability('Probability only part of the size fills (some depth survives, not enough)'),
  fill_model: z
    .enum(['depth_survival', 'adverse_sweep'])
    .describe(
      'The model behind the probabilities: depth_survival when the venue book history of the last IMPACT_FILL_WINDOW_MS holds enough snapshot pairs (IMPACT_FILL_MIN_SAMPLES), else adverse_sweep',
    ),
  fill_model_samples: z
    .number()
    .int()
    .min(0)
    .describe(
      'Snapshot pairs (t, t + lag >= horizon) of the side the order trades against found in the history: the depth_survival calibration, or (adverse_sweep) fewer than it needs',
    ),
  fill_horizon_ms: z
    .number()
    .int()
    .describe(
      'Horizon of the depth-survival pairs (ms): book age + median REST round trip, rounded up to 250 ms; each pair (t, t + lag) has the smallest lag >= it',
    ),
  fill_model_history_from: IsoTimestamp.nullable().describe(
    'Event time of the oldest book snapshot of the calibration history (null without history)',
  ),
  fill_model_history_to: IsoTimestamp.nullable().describe(
    'Event time of the newest book snapshot of the calibration history (null without history)',
  ),
  executable: z.boolean().describe('The visible book fills the whole size'),
  levels_consumed: z.number().int().describe('Book levels the walk touched'),
  opposite_depth_usd: z
    .number()
    .describe('USD notional of the whole side the order trades against (asks for a buy, bids for a sell)'),
  source: SourceField,
  charged: z.string().describe('Price text of this call'),
});
export type ImpactSimulationOutput = z.infer<typeof ImpactSimulationOutput>;

/** The book a simulation may use: newest snapshot of the pair, not older than this. */
export const bookMaxAgeMs = (config: { CEX_STALE_MS: number }) => 2 * config.CEX_STALE_MS;

export async function impactSimulationPreflight({
  input,
  runtime,
}: SkuCall<ImpactSimulationInput>): Promise<BookEvent> {
  const now = runtime.now();
  const maxAge = bookMaxAgeMs(runtime.config);
  const book = await sharedLatestBook(runtime.store, input.pair, now, maxAge);
  const usable = book && cleanSide(book.bids, 'bids').length > 0 && cleanSide(book.asks, 'asks').length > 0;
  if (!book || !usable) {
    throw new AppError(
      'book_unavailable',
      `no level-2 book of ${input.pair} newer than ${Math.round(maxAge / 1000)} s with both sides is stored; is the ingest running?`,
      503,
      { field: 'pair', charged: ZERO_CHARGE_TEXT, dependency: 'book_snapshots' },
    );
  }
  return book;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function impactSimulationHandler(
  call: SkuCall<ImpactSimulationInput>,
  book: BookEvent,
): Promise<ImpactSimulationOutput> {
  const { input, runtime } = call;
  const now = runtime.now();
  const walk = walkBook({
    side: input.side,
    sizeBase: input.size_base,
    sizeUsd: input.size_usd,
    bids: book.bids,
    asks: book.asks,
  });
  const [volatility, medianRttMs] = await Promise.all([
    sharedVolatility(runtime.store, book),
    sharedMedianRoundTrip(runtime.store, book.venue, now),
  ]);
  const sigma1s = volatility ?? walk.spread_bps / 2;
  const latencyMs = medianRttMs ?? DEFAULT_LATENCY_MS;
  const horizonS = (Math.max(0, now - book.event_time_ms) + latencyMs) / 1000;
  const side = cleanSide(input.side === 'buy' ? book.asks : book.bids, input.side === 'buy' ? 'asks' : 'bids');
  const table = await sharedSurvivalTable(runtime.store, book.venue, book.pair, horizonS * 1000, now, runtime.config);
  const survival = depthSurvivalProbabilities(
    {
      side: input.side,
      levels: side,
      requested: input.size_usd ?? input.size_base!,
      byUsd: input.size_usd !== undefined,
      fillDepthDistanceBps: walk.fill_depth_distance_bps,
      lastLevelDistanceBps: walk.last_level_distance_bps,
    },
    table,
  );
  const probabilities = chooseFillModel(survival, runtime.config.IMPACT_FILL_MIN_SAMPLES, () =>
    fillProbabilities(walk, sigma1s * Math.sqrt(horizonS)),
  );
  return {
    pair: book.pair,
    side: input.side === 'buy' ? 'BUY' : 'SELL',
    requested_size_base: P.base(walk.requested_size_base),
    requested_size_usd: P.usd(walk.requested_size_usd),
    mid_price: P.price(walk.mid_price),
    best_bid: P.price(walk.best_bid),
    best_ask: P.price(walk.best_ask),
    spread_bps: P.fineBps(walk.spread_bps),
    expected_fill_price: P.price(walk.expected_fill_price),
    slippage_bps: P.fineBps(walk.slippage_bps),
    fillable_size_base: P.base(walk.fillable_size_base),
    fillable_size_usd: P.usd(walk.fillable_size_usd),
    fill_ratio: P.probability(walk.fill_ratio),
    full_fill_probability: P.probability(probabilities.full_fill_probability),
    partial_fill_probability: P.probability(probabilities.partial_fill_probability),
    fill_model: probabilities.fill_model,
    fill_model_samples: probabilities.fill_model_samples,
    fill_horizon_ms: table.horizon_ms,
    fill_model_history_from: isoOrNull(table.history_from_ms),
    fill_model_history_to: isoOrNull(table.history_to_ms),
    executable: walk.executable,
    levels_consumed: walk.levels_consumed,
    opposite_depth_usd: P.usd(walk.opposite_depth_usd),
    source: `${sourceText([book.venue], book.source, runtime.config.MARKET_SOURCE)}, level-2 book of ${new Date(book.event_time_ms).toISOString()}, paper order (nothing placed)`,
    charged: priceText(call.priceAtomic),
  };
}
