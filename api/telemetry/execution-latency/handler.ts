/**
 * GET|POST /api/v1/crypto/execution-latency: round-trip statistics of the
 * venues' APIs over a 15-minute slice (successful CEX REST and Base RPC
 * probes, optionally one venue), the share of probes that failed or timed
 * out (`failed_count`, `failure_rate_pct`: a failed probe is a sample with
 * `ok: false`, kept out of the statistics) and the fill rate of the paper executions
 * decided in it (core/store/tables/latency-samples.ts, docs/metrics.md
 * section 4), with its completeness over the same samples (`complete`,
 * `as_of`, `coverage_pct`: completeness.ts). A window outside coverage, or
 * without any successful sample (of the venue), is refused by the pre-flight
 * (404, no charge). Closed slices are computed a day at a time
 * (executionLatencyBlock, slice-blocks.ts).
 *
 * `fill_rate_pct` and the two `venues` means are null when the slice has no
 * paper execution / no sample of that kind: a made-up 0 would read as a
 * measurement.
 */
import { z } from 'zod';
import type { Config } from '../../../core/config.js';
import { sql } from '../../../core/store/sql.js';
import {
  DEX_VENUE_FILTER,
  executionLatency,
  executionLatencyBySlice,
  type ExecutionLatency,
} from '../../../core/store/tables/latency-samples.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import { DateParam, IsoTimestamp, SourceField, TimeParam } from '../../sku/schemas.js';
import type { SkuCall, SkuRuntime } from '../../sku/sku.js';
import { caseInsensitiveEnum } from '../params.js';
import { PRECISION as P, servedFields } from '../precision.js';
import type { SliceBlockFiller, SliceOutcome } from '../slice-blocks.js';
import {
  blockCompleteness,
  closedEndNow,
  COMPLETENESS_FIELDS,
  observeSlices,
  windowCompleteness,
  type Completeness,
  type ObservationSource,
} from '../completeness.js';
import { hasRows, noDataInWindow, sourceText, windowWithinCoverage, type TimeWindow } from '../window.js';

export function executionLatencyInput(config: Pick<Config, 'CEX_EXCHANGE'>) {
  return z.strictObject({
    date: DateParam.optional(),
    time: TimeParam.optional(),
    venue: caseInsensitiveEnum([config.CEX_EXCHANGE, DEX_VENUE_FILTER])
      .optional()
      .describe(
        `Only this venue's samples: \`${config.CEX_EXCHANGE}\` (the centralized exchange's REST API) or \`${DEX_VENUE_FILTER}\` (every Base RPC sample); any case`,
      ),
  });
}
export type ExecutionLatencyInput = z.output<ReturnType<typeof executionLatencyInput>>;

const ms = (what: string) => z.number().describe(`${what}, ms (1 decimal)`);

export const ExecutionLatencyOutput = z.object({
  slice_start: IsoTimestamp,
  slice_end: IsoTimestamp,
  ...COMPLETENESS_FIELDS,
  sample_count: z.number().int().describe('Successful round trips in the slice (of the venue when filtered)'),
  p50_latency_ms: ms('Median round trip (nearest rank)'),
  p90_latency_ms: ms('90th percentile (nearest rank)'),
  p99_latency_ms: ms('99th percentile (nearest rank)'),
  min_latency_ms: ms('Fastest round trip'),
  max_latency_ms: ms('Slowest round trip'),
  avg_latency_ms: ms('Mean round trip'),
  failed_count: z
    .number()
    .int()
    .describe(
      'Probes in the slice that failed or timed out (of the venue when filtered): left out of the statistics above',
    ),
  failure_rate_pct: z
    .number()
    .nullable()
    .describe('failed_count / (sample_count + failed_count) x 100 (2 decimals); null without any probe'),
  fill_rate_pct: z
    .number()
    .nullable()
    .describe(
      'Filled / measured paper executions decided in the slice x 100 (not filtered by venue); null when none was decided',
    ),
  venues: z
    .object({
      cex_rest_ms: z.number().nullable().describe('Mean CEX REST round trip in the slice; null without a sample'),
      dex_base_ms: z.number().nullable().describe('Mean Base RPC round trip in the slice; null without a sample'),
    })
    .describe('Mean round trip per kind (not filtered by `venue`)'),
  source: SourceField,
});
export type ExecutionLatencyOutput = z.infer<typeof ExecutionLatencyOutput>;

export async function executionLatencyPreflight({
  input,
  runtime,
}: SkuCall<ExecutionLatencyInput>): Promise<TimeWindow> {
  const window = await windowWithinCoverage(runtime.store, input);
  if (!(await hasRows(runtime.store, 'latency_samples', window, latencyObservations(input).where)))
    throw noSamples(window, input);
  return window;
}

/** The samples the statistics summarise: the successful ones, of the venue when filtered. */
function latencyObservations(input: ExecutionLatencyInput): ObservationSource {
  const where =
    input.venue === undefined
      ? sql`ok = 1`
      : input.venue === DEX_VENUE_FILTER
        ? sql`ok = 1 AND venue_kind = 'dex'`
        : sql`ok = 1 AND venue = ${input.venue}`;
  return { table: 'latency_samples', where, what: `latency samples${input.venue ? ` of ${input.venue}` : ''}` };
}

export async function executionLatencyHandler(
  { input, runtime }: SkuCall<ExecutionLatencyInput>,
  window: TimeWindow,
): Promise<ExecutionLatencyOutput> {
  const [stats, completeness] = await Promise.all([
    executionLatency(runtime.store, window.fromMs, window.toMs, input.venue),
    // Closed like every route without a pair: by the span of every pair's spread samples (slice-blocks.ts).
    windowCompleteness(runtime, window, latencyObservations(input), undefined),
  ]);
  return latencyAnswer(stats, completeness, window, input, runtime);
}

/**
 * The day-block filler (slice-blocks.ts): the statistics of every slice of
 * the range from one grouped query per table, with the samples' covered
 * steps per slice; a slice without a successful sample (of the venue) gets
 * the pre-flight's refusal.
 */
export const executionLatencyBlock: SliceBlockFiller<ExecutionLatencyInput> = {
  sliceMs: () => BASE_SLICE_MS,
  coveragePair: () => undefined,
  async fill({ input, runtime }, slices) {
    const [stats, observed, closedEnd] = await Promise.all([
      executionLatencyBySlice(runtime.store, slices, input.venue),
      observeSlices(runtime.store, latencyObservations(input), slices),
      closedEndNow(runtime, undefined),
    ]);
    return new Map(
      slices.map((s): [number, SliceOutcome] => {
        const slice = stats.get(s.fromMs);
        const completeness = blockCompleteness(s, observed, closedEnd);
        return [
          s.fromMs,
          slice && slice.sample_count > 0 && completeness
            ? { answer: latencyAnswer(slice, completeness, s, input, runtime) }
            : { refusal: noSamples(s, input) },
        ];
      }),
    );
  },
};

const noSamples = (window: TimeWindow, input: ExecutionLatencyInput) =>
  noDataInWindow(
    window,
    `latency samples${input.venue ? ` of ${input.venue}` : ''}`,
    input.venue !== undefined ? 'venue' : undefined,
  );

/** The statistics as served (precision.ts): milliseconds to 1 decimal, the fill rate to 2 decimals. */
const servedLatency = servedFields(ExecutionLatencyOutput, {
  p50_latency_ms: P.ms,
  p90_latency_ms: P.ms,
  p99_latency_ms: P.ms,
  min_latency_ms: P.ms,
  max_latency_ms: P.ms,
  avg_latency_ms: P.ms,
  failure_rate_pct: P.pct,
  fill_rate_pct: P.pct,
  cex_rest_ms: P.ms,
  dex_base_ms: P.ms,
});

type LatencyStatistic =
  'p50_latency_ms' | 'p90_latency_ms' | 'p99_latency_ms' | 'min_latency_ms' | 'max_latency_ms' | 'avg_latency_ms';

/** Every statistic is there (they are null together, in a slice without a successful sample). */
const measured = (s: ExecutionLatency): s is ExecutionLatency & Record<LatencyStatistic, number> =>
  s.p50_latency_ms !== null &&
  s.p90_latency_ms !== null &&
  s.p99_latency_ms !== null &&
  s.min_latency_ms !== null &&
  s.max_latency_ms !== null &&
  s.avg_latency_ms !== null;

function latencyAnswer(
  stats: ExecutionLatency,
  completeness: Completeness,
  window: TimeWindow,
  input: ExecutionLatencyInput,
  runtime: SkuRuntime,
): ExecutionLatencyOutput {
  if (!measured(stats)) throw noDataInWindow(window, 'latency samples');
  const venues =
    input.venue === undefined
      ? [runtime.config.CEX_EXCHANGE, 'base_rpc']
      : input.venue === DEX_VENUE_FILTER
        ? ['base_rpc']
        : [input.venue];
  return servedLatency({
    ...stats,
    ...completeness,
    source: sourceText(venues, stats.source, runtime.config.MARKET_SOURCE),
  });
}
