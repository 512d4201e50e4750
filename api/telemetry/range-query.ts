/**
 * Range queries on the windowed telemetry routes (spread-candles,
 * dislocations, execution-latency, shadow-capacity: every route with a day
 * block): `from` and `to` instead of `date`/`time` buy consecutive slices in
 * one call. The route's own single-slice pre-flight and handler answer each
 * slice, so a slice in a range answer is exactly what the route answers for
 * that slice alone (every field, rounding included).
 *
 * Input (validated before any challenge; a bad range is 400, never charged):
 *   - `from`, `to`: ISO 8601 UTC timestamps (`2026-03-02T09:00:00Z`), both or
 *     neither, never with `date` or `time` (400 `invalid_parameter`,
 *     `missing_parameter`); the range is [from, to).
 *   - both on a boundary of the route's slice (15 minutes; spread-candles: its
 *     `interval` bucket), `to` after `from`, at most MAX_RANGE_SLICES slices
 *     (400 `invalid_range`, `field` the offending bound).
 *
 * Coverage and price: the pre-flight runs the route's pre-flight for every
 * slice. Slices it refuses (outside coverage, or inside it without data) are
 * not sold: the answer lists them in `missing` and the call is charged only for
 * the slices it answers (per-slice price x answered slices, capped at the spec's
 * 0.2 USD: api/sku/call-price.ts). So a range partly outside coverage is
 * answered for its covered part and charged for it alone. A range without any
 * answered slice is refused like a single slice, before any challenge, never
 * charged: 404 `outside_coverage` when every slice lies outside coverage, else
 * 404 `no_data_in_window` (`field: from`).
 *
 * The range answer: `from`, `to`, `slice_count`, `charged_slices`, the
 * completeness of the whole range (`complete`: every slice is final, the last
 * one included; `as_of`: the newest of the slices'; `coverage_pct`: the mean
 * of the slices' `coverage_pct`, a missing slice counting 0, 2 decimals),
 * `slices` (the answered slices' single answers, oldest first) and `missing`.
 *
 * Work per call is bounded by MAX_RANGE_SLICES single-slice computations, run
 * SLICE_CONCURRENCY at a time.
 */
import { z } from 'zod';
import { AppError } from '../../core/errors.js';
import type { PricedPreparation } from '../sku/call-price.js';
import { answerValue } from '../sku/json-text.js';
import { IsoTimestamp, ZERO_CHARGE_TEXT } from '../sku/schemas.js';
import type { SkuCall, SkuDefinition } from '../sku/sku.js';
import { closedEndNow, COMPLETENESS_FIELDS } from './completeness.js';
import { PRECISION as P } from './precision.js';
import type { SliceBlockFiller } from './slice-blocks.js';
import type { TimeWindow } from './window.js';

/** The longest range, in slices of the route (24 x 15 minutes: six hours; spread-candles 1d: 24 days). */
export const MAX_RANGE_SLICES = 24;
/** Single-slice computations of a range run at once (each is a few store reads). */
const SLICE_CONCURRENCY = 4;

/** What a range-capable SKU declares (discovery reads it: rangeTermsOf). */
export interface RangeTerms {
  maxSlices: number;
}

/** The range parameters added to a windowed route's input. */
export interface RangeParams {
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * The published schema says a bound is an RFC 3339 date-time (`format`) and no more: its slice alignment depends on
 * the candle interval, and it goes with the other bound (neither is a property's own constraint); the texts say it.
 * No `pattern` (z.iso's is long): the Bazaar declaration of a route must fit its header budget.
 */
const bound = (which: 'from' | 'to') =>
  z.iso
    .datetime({ offset: false })
    .meta({ format: 'date-time', pattern: undefined })
    .describe(
      which === 'from'
        ? `Range start (UTC, e.g. 2026-03-02T09:00:00Z), on a slice boundary; with \`to\`, instead of \`date\`/\`time\`: up to ${MAX_RANGE_SLICES} slices, charged per slice answered.`
        : 'Range end (UTC, exclusive), on a slice boundary; with `from`.',
    );

const issue = (code: string, path: 'from' | 'to', message: string) => ({
  code: 'custom' as const,
  path: [path],
  message,
  params: { code },
});

/** The slices a validated range names (consecutive windows of the route's slice). */
export function rangeSlices(fromMs: number, toMs: number, sliceMs: number): TimeWindow[] {
  const out: TimeWindow[] = [];
  for (let t = fromMs; t < toMs; t += sliceMs) out.push({ fromMs: t, toMs: t + sliceMs });
  return out;
}

/** A slice named the way the route's single-slice input names it: `date` and `time` of its start. */
function sliceInput<I extends object>(input: I, slice: TimeWindow): I {
  const iso = new Date(slice.fromMs).toISOString();
  return { ...input, from: undefined, to: undefined, date: iso.slice(0, 10), time: iso.slice(11, 16).replace(':', '') };
}

/** What the range pre-flight hands the range handler. */
class RangePrepared implements PricedPreparation {
  constructor(
    readonly slices: readonly TimeWindow[],
    readonly answered: readonly { slice: TimeWindow; prepared: unknown }[],
    readonly missing: readonly { slice_start: string; slice_end: string; code: string }[],
  ) {}

  get priceUnits(): number {
    return this.answered.length;
  }
}

/** Runs `work` over `items`, `limit` at a time, results in order (hand-written: six lines, no dependency for it). */
export async function inOrder<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The published schema of a range answer, around the route's single answer. */
function rangeOutput(single: z.ZodType) {
  return z.object({
    from: IsoTimestamp.describe('Start of the range'),
    to: IsoTimestamp.describe('End of the range (exclusive)'),
    slice_count: z.number().int().describe('Slices the range names'),
    charged_slices: z
      .number()
      .int()
      .describe('Slices answered, and charged: the price is the per-slice price x this (capped at 0.2 USD)'),
    ...COMPLETENESS_FIELDS,
    slices: z.array(single).describe('Each answered slice as the route answers it alone (`date`/`time` of its start)'),
    missing: z
      .array(
        z.object({
          slice_start: IsoTimestamp,
          slice_end: IsoTimestamp,
          code: z.string().describe('Why it is not served: `outside_coverage` or `no_data_in_window`; not charged'),
        }),
      )
      .describe('Slices of the range without an answer, not charged'),
  });
}

/**
 * The SKU with range queries: its input takes `from`/`to`, its output is a
 * single answer or a range answer, and a call with a range is pre-flighted and
 * answered slice by slice (see the module comment). A call without a range
 * takes the SKU's own path untouched.
 */
export function withRangeQueries<I extends object, O, P>(
  sku: SkuDefinition<I, O, P>,
  filler: SliceBlockFiller<I>,
): SkuDefinition<I & RangeParams, unknown, unknown> & { range: RangeTerms } {
  const base = sku.input as unknown as z.ZodObject;
  const input = base.extend({ from: bound('from').optional(), to: bound('to').optional() }).superRefine((v, ctx) => {
    const value = v as I & RangeParams & { date?: string; time?: string };
    if (value.from === undefined && value.to === undefined) return;
    if (value.from === undefined || value.to === undefined) {
      const absent = value.from === undefined ? 'from' : 'to';
      ctx.addIssue(issue('missing_parameter', absent, `required with \`${absent === 'from' ? 'to' : 'from'}\``));
      return;
    }
    if (value.date !== undefined || value.time !== undefined) {
      ctx.addIssue(
        issue('invalid_parameter', 'from', 'a range (`from`/`to`) is sent instead of `date`/`time`, never with them'),
      );
      return;
    }
    const sliceMs = filler.sliceMs(value);
    const fromMs = Date.parse(value.from);
    const toMs = Date.parse(value.to);
    const minutes = sliceMs / 60_000;
    if (fromMs % sliceMs !== 0)
      ctx.addIssue(issue('invalid_range', 'from', `must be on a ${minutes}-minute slice boundary (UTC)`));
    else if (toMs % sliceMs !== 0)
      ctx.addIssue(issue('invalid_range', 'to', `must be on a ${minutes}-minute slice boundary (UTC)`));
    else if (toMs <= fromMs) ctx.addIssue(issue('invalid_range', 'to', 'must be after `from`'));
    else if ((toMs - fromMs) / sliceMs > MAX_RANGE_SLICES)
      ctx.addIssue(
        issue(
          'invalid_range',
          'to',
          `the range holds ${(toMs - fromMs) / sliceMs} slices of ${minutes} minutes; at most ${MAX_RANGE_SLICES} a call`,
        ),
      );
  });
  const single = sku.output as unknown as z.ZodType;
  const preflight = sku.preflight?.bind(sku);
  const handler = sku.handler.bind(sku);

  const isRange = (i: I & RangeParams): i is I & Required<RangeParams> => i.from !== undefined && i.to !== undefined;

  return {
    ...sku,
    input: input as unknown as SkuDefinition<I & RangeParams, unknown, unknown>['input'],
    output: z.union([single, rangeOutput(single)]) as unknown as SkuDefinition<I, unknown, unknown>['output'],
    range: { maxSlices: MAX_RANGE_SLICES },

    async preflight(call: SkuCall<I & RangeParams>): Promise<unknown> {
      if (!isRange(call.input)) return preflight?.(call);
      const fromMs = Date.parse(call.input.from);
      const toMs = Date.parse(call.input.to);
      const slices = rangeSlices(fromMs, toMs, filler.sliceMs(call.input));
      const outcomes = await inOrder(slices, SLICE_CONCURRENCY, async (slice) => {
        try {
          return { slice, prepared: await preflight?.({ ...call, input: sliceInput(call.input, slice) }) };
        } catch (err) {
          // A refusal before payment carries its zero `charged` (api/paid-call/preflight-rejection.ts); anything else
          // is a failure of the whole call.
          if (!(err instanceof AppError) || !('charged' in err.details)) throw err;
          return { slice, refused: err.code };
        }
      });
      const answered = outcomes.flatMap((o) => ('prepared' in o ? [{ slice: o.slice, prepared: o.prepared }] : []));
      const missing = outcomes.flatMap((o) =>
        'refused' in o && o.refused !== undefined
          ? [
              {
                slice_start: new Date(o.slice.fromMs).toISOString(),
                slice_end: new Date(o.slice.toMs).toISOString(),
                code: o.refused,
              },
            ]
          : [],
      );
      if (!answered.length) {
        const outside = missing.every((m) => m.code === 'outside_coverage');
        const span = `${call.input.from} - ${call.input.to}`;
        throw new AppError(
          outside ? 'outside_coverage' : 'no_data_in_window',
          outside
            ? `the range ${span} lies outside the available data; see /api/v1/crypto/coverage`
            : `no slice of the range ${span} holds data`,
          404,
          { field: 'from', charged: ZERO_CHARGE_TEXT, from: call.input.from, to: call.input.to },
        );
      }
      return new RangePrepared(slices, answered, missing);
    },

    async handler(call: SkuCall<I & RangeParams>, prepared: unknown): Promise<unknown> {
      if (!(prepared instanceof RangePrepared) || !isRange(call.input)) return handler(call, prepared as P);
      const range = call.input;
      const [answers, closedEnd] = await Promise.all([
        inOrder(prepared.answered, SLICE_CONCURRENCY, async ({ slice, prepared: p }) =>
          answerValue(await handler({ ...call, input: sliceInput(range, slice) }, p as P)),
        ),
        closedEndNow(call.runtime, filler.coveragePair(range)),
      ]);
      const completeness = answers.map((a) => a as { complete: boolean; as_of: string; coverage_pct: number });
      const last = prepared.slices[prepared.slices.length - 1]!;
      return {
        from: new Date(prepared.slices[0]!.fromMs).toISOString(),
        to: new Date(last.toMs).toISOString(),
        slice_count: prepared.slices.length,
        charged_slices: prepared.answered.length,
        complete: completeness.every((c) => c.complete) && last.toMs <= closedEnd,
        as_of: completeness.map((c) => c.as_of).reduce((a, b) => (b > a ? b : a)),
        coverage_pct: P.pct(completeness.reduce((sum, c) => sum + c.coverage_pct, 0) / prepared.slices.length),
        slices: answers,
        missing: prepared.missing,
      };
    },
  };
}

/** A SKU's range terms, when it takes range queries (discovery documents state them). */
export function rangeTermsOf(sku: object): RangeTerms | undefined {
  return (sku as { range?: RangeTerms }).range;
}
