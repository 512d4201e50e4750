/**
 * GET|POST /api/v1/crypto/dislocations: the dislocations (CEX/DEX arbitrage
 * opportunities that pay after fees, gas and slippage at an executable size)
 * of a pair opened in a 15-minute slice, each at its latest revision with its
 * peaks, and with `revisions=true` every revision of each
 * (core/store/tables/dislocations.ts, dislocation-revisions.ts,
 * docs/metrics.md section 2). Numbers are rounded as precision.ts says.
 * The answer carries its completeness over the pair's spread samples
 * (`complete`, `as_of`, `coverage_pct`: completeness.ts). An empty list is a
 * valid answer for a slice the pipeline observed (spread samples of the pair,
 * no dislocation: a quiet market); a slice without any spread sample of the
 * pair (the pipeline was not running) is refused by the pre-flight like one
 * outside coverage: 404 `no_data_in_window`, no charge. Closed slices are
 * computed a day at a time (dislocationsBlock, slice-blocks.ts).
 */
import { z } from 'zod';
import { DislocationStatus } from '../../../core/events/market.js';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { revisionsInSlice, type RevisionItem } from '../../../core/store/tables/dislocation-revisions.js';
import {
  dislocationsBySlice,
  dislocationsInSlice,
  type DislocationsSlice,
} from '../../../core/store/tables/dislocations.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import { DateParam, IsoTimestamp, SourceField, TimeParam, pairParam } from '../../sku/schemas.js';
import type { SkuCall, SkuRuntime } from '../../sku/sku.js';
import { booleanFlag } from '../params.js';
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

export function dislocationsInput(pairs: PairsCatalogue) {
  return z.strictObject({
    pair: pairParam(pairs),
    date: DateParam.optional(),
    time: TimeParam.optional(),
    revisions: booleanFlag()
      .optional()
      .describe(
        '`true`: each item also carries `revisions`, every revision of the opportunity (its path while open); default false',
      ),
  });
}
export type DislocationsInput = z.output<ReturnType<typeof dislocationsInput>>;

const bps = (what: string) => z.number().describe(`${what}, bps (2 decimals)`);
const usd = (what: string) => z.number().describe(`${what}, USD (cents)`);

export const RevisionSchema = z.object({
  revision: z.number().int().describe('0 when it opened, then one per material change, and the close'),
  status: DislocationStatus,
  updated_at: IsoTimestamp.describe('Event time of the revision'),
  buy_price: z.number(),
  sell_price: z.number(),
  raw_spread_bps: bps('Raw top-of-book spread'),
  net_spread_bps: bps('Best net spread over the ladder sizes'),
  est_profit_usd: usd('Profit at the most profitable ladder size'),
  profit_size_usd: z.number().describe('The ladder size of that profit, USD'),
  capacity_usd: usd('Size at which the net spread falls to zero (measured prices)'),
  capacity_capped: z
    .boolean()
    .describe('Net spread still positive at the measured depth: capacity is at least the value'),
  liquidity_depth_usd: usd('Measured two-venue depth within the impact bound'),
  liquidity_depth_capped: z
    .boolean()
    .describe('The depth is a lower bound (search hard maximum or end of the book reached)'),
});

export const DislocationItem = z.object({
  id: z.number().int().describe('Public numeric id of the opportunity (52 bits of sha256 of its internal id)'),
  timestamp: IsoTimestamp.describe('When the opportunity opened'),
  pair: z.string(),
  buy_venue: z.string().describe('Venue identifier where the base is bought (CEX id or `<protocol>_base`)'),
  sell_venue: z.string().describe('Venue identifier where the base is sold'),
  buy_price: z.number().describe('Ask on the buy venue (USD per base unit, 6 significant digits)'),
  sell_price: z.number().describe('Bid on the sell venue (USD per base unit, 6 significant digits)'),
  raw_spread_bps: bps('(sell bid - buy ask) / buy ask x 1e4, latest revision'),
  net_spread_bps: bps('Best net spread after fees, gas and slippage over the ladder sizes, latest revision'),
  est_profit_usd: usd('Profit at the most profitable ladder size, latest revision'),
  liquidity_depth_usd: usd(
    "Measured depth of the direction: the smaller leg of the buy venue's buy depth and the sell venue's sell depth within the impact bound (DEX: quoter search; CEX: book walk)",
  ),
  status: DislocationStatus.describe(
    '`OPPORTUNITY` while open, then `CLOSED` (the net spread fell to the threshold) or `EXPIRED` (a venue went silent)',
  ),
  duration_ms: z.number().int().describe('Time open so far, or until it closed'),
  liquidity_depth_capped: z
    .boolean()
    .describe('The depth is a lower bound: the search reached its hard maximum or the end of the visible book'),
  capacity_usd: usd('Size at which the net spread falls to zero, on measured prices, at most the depth'),
  capacity_capped: z.boolean().describe('Net spread still positive at the depth: capacity is at least the value'),
  peak_raw_spread_bps: bps('Highest raw spread over the revisions'),
  peak_net_spread_bps: bps('Highest net spread over the revisions'),
  peak_profit_usd: usd('Highest estimated profit over the revisions'),
  peak_size_usd: z.number().describe('Ladder size of the peak profit, USD'),
  peak_capacity_usd: usd('Largest capacity over the revisions'),
  revision_count: z.number().int().describe('Revisions so far (see `revisions=true`)'),
  updated_at: IsoTimestamp.describe('Event time of the latest revision'),
  revisions: z.array(RevisionSchema).optional().describe('Every revision, oldest first (only with `revisions=true`)'),
});

export const DislocationsOutput = z.object({
  pair: z.string(),
  slice_start: IsoTimestamp,
  slice_end: IsoTimestamp,
  ...COMPLETENESS_FIELDS,
  count: z.number().int().describe('Length of `dislocations`'),
  dislocations: z
    .array(DislocationItem)
    .describe('Opportunities opened in the slice, oldest first, at their latest revision with their peaks'),
  source: SourceField,
});
export type DislocationsOutput = z.infer<typeof DislocationsOutput>;

export async function dislocationsPreflight({ input, runtime }: SkuCall<DislocationsInput>): Promise<TimeWindow> {
  const window = await windowWithinCoverage(runtime.store, input, { pair: input.pair });
  const source = spreadObservations(input.pair);
  if (!(await hasRows(runtime.store, source.table, window, source.where))) {
    throw noDataInWindow(window, source.what, windowField(input));
  }
  return window;
}

/** How the numbers of an item and of a revision are served (precision.ts); the other fields are exact. */
const ROUNDINGS = {
  buy_price: P.price,
  sell_price: P.price,
  // An open opportunity pays (DISLOCATION_MIN_PROFIT_USD): its spreads and profit never read 0.
  raw_spread_bps: P.bpsNonzero,
  net_spread_bps: P.bpsNonzero,
  est_profit_usd: P.usdNonzero,
  profit_size_usd: P.usd,
  capacity_usd: P.usd,
  liquidity_depth_usd: P.usd,
  peak_raw_spread_bps: P.bpsNonzero,
  peak_net_spread_bps: P.bpsNonzero,
  peak_profit_usd: P.usdNonzero,
  peak_size_usd: P.usd,
  peak_capacity_usd: P.usd,
} as const;

/** A stored revision (RevisionItem) as served; an opportunity at its latest revision (OpportunityState) as served. */
const servedRevision = servedFields(RevisionSchema, ROUNDINGS);
const servedItem = servedFields(DislocationItem, ROUNDINGS);

export async function dislocationsHandler(
  { input, runtime }: SkuCall<DislocationsInput>,
  window: TimeWindow,
): Promise<DislocationsOutput> {
  const [slice, revisions, completeness] = await Promise.all([
    dislocationsInSlice(runtime.store, input.pair, window.fromMs, window.toMs),
    input.revisions ? revisionsInSlice(runtime.store, input.pair, window.fromMs, window.toMs) : undefined,
    windowCompleteness(runtime, window, spreadObservations(input.pair), input.pair),
  ]);
  return dislocationsAnswer(slice, revisions, completeness, runtime);
}

/**
 * The day-block filler (slice-blocks.ts): the opportunities (and with
 * `revisions=true` their revisions) of the whole range in one query each,
 * split by the slice they opened in, and the pair's spread samples per
 * slice (completeness). A slice with samples has an answer, an empty list
 * included; one without gets the pre-flight's refusal.
 */
export const dislocationsBlock: SliceBlockFiller<DislocationsInput> = {
  sliceMs: () => BASE_SLICE_MS,
  coveragePair: (input) => input.pair,
  async fill({ input, runtime }, slices) {
    const source = spreadObservations(input.pair);
    const [bySlice, revisions, observed, closedEnd] = await Promise.all([
      dislocationsBySlice(runtime.store, input.pair, slices),
      input.revisions
        ? revisionsInSlice(runtime.store, input.pair, slices[0]!.fromMs, slices[slices.length - 1]!.toMs)
        : undefined,
      observeSlices(runtime.store, source, slices),
      closedEndNow(runtime, input.pair),
    ]);
    return new Map(
      slices.map((s): [number, SliceOutcome] => {
        const slice = bySlice.get(s.fromMs);
        const completeness = blockCompleteness(s, observed, closedEnd);
        return [
          s.fromMs,
          slice && completeness
            ? { answer: dislocationsAnswer(slice, revisions, completeness, runtime) }
            : { refusal: noDataInWindow(s, source.what, windowField(input)) },
        ];
      }),
    );
  },
};

function dislocationsAnswer(
  slice: DislocationsSlice,
  revisions: Map<string, RevisionItem[]> | undefined,
  completeness: Completeness,
  runtime: SkuRuntime,
): DislocationsOutput {
  const pools = runtime.pairs.pairs.find((p) => p.pair === slice.pair)?.dex ?? [];
  const venues = slice.dislocations.length
    ? slice.dislocations
        .flatMap((d) => [d.buy_venue, d.sell_venue])
        .sort((a, b) => Number(b === runtime.config.CEX_EXCHANGE) - Number(a === runtime.config.CEX_EXCHANGE))
    : pairVenues(runtime.config.CEX_EXCHANGE, pools);
  return {
    pair: slice.pair,
    slice_start: slice.slice_start,
    slice_end: slice.slice_end,
    ...completeness,
    count: slice.count,
    dislocations: slice.dislocations.map((d) => {
      const item = servedItem(d);
      if (revisions) item.revisions = (revisions.get(d.opportunity_id) ?? []).map(servedRevision);
      return item;
    }),
    source: sourceText(venues, slice.source, runtime.config.MARKET_SOURCE),
  };
}
