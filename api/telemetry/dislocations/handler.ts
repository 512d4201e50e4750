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
 * computed a day at a time (dislocationsBlock, slice-blocks.ts). `stale_legs`:
 * the evaluations of the pair in the window not made because a leg was older
 * than its venue's maximum quote age (core/store/tables/stale-evaluations.ts,
 * docs/metrics.md "Fresh legs only"): no opportunity can open, and none is
 * served, over legs that old.
 */
import { z } from 'zod';
import { DislocationStatus } from '../../../core/events/market.js';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { revisionsInSlice, type RevisionItem } from '../../../core/store/tables/dislocation-revisions.js';
import {
  dislocationsBySlice,
  dislocationsInSlice,
  type DislocationsSlice,
  type OpportunityState,
} from '../../../core/store/tables/dislocations.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import { methodologyBySlice } from '../../../core/store/tables/spread-samples.js';
import { countStaleLegs, staleLegsBySlice } from '../../../core/store/tables/stale-evaluations.js';
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

/** What the latest revision's net spread is made of (docs/metrics.md, "Costs behind a dislocation"). */
const DislocationCosts = z
  .object({
    profit_size_usd: z.number().describe('Ladder size of the estimated profit, USD: the size the costs below are at'),
    cex_fee_bps: bps('CEX taker fee, paid on top of the CEX price'),
    dex_fee_bps: bps("DEX pool fee tier, already inside the DEX quoter's price (not in fees_bps)"),
    fees_bps: bps('Fees charged on top of the prices: the CEX taker fee (a DEX fee only if a venue quoted it apart)'),
    gas_usd: usd(
      'Gas of the DEX swap (Base L2 execution gas at the quoted gas price; no L1 data fee, no priority fee)',
    ),
    slippage_bps: bps('Raw top-of-book spread minus the spread of the two ladder prices at profit_size_usd'),
  })
  .describe(
    'The costs behind the latest revision: raw spread - slippage - fees - gas / profit_size_usd = net spread at that size',
  );

const quoteLeg = {
  venue: z.string(),
  event_id: z.string().describe('QuoteEvent id (md.quotes.v1; the `quotes` table)'),
  event_time: IsoTimestamp.describe("The quote's event time at the venue"),
};
const DislocationLegs = z.object({
  cex: z.object(quoteLeg).describe('The CEX book quote (top of book and ladder from the level-2 book)'),
  dex: z
    .object({
      ...quoteLeg,
      block_number: z.number().int().nullable().describe('Base block the pool was read at'),
      pool_address: z.string().nullable().describe('Pool contract, when the pairs catalogue names it'),
      fee_tier: z
        .number()
        .int()
        .nullable()
        .describe('Pool fee tier in hundredths of a bip (500 = 0.05 %), from the pairs catalogue'),
    })
    .describe('The DEX pool quote'),
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
  costs: DislocationCosts,
  legs: DislocationLegs.nullable().describe(
    'The two quotes the latest revision was evaluated on; null for revisions written before legs were stored (methodology 1)',
  ),
  methodology: z
    .string()
    .describe(
      'Methodology version of the detector that wrote the latest revision (docs/metrics.md, "Methodology versions")',
    ),
  revisions: z.array(RevisionSchema).optional().describe('Every revision, oldest first (only with `revisions=true`)'),
});

export const DislocationsOutput = z.object({
  pair: z.string(),
  slice_start: IsoTimestamp,
  slice_end: IsoTimestamp,
  ...COMPLETENESS_FIELDS,
  count: z.number().int().describe('Length of `dislocations`'),
  methodology: z
    .string()
    .describe(
      'Methodology version(s) of the detector that evaluated the slice (of its spread samples; `1+2` across a change): a changed formula or rule bumps it, and old slices keep theirs (docs/metrics.md, "Methodology versions")',
    ),
  stale_legs: z
    .number()
    .int()
    .describe(
      'Evaluations of the pair in the window not made because a leg was older than its venue\'s maximum quote age (DEX: about two Base blocks; CEX: a few seconds): a venue outage or a lagging feed, during which no opportunity is looked for (docs/metrics.md, "Fresh legs only")',
    ),
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
  cex_fee_bps: P.bps,
  dex_fee_bps: P.bps,
  fees_bps: P.bps,
  gas_usd: P.usd,
  slippage_bps: P.bps,
} as const;

/** A stored revision (RevisionItem) as served; an opportunity at its latest revision (OpportunityState) as served. */
const servedRevision = servedFields(RevisionSchema, ROUNDINGS);
export const servedItem = servedFields(DislocationItem, ROUNDINGS);

export async function dislocationsHandler(
  { input, runtime }: SkuCall<DislocationsInput>,
  window: TimeWindow,
): Promise<DislocationsOutput> {
  const [slice, revisions, completeness, staleLegs, methodology] = await Promise.all([
    dislocationsInSlice(runtime.store, input.pair, window.fromMs, window.toMs),
    input.revisions ? revisionsInSlice(runtime.store, input.pair, window.fromMs, window.toMs) : undefined,
    windowCompleteness(runtime, window, spreadObservations(input.pair), input.pair),
    countStaleLegs(runtime.store, { pair: input.pair, fromMs: window.fromMs, toMs: window.toMs }),
    methodologyBySlice(runtime.store, input.pair, window.fromMs, window.toMs, window.toMs - window.fromMs),
  ]);
  const stats = { staleLegs, methodology: [...methodology.values()][0] ?? '' };
  return dislocationsAnswer(slice, revisions, completeness, stats, runtime);
}

/**
 * The day-block filler (slice-blocks.ts): the opportunities (and with
 * `revisions=true` their revisions) of the whole range in one query each,
 * split by the slice they opened in, and the pair's spread samples and
 * stale evaluations per slice (completeness, `stale_legs`). A slice with samples has an answer, an empty list
 * included; one without gets the pre-flight's refusal.
 */
export const dislocationsBlock: SliceBlockFiller<DislocationsInput> = {
  sliceMs: () => BASE_SLICE_MS,
  coveragePair: (input) => input.pair,
  async fill({ input, runtime }, slices) {
    const source = spreadObservations(input.pair);
    const [fromMs, toMs] = [slices[0]!.fromMs, slices[slices.length - 1]!.toMs];
    const [bySlice, revisions, observed, closedEnd, staleLegs, methodology] = await Promise.all([
      dislocationsBySlice(runtime.store, input.pair, slices),
      input.revisions ? revisionsInSlice(runtime.store, input.pair, fromMs, toMs) : undefined,
      observeSlices(runtime.store, source, slices),
      closedEndNow(runtime, input.pair),
      staleLegsBySlice(runtime.store, input.pair, fromMs, toMs, BASE_SLICE_MS),
      methodologyBySlice(runtime.store, input.pair, fromMs, toMs, BASE_SLICE_MS),
    ]);
    return new Map(
      slices.map((s): [number, SliceOutcome] => {
        const slice = bySlice.get(s.fromMs);
        const completeness = blockCompleteness(s, observed, closedEnd);
        return [
          s.fromMs,
          slice && completeness
            ? {
                answer: dislocationsAnswer(
                  slice,
                  revisions,
                  completeness,
                  { staleLegs: staleLegs.get(s.fromMs) ?? 0, methodology: methodology.get(s.fromMs) ?? '' },
                  runtime,
                ),
              }
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
  { staleLegs, methodology }: { staleLegs: number; methodology: string },
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
    methodology,
    stale_legs: staleLegs,
    dislocations: slice.dislocations.map((d) => {
      const item = servedItem({ ...d, costs: costsOf(d), legs: legsOf(d, pools, runtime.config.CEX_EXCHANGE) });
      if (revisions) item.revisions = (revisions.get(d.opportunity_id) ?? []).map(servedRevision);
      return item;
    }),
    source: sourceText(venues, slice.source, runtime.config.MARKET_SOURCE),
  };
}

/** The costs of an opportunity's latest revision, as the item serves them (before rounding). */
export function costsOf(d: OpportunityState): z.output<typeof DislocationCosts> {
  return {
    profit_size_usd: d.profit_size_usd,
    cex_fee_bps: d.cex_fee_bps,
    dex_fee_bps: d.dex_fee_bps,
    fees_bps: d.fees_bps,
    gas_usd: d.gas_usd,
    slippage_bps: d.slippage_bps,
  };
}

/** The legs of an opportunity's latest revision, the pool's address and fee tier from the pairs catalogue; null before legs were stored. */
export function legsOf(
  d: OpportunityState,
  pools: readonly PairsCatalogue['pairs'][number]['dex'][number][],
  cexVenue: string,
): z.output<typeof DislocationLegs> | null {
  if (!d.cex_event_id || !d.dex_event_id) return null;
  const dexVenue = d.buy_venue === cexVenue ? d.sell_venue : d.buy_venue;
  const pool = pools.find((p) => p.venue === dexVenue);
  return {
    cex: { venue: cexVenue, event_id: d.cex_event_id, event_time: new Date(d.cex_event_time_ms).toISOString() },
    dex: {
      venue: dexVenue,
      event_id: d.dex_event_id,
      event_time: new Date(d.dex_event_time_ms).toISOString(),
      block_number: d.dex_block_number,
      pool_address: pool?.pool ?? null,
      fee_tier: pool?.fee_tier ?? null,
    },
  };
}
