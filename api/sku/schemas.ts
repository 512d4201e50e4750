/**
 * Schemas shared by several SKUs: the closed set of pairs, dates and times of
 * the telemetry windows, timestamps on the wire, the problem body, and price texts.
 */
import { z } from 'zod';
import { normalisePair, type PairsCatalogue } from '../../core/markets/pairs.js';
import { readableUsdc } from '../payment/usdc-amount.js';

/** `YYYY-MM-DD`, a real calendar day (UTC). */
export const DateParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD')
  .refine((v) => isCalendarDay(v), 'date must be a real calendar day (YYYY-MM-DD)')
  // The JSON Schema adds `format: date` (RFC 3339 full-date: a real calendar day, leap years included), so a
  // schema-valid date is never a 400.
  .meta({ format: 'date' })
  .describe('UTC day, YYYY-MM-DD. Default: the day of the newest stored data.');

/** `HHMM` on a 24-hour clock; the window is the 15-minute slice (or interval bucket) containing it. */
export const TimeParam = z
  .string()
  .regex(/^([01][0-9]|2[0-3])[0-5][0-9]$/, 'time must be HHMM (0000-2359)')
  .describe(
    'UTC start time of the slice, HHMM; default 0000 when `date` is given (floored to the 15-minute slice, or to the interval bucket). Without `date` and `time`: the newest slice with data.',
  );

/** `<BASE>/USD` or `<BASE>-USD`, any case, from the pairs catalogue (closed set); parsed to the catalogue's spelling. */
export function pairParam(pairs: PairsCatalogue) {
  const supported = pairs.pairs.map((p) => p.pair);
  return (
    z
      .string()
      .regex(/^[A-Za-z0-9]{1,15}[/-][Uu][Ss][Dd]$/, 'pair must look like ETH/USD or ETH-USD')
      .transform((value, ctx) => {
        const pair = normalisePair(pairs, value);
        if (pair === undefined) {
          ctx.issues.push({
            code: 'custom',
            input: value,
            message: `unknown pair ${value}; supported: ${supported.join(', ')}`,
          });
          return z.NEVER;
        }
        return pair;
      })
      // The JSON Schema names the closed set itself, in the catalogue's spelling (the validator also takes any
      // case): a schema-valid pair is never a 400.
      .meta({ pattern: `^(?:${supported.map((p) => p.split('/')[0]!).join('|')})[/-]USD$` })
      .describe(`Token pair, \`<BASE>/USD\` or \`<BASE>-USD\`. Supported: ${supported.join(', ')}.`)
  );
}

/** An ISO 8601 UTC timestamp on the wire. */
export const IsoTimestamp = z.iso.datetime({ offset: false }).describe('ISO 8601 UTC timestamp');

/** `source` of every market-data response: venues, and whether the data is live or simulated. */
export const SourceField = z
  .string()
  .min(1)
  .describe(
    'Where the data came from: the venues, then `(live)`, `(simulated)` or `(live+simulated)`, e.g. `coinbase+uniswap_v3_base (simulated)`.',
  );

/** The one error shape (RFC 9457 problem details, api/middleware/problem-errors.ts). */
export const ProblemSchema = z
  .object({
    type: z.string().describe('URI of the problem type'),
    title: z.string(),
    status: z.number().int(),
    code: z
      .string()
      .describe(
        'Stable machine-readable code, e.g. `invalid_parameter`, `outside_coverage`, `payment_required`, `sku_unavailable`',
      ),
    detail: z.string(),
    field: z.string().optional().describe('The offending parameter (first one), when there is one'),
    request_id: z.string().optional(),
    charged: z.string().optional().describe('On pre-flight rejections: the text of the zero charge'),
  })
  .loose();

/** What a pre-flight rejection (404, 503) and an unavailable SKU report as `charged`. */
export const ZERO_CHARGE_TEXT = '0 USDC (pre-flight rejection, no charge)';

/** "15000" -> "0.015 USDC"; free routes: "free". */
export function priceText(priceAtomic: string): string {
  return priceAtomic === '0' ? 'free' : `${readableUsdc(priceAtomic)} USDC`;
}

function isCalendarDay(v: string): boolean {
  const ms = Date.parse(`${v}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === v;
}
