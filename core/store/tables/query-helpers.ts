/** Small SQL fragments and row readers shared by the market-data table modules (both dialects). */
import { dialect, join, sql, type Sql } from '../sql.js';

/** The telemetry slice: 15 minutes, UTC-aligned. Longer candles are built from these. */
export const BASE_SLICE_MS = 900_000;

/** ClickHouse returns (U)Int64 as strings, DuckDB as numbers: read either. Null stays null. */
export function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' || typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return Number.NaN;
}

export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** `(a, b, c)` for `x IN ...`; the caller handles an empty list (it would be invalid SQL). */
export function inList(values: readonly string[]): Sql {
  if (!values.length) throw new TypeError('inList: empty list');
  return sql`(${join(values.map((v) => sql`${v}`))})`;
}

/** Integer division of an integer expression by a positive integer constant. */
export function intDiv(expression: Sql, divisor: number): Sql {
  if (!Number.isSafeInteger(divisor) || divisor <= 0)
    throw new TypeError(`intDiv: divisor must be a positive integer, got ${divisor}`);
  return dialect({ clickhouse: sql`intDiv(${expression}, ${divisor})`, duckdb: sql`(${expression} // ${divisor})` });
}

/**
 * `[fromMs, toMs)` on a table with a second-precision `ts` column (partition
 * and index pruning) and an exact `*_ms` column.
 */
export function timeRange(tsColumn: Sql, msColumn: Sql, fromMs: number, toMs: number): Sql {
  return sql`${tsColumn} >= ${new Date(Math.floor(fromMs / 1000) * 1000)} AND ${tsColumn} <= ${new Date(Math.ceil(toMs / 1000) * 1000)} AND ${msColumn} >= ${fromMs} AND ${msColumn} < ${toMs}`;
}

/** `'live'`, `'simulated'`, or `'live+simulated'` from the distinct sources of a result (undefined when empty). */
export function sourceLabel(sources: Iterable<unknown>): string | undefined {
  const set = new Set<string>();
  for (const s of sources) if (typeof s === 'string' && s) set.add(s);
  if (!set.size) return undefined;
  return [...set].sort().join('+');
}

/**
 * Items (time-ordered by `time`) split among consecutive slices, order kept;
 * every slice appears, with an empty list when nothing fell in it.
 */
export function bySlice<T>(
  slices: readonly { fromMs: number; toMs: number }[],
  items: readonly T[],
  time: (item: T) => number,
): [{ fromMs: number; toMs: number }, T[]][] {
  const out = slices.map((s): [{ fromMs: number; toMs: number }, T[]] => [s, []]);
  let i = 0;
  for (const item of items) {
    const t = time(item);
    while (i < out.length && t >= out[i]![0].toMs) i += 1;
    if (i < out.length && t >= out[i]![0].fromMs) out[i]![1].push(item);
  }
  return out;
}
