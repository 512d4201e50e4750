/**
 * GET|POST /api/v1/crypto/shadow-capacity: how much arbitrage volume the
 * CEX/DEX dislocations opened in a 15-minute slice offered at a net profit,
 * how much of it the paper executions captured, what stayed uncaptured, and
 * the capital each venue needed to take it (overall and per pair; optionally
 * one pair). Field definitions: docs/metrics.md section 6 and the
 * descriptions below (they are published in /openapi.json and /api/v1/discovery).
 * The answer carries its completeness over the spread samples of the pair
 * (every pair's without one): `complete`, `as_of`, `coverage_pct`
 * (completeness.ts). A slice without any such sample (the pipeline was not
 * running) is refused by the pre-flight: 404 `no_data_in_window`, no charge;
 * with samples and no opportunity it is a valid answer of zeros (a quiet market).
 * Closed slices are computed a day at a time (shadowCapacityBlock, slice-blocks.ts).
 */
import { z } from 'zod';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import {
  shadowCapacity,
  shadowCapacityBySlice,
  type ShadowCapacity,
} from '../../../core/store/tables/shadow-capacity.js';
import { DateParam, IsoTimestamp, SourceField, TimeParam, pairParam } from '../../sku/schemas.js';
import type { SkuCall, SkuRuntime } from '../../sku/sku.js';
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

export function shadowCapacityInput(pairs: PairsCatalogue) {
  return z.strictObject({
    date: DateParam.optional(),
    time: TimeParam.optional(),
    pair: pairParam(pairs).optional().describe('Only this pair (`<BASE>/USD` or `<BASE>-USD`); default every pair'),
  });
}
export type ShadowCapacityInput = z.output<ReturnType<typeof shadowCapacityInput>>;

const usd = (what: string) => z.number().describe(`${what}, USD (cents)`);
const split = z.object({
  quote_usd: usd('USD the venue must hold for the uncaptured opportunities that buy there'),
  base_usd: usd(
    'Base-asset inventory (valued in USD) the venue must hold for the uncaptured opportunities that sell there',
  ),
});

const groupShape = {
  opportunities: z.number().int().describe('Dislocations opened in the slice'),
  actionable_opportunities: z
    .number()
    .int()
    .describe('Those whose net spread was positive at some size at some moment (peak capacity > 0)'),
  available_volume_usd: usd(
    'Sum of peak capacities: per opportunity the largest size tradable at a net profit during its life',
  ),
  captured_volume_usd: usd('Sum of min(size, peak capacity) of the paper executions that filled'),
  uncaptured_volume_usd: usd('available - captured: volume left on the table'),
  capture_rate_pct: z.number().nullable().describe('captured / available x 100; null when nothing was available'),
  est_uncaptured_profit_usd: usd(
    'Sum of peak profit less the realised profit of filled paper executions (floored at 0 each)',
  ),
  avg_capacity_usd: usd('Mean peak capacity over actionable opportunities'),
  max_capacity_usd: usd('Largest peak capacity'),
  max_capacity_capped: z
    .boolean()
    .describe('The largest peak capacity is a lower bound: its net spread was still positive at the measured depth'),
  time_weighted_capacity_usd: usd(
    'Capacity on offer at an average instant of the slice: integral of capacity over time / slice length',
  ),
  capital_required_usd: z
    .object({ cex: usd('Capital on the centralized exchange'), base_dex: usd('Capital on Base (the DEX pools)') })
    .describe(
      'Capital each venue needed to capture the uncaptured volume without moving funds between venues during the slice',
    ),
  capital_split_usd: z
    .object({ cex: split, base_dex: split })
    .describe('capital_required_usd split into USD and base inventory per venue'),
};

export const ShadowCapacityOutput = z.object({
  slice_start: IsoTimestamp,
  slice_end: IsoTimestamp,
  ...COMPLETENESS_FIELDS,
  pair: z.string().nullable().describe('The requested pair, or null for every pair'),
  ...groupShape,
  pairs: z
    .array(z.object({ pair: z.string(), ...groupShape }))
    .describe('The same figures per pair (pairs with an opportunity in the slice), alphabetical'),
  source: SourceField,
});
export type ShadowCapacityOutput = z.infer<typeof ShadowCapacityOutput>;

export async function shadowCapacityPreflight({ input, runtime }: SkuCall<ShadowCapacityInput>): Promise<TimeWindow> {
  const window = await windowWithinCoverage(runtime.store, input, input.pair === undefined ? {} : { pair: input.pair });
  const source = spreadObservations(input.pair);
  if (!(await hasRows(runtime.store, source.table, window, source.where))) {
    throw noDataInWindow(window, source.what, windowField(input));
  }
  return window;
}

/** The answer as served (precision.ts): USD amounts to cents, the capture rate to 2 decimals; counts exact. */
const servedCapacity = servedFields(ShadowCapacityOutput, {
  available_volume_usd: P.usd,
  captured_volume_usd: P.usd,
  uncaptured_volume_usd: P.usd,
  capture_rate_pct: P.pct,
  est_uncaptured_profit_usd: P.usd,
  avg_capacity_usd: P.usd,
  max_capacity_usd: P.usd,
  time_weighted_capacity_usd: P.usd,
  cex: P.usd,
  base_dex: P.usd,
  quote_usd: P.usd,
  base_usd: P.usd,
});

export async function shadowCapacityHandler(
  { input, runtime }: SkuCall<ShadowCapacityInput>,
  window: TimeWindow,
): Promise<ShadowCapacityOutput> {
  const [result, completeness] = await Promise.all([
    shadowCapacity(runtime.store, window.fromMs, window.toMs, input.pair),
    windowCompleteness(runtime, window, spreadObservations(input.pair), input.pair),
  ]);
  return shadowCapacityAnswer(result, completeness, input, runtime);
}

/**
 * The day-block filler (slice-blocks.ts): the opportunities and executions of
 * the whole range read once, split by slice, and the spread samples per slice
 * (completeness); a slice without any gets the pre-flight's refusal.
 */
export const shadowCapacityBlock: SliceBlockFiller<ShadowCapacityInput> = {
  sliceMs: () => BASE_SLICE_MS,
  coveragePair: (input) => input.pair,
  async fill({ input, runtime }, slices) {
    const source = spreadObservations(input.pair);
    const [bySlice, observed, closedEnd] = await Promise.all([
      shadowCapacityBySlice(runtime.store, slices, input.pair),
      observeSlices(runtime.store, source, slices),
      closedEndNow(runtime, input.pair),
    ]);
    return new Map(
      slices.map((s): [number, SliceOutcome] => {
        const result = bySlice.get(s.fromMs);
        const completeness = blockCompleteness(s, observed, closedEnd);
        return [
          s.fromMs,
          result && completeness
            ? { answer: shadowCapacityAnswer(result, completeness, input, runtime) }
            : { refusal: noDataInWindow(s, source.what, windowField(input)) },
        ];
      }),
    );
  },
};

function shadowCapacityAnswer(
  result: ShadowCapacity,
  completeness: Completeness,
  input: ShadowCapacityInput,
  runtime: SkuRuntime,
): ShadowCapacityOutput {
  const pairs = input.pair === undefined ? result.pairs.map((p) => p.pair) : [input.pair];
  const venues = pairs.flatMap((p) =>
    pairVenues(runtime.config.CEX_EXCHANGE, runtime.pairs.pairs.find((x) => x.pair === p)?.dex ?? []),
  );
  return servedCapacity({
    ...result,
    ...completeness,
    source: sourceText(
      venues.length ? venues : [runtime.config.CEX_EXCHANGE],
      result.source,
      runtime.config.MARKET_SOURCE,
    ),
  });
}
