/**
 * The precision every served telemetry number is rounded to (docs/metrics.md,
 * "Precision"): the store keeps full doubles, the wire carries what the
 * measurement supports, so `spread_bps` reads 0.5, not 0.5000000000004823.
 *
 * | kind | rounding | fields |
 * |---|---|---|
 * | spread, bps | 2 decimals | candle OHLC, dislocation spreads and peaks (nonzero: see below) |
 * | fine bps | 4 decimals | impact-simulation spread_bps, slippage_bps (books tighter than 0.1 bp) |
 * | USD amount | cents | profits, depths, capacities, volumes, capital |
 * | price, USD per base unit | 6 significant digits, never coarser than a cent | buy/sell prices, mid, bid/ask, fill price |
 * | base units | 8 significant digits | impact-simulation sizes in base units |
 * | probability, ratio | 4 decimals | fill_ratio, fill probabilities |
 * | percent | 2 decimals | fill_rate_pct, capture_rate_pct |
 * | milliseconds (latency) | 1 decimal | latency statistics |
 * Counts, ids, durations in whole ms and timestamps are exact. A dislocation's
 * spreads and profits (and their peaks) never read 0 unless they are 0: a
 * nonzero value the rounding would serve as 0 keeps 2 significant digits
 * instead (`nonzero`), so an open opportunity is never shown at
 * `net_spread_bps: 0` or `est_profit_usd: 0`.
 */
import type { z } from 'zod';

/** `value` rounded half away from zero to `decimals` decimals (no -0). */
export function decimals(value: number, places: number): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** places;
  const r = (Math.sign(value) * Math.round(Math.abs(value) * f)) / f;
  return r === 0 ? 0 : r;
}

/** `value` to `digits` significant digits (no -0). */
export function significant(value: number, digits: number): number {
  if (!Number.isFinite(value) || value === 0) return value === 0 ? 0 : value;
  return Number(value.toPrecision(digits));
}

type Rounding = (v: number) => number;

/**
 * `round`, except that a nonzero value it would serve as 0 keeps 2
 * significant digits (0.0012 bps stays 0.0012): still within half a unit of
 * `round` of the stored value, and never a 0 for something that is not.
 */
export const nonzero =
  (round: Rounding): Rounding =>
  (v) => {
    const r = round(v);
    return r === 0 && v !== 0 && Number.isFinite(v) ? significant(v, 2) : r;
  };

export const PRECISION = {
  bps: (v: number) => decimals(v, 2),
  fineBps: (v: number) => decimals(v, 4),
  usd: (v: number) => decimals(v, 2),
  /** 6 significant digits, or cents when that is finer (prices of 10,000 USD and more). */
  price: (v: number) => (Math.abs(v) >= 1e4 ? decimals(v, 2) : significant(v, 6)),
  base: (v: number) => significant(v, 8),
  probability: (v: number) => decimals(v, 4),
  pct: (v: number) => decimals(v, 2),
  ms: (v: number) => decimals(v, 1),
  /** `bps`, never 0 for a nonzero value (dislocation spreads). */
  bpsNonzero: nonzero((v) => decimals(v, 2)),
  /** `usd`, never 0 for a nonzero value (dislocation profits). */
  usdNonzero: nonzero((v) => decimals(v, 2)),
} as const;

/** A nullable number through one of the roundings. */
export const orNull =
  (round: (v: number) => number) =>
  (v: number | null): number | null =>
    v === null ? null : round(v);

type Serve = (value: unknown) => unknown;

/**
 * The served form of an output schema (a zod object) from a value that
 * carries its fields under the same names, unrounded (what the table module
 * reads): the schema's keys in the schema's order (the order of the served
 * JSON), nested objects and arrays alike, each number rounded as `roundings`
 * says for its key (null stays null), every other value as it is; a key the
 * value lacks is left out. The value's type must carry every field of the
 * output with its type, so the stored shape and the served one cannot drift
 * apart.
 */
export function servedFields<S extends z.ZodRawShape>(
  schema: z.ZodObject<S>,
  roundings: Readonly<Record<string, Rounding>>,
): (value: z.output<z.ZodObject<S>>) => z.output<z.ZodObject<S>> {
  return servingOf(schema, undefined, roundings) as (value: z.output<z.ZodObject<S>>) => z.output<z.ZodObject<S>>;
}

function servingOf(
  schema: z.ZodType,
  round: Rounding | undefined,
  roundings: Readonly<Record<string, Rounding>>,
): Serve {
  const def = schema._zod.def as {
    type: string;
    shape?: Record<string, z.ZodType>;
    element?: z.ZodType;
    innerType?: z.ZodType;
  };
  switch (def.type) {
    case 'object': {
      const fields = Object.entries(def.shape!).map(
        ([key, field]) => [key, servingOf(field, roundings[key], roundings)] as const,
      );
      return (value) => {
        const out: Record<string, unknown> = {};
        for (const [key, serve] of fields) {
          const v = (value as Record<string, unknown>)[key];
          if (v !== undefined) out[key] = serve(v);
        }
        return out;
      };
    }
    case 'array': {
      const serve = servingOf(def.element!, round, roundings);
      return (value) => (value as unknown[]).map((v) => serve(v));
    }
    case 'nullable':
    case 'optional': {
      const serve = servingOf(def.innerType!, round, roundings);
      return (value) => (value === null || value === undefined ? value : serve(value));
    }
    default:
      return round ? (value) => (typeof value === 'number' ? round(value) : value) : (value) => value;
  }
}
