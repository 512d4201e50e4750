/**
 * GET /api/v1/crypto/history: one dataset for one complete UTC day, as one
 * CSV or Parquet file, streamed (api/sku/streamed-answer.ts), with its manifest.
 *
 * The day is answered slice by slice through the per-slice route's own
 * pre-flight and handler (the catalogue's SKU, as range-query.ts does), so
 * every row holds exactly what that route serves for its window (every field,
 * rounding included; history-rows.ts says how a slice answer becomes rows).
 *
 * Input (400 before any challenge, never charged, with the field): `dataset`,
 * `date` (required), `pair` (required for candles and dislocations, optional
 * for shadow-capacity, refused for execution-latency), `interval` (candles
 * only; default 15m), `venue` (execution-latency only), `format` (csv, the
 * default, or parquet).
 *
 * Pre-flight (404 before any challenge, never charged): `outside_coverage`
 * for a day without any stored data of the pair (of any pair without one) on
 * either side; `day_incomplete` for a day whose last slice is not yet final
 * (completeness.ts: closedEndNow, the rule `complete: true` answers by);
 * `no_data_in_window` when no slice of the day has an answer. The slices a
 * per-slice route refuses (outside coverage, no data) are not rows; the
 * manifest lists them in `missing_slices`.
 *
 * Work per call: one day of one dataset, at most 96 slice pre-flights and
 * handlers (SLICE_CONCURRENCY at a time), one file in a temp directory.
 */
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import { CANDLE_INTERVALS, type CandleInterval } from '../../../core/store/tables/spread-samples.js';
import { METHODOLOGY_VERSION } from '../../../aggregate/methodology.js';
import { readableUsdc } from '../../payment/usdc-amount.js';
import type { PricedPreparation } from '../../sku/call-price.js';
import { answerValue } from '../../sku/json-text.js';
import { DateParam, pairParam, ZERO_CHARGE_TEXT } from '../../sku/schemas.js';
import type { PricedSku, SkuCall } from '../../sku/sku.js';
import type { StreamedAnswer } from '../../sku/streamed-answer.js';
import { closedEndNow } from '../completeness.js';
import { caseInsensitiveEnum } from '../params.js';
import { inOrder, rangeSlices } from '../range-query.js';
import { coverageSpan, type TimeWindow } from '../window.js';
import { bulkUnitsOf, HISTORY_DATASETS, type HistoryDataset } from './bulk-terms.js';
import { writeHistoryFile, type HistoryFormat } from './history-file.js';
import { historyColumns, historyRows } from './history-rows.js';
import { HistoryManifestSchema, type HistoryManifest } from './manifest.js';

const SLICE_CONCURRENCY = 4;
const DAY_MS = 86_400_000;
const INTERVALS = Object.keys(CANDLE_INTERVALS) as [CandleInterval, ...CandleInterval[]];

/** The per-slice route each dataset is cut from. */
const ROUTE_OF: Record<HistoryDataset, string> = {
  candles: 'spread-candles',
  dislocations: 'dislocations',
  'execution-latency': 'execution-latency',
  'shadow-capacity': 'shadow-capacity',
};

const issue = (code: string, path: string, message: string) => ({
  code: 'custom' as const,
  path: [path],
  message,
  params: { code },
});

export function historyInput(pairs: PairsCatalogue, cexVenue: string) {
  return z
    .strictObject({
      dataset: caseInsensitiveEnum(HISTORY_DATASETS).describe(
        'candles (spread candles), dislocations (one row per dislocation revision item as served), execution-latency, shadow-capacity',
      ),
      date: DateParam.describe('UTC day, YYYY-MM-DD: a complete day (every slice final)'),
      pair: pairParam(pairs)
        .optional()
        .describe(
          'Pair (`<BASE>/USD` or `<BASE>-USD`): required for candles and dislocations, optional for shadow-capacity',
        ),
      interval: caseInsensitiveEnum(INTERVALS).optional().describe('candles only: 15m (default), 1h, 4h or 1d'),
      venue: z.string().max(64).optional().describe(`execution-latency only: \`${cexVenue}\` or \`base_rpc\``),
      format: caseInsensitiveEnum(['csv', 'parquet'] as const)
        .default('csv')
        .describe('csv (RFC 4180, header row; default) or parquet'),
    })
    .superRefine((v, ctx) => {
      if ((v.dataset === 'candles' || v.dataset === 'dislocations') && v.pair === undefined)
        ctx.addIssue(issue('missing_parameter', 'pair', `required for dataset ${v.dataset}`));
      if (v.dataset === 'execution-latency' && v.pair !== undefined)
        ctx.addIssue(issue('invalid_parameter', 'pair', 'execution-latency is not per pair (use `venue`)'));
      if (v.dataset !== 'candles' && v.interval !== undefined)
        ctx.addIssue(issue('invalid_parameter', 'interval', 'only for dataset candles'));
      if (v.dataset !== 'execution-latency' && v.venue !== undefined)
        ctx.addIssue(issue('invalid_parameter', 'venue', 'only for dataset execution-latency'));
    });
}
export type HistoryInput = z.output<ReturnType<typeof historyInput>>;

/** What the pre-flight hands the handler. */
export class HistoryPrepared implements PricedPreparation {
  constructor(
    readonly dataset: HistoryDataset,
    readonly route: PricedSku,
    readonly interval: CandleInterval,
    readonly answered: readonly { slice: TimeWindow; input: unknown; prepared: unknown }[],
    readonly missing: readonly string[],
  ) {}

  get priceUnits(): number {
    return bulkUnitsOf(this.dataset, this.interval);
  }
}

const refusal = (code: string, message: string, input: HistoryInput) =>
  new AppError(code, message, 404, { field: 'date', charged: ZERO_CHARGE_TEXT, date: input.date });

/** The per-slice route's input for one slice, validated by the route's own schema. */
function sliceInput(route: PricedSku, input: HistoryInput, slice: TimeWindow): unknown {
  const iso = new Date(slice.fromMs).toISOString();
  const raw: Record<string, unknown> = { date: iso.slice(0, 10), time: iso.slice(11, 16).replace(':', '') };
  if (input.pair !== undefined) raw.pair = input.pair;
  if (input.dataset === 'candles') raw.interval = input.interval ?? '15m';
  if (input.venue !== undefined) raw.venue = input.venue;
  const parsed = (route.input as z.ZodType).safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = String(first?.path[0] ?? 'dataset');
    throw new AppError('invalid_parameter', `${field}: ${first?.message ?? 'invalid'}`, 400, {
      field,
      charged: ZERO_CHARGE_TEXT,
    });
  }
  return parsed.data;
}

export async function historyPreflight({
  input,
  runtime,
  priceAtomic,
}: SkuCall<HistoryInput>): Promise<HistoryPrepared> {
  const route = runtime.catalogue.byId(ROUTE_OF[input.dataset]);
  if (!route) throw new AppError('internal_error', `route ${ROUTE_OF[input.dataset]} is not in the catalogue`, 500);
  const interval = input.interval ?? '15m';
  const sliceMs = input.dataset === 'candles' ? CANDLE_INTERVALS[interval] : BASE_SLICE_MS;
  const dayStart = Date.parse(`${input.date}T00:00:00Z`);
  const dayEnd = dayStart + DAY_MS;
  sliceInput(route, input, { fromMs: dayStart, toMs: dayStart + sliceMs }); // the route's own 400s come first
  const coveragePair = input.dataset === 'execution-latency' ? undefined : input.pair;
  const span = await coverageSpan(runtime.store, coveragePair);
  if (!span || dayEnd <= span.earliestMs || dayStart > span.latestMs)
    throw refusal(
      'outside_coverage',
      `the day ${input.date} lies outside the available data${coveragePair ? ` for ${coveragePair}` : ''}; see /api/v1/crypto/coverage`,
      input,
    );
  if (dayEnd > (await closedEndNow(runtime, coveragePair)))
    throw refusal(
      'day_incomplete',
      `the day ${input.date} is not complete yet (its last slice is not final); buy its slices from the per-slice route`,
      input,
    );
  const slices = rangeSlices(dayStart, dayEnd, sliceMs);
  const outcomes = await inOrder(slices, SLICE_CONCURRENCY, async (slice) => {
    const sliceIn = sliceInput(route, input, slice);
    try {
      return { slice, input: sliceIn, prepared: await route.preflight?.({ input: sliceIn, runtime, priceAtomic }) };
    } catch (err) {
      // A refusal before payment carries its zero `charged` (as range-query.ts); anything else fails the call.
      if (!(err instanceof AppError) || !('charged' in err.details)) throw err;
      return { slice, refused: err.code };
    }
  });
  const answered = outcomes.flatMap((o) =>
    o.refused === undefined ? [{ slice: o.slice, input: o.input, prepared: o.prepared }] : [],
  );
  const missing = outcomes.flatMap((o) => (o.refused !== undefined ? [new Date(o.slice.fromMs).toISOString()] : []));
  if (!answered.length) throw refusal('no_data_in_window', `no slice of the day ${input.date} holds data`, input);
  return new HistoryPrepared(input.dataset, route, interval, answered, missing);
}

/** `candles_ETH-USD_15m_2026-03-02.csv` */
function fileName(input: HistoryInput, interval: CandleInterval): string {
  const parts = [input.dataset, input.pair?.replace('/', '-'), input.dataset === 'candles' ? interval : undefined];
  if (input.venue !== undefined) parts.push(input.venue.replace(/[^A-Za-z0-9_-]/g, '_'));
  return `${[...parts.filter((p) => p !== undefined), input.date].join('_')}.${input.format}`;
}

const CONTENT_TYPES: Record<HistoryFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  parquet: 'application/vnd.apache.parquet',
};

export async function historyHandler(
  { input, runtime, priceAtomic }: SkuCall<HistoryInput>,
  prepared: HistoryPrepared,
): Promise<StreamedAnswer> {
  const answers = await inOrder(prepared.answered, SLICE_CONCURRENCY, async (a) =>
    answerValue(await prepared.route.handler({ input: a.input, runtime, priceAtomic }, a.prepared)),
  );
  const rows = historyRows(input.dataset, answers);
  const columns = historyColumns(rows);
  const file = await writeHistoryFile(input.format, columns, rows);
  const manifest: HistoryManifest = HistoryManifestSchema.parse({
    dataset: input.dataset,
    date: input.date,
    ...(input.pair !== undefined ? { pair: input.pair } : {}),
    ...(input.dataset === 'candles' ? { interval: prepared.interval } : {}),
    ...(input.venue !== undefined ? { venue: input.venue } : {}),
    format: input.format,
    file_name: fileName(input, prepared.interval),
    rows: rows.length,
    bytes: file.bytes,
    sha256: file.sha256,
    columns,
    methodology: METHODOLOGY_VERSION,
    slices: prepared.answered.length,
    missing_slices: prepared.missing,
    price_atomic: priceAtomic,
    price_usdc: readableUsdc(priceAtomic),
  });
  const manifestJson = JSON.stringify(manifest);
  return {
    streamed: true,
    contentType: CONTENT_TYPES[input.format],
    headers: {
      'Content-Disposition': `attachment; filename="${manifest.file_name}"`,
      'Content-Length': String(file.bytes),
      'Content-Digest': `sha-256=:${Buffer.from(file.sha256, 'hex').toString('base64')}:`,
      'X-Manifest': Buffer.from(manifestJson).toString('base64'),
      'Cache-Control': 'no-store',
    },
    body: file.open(),
    retryAnswer: { contentType: 'application/json', body: manifestJson },
  };
}
