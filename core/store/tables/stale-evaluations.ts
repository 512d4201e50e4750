/**
 * Table `stale_evaluations` (sql/<dialect>/005_fresh_legs.sql): one row per
 * detector evaluation NOT made because a leg was older than its venue's
 * maximum quote age at the evaluation's event time (the freshness rule,
 * aggregate/dislocation-detector.ts; docs/metrics.md "Fresh legs only").
 * Where a fresh pair of legs gives a spread sample, a stale one gives this
 * row, with the same id (`<quote event id>|<counterpart venue>`), so a
 * replay writes it once. Counted per slice as `stale_legs` by the
 * dislocations route and in total by the coverage route.
 */
import { z } from 'zod';
import { DataSource, VenueKind } from '../../events/market.js';
import { join, sql, type Sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { intDiv, num, timeRange } from './query-helpers.js';

export const StaleEvaluation = z.object({
  /** `<quote event id>|<counterpart venue>`: the sample_id the evaluation would have had. */
  evaluation_id: z.string(),
  pair: z.string(),
  /** Event time of the evaluation: the newer leg's event time. */
  ts_ms: z.number().int(),
  /** The leg too old to compare, and its kind. */
  stale_venue: z.string(),
  stale_venue_kind: VenueKind,
  /** The other (fresh) leg's venue. */
  fresh_venue: z.string(),
  /** Age of the stale leg at ts_ms, and the maximum of its venue then (ms). */
  leg_age_ms: z.number().int().nonnegative(),
  max_age_ms: z.number().int().nonnegative(),
  quote_event_id: z.string(),
  counterpart_event_id: z.string(),
  source: DataSource,
  /** The methodology version of the detector that skipped it (aggregate/methodology.ts). */
  methodology: z.string(),
});
export type StaleEvaluation = z.output<typeof StaleEvaluation>;

/** The stored row: the record plus `ts` (the second-precision DateTime of ts_ms). */
export const staleEvaluationRow = (s: StaleEvaluation): Row =>
  ({
    evaluation_id: s.evaluation_id,
    pair: s.pair,
    ts: new Date(s.ts_ms),
    ts_ms: s.ts_ms,
    stale_venue: s.stale_venue,
    stale_venue_kind: s.stale_venue_kind,
    fresh_venue: s.fresh_venue,
    leg_age_ms: s.leg_age_ms,
    max_age_ms: s.max_age_ms,
    quote_event_id: s.quote_event_id,
    counterpart_event_id: s.counterpart_event_id,
    source: s.source,
    methodology: s.methodology,
  }) satisfies Record<keyof StaleEvaluation | 'ts', unknown>;

export async function insertStaleEvaluations(store: Store, rows: readonly StaleEvaluation[]): Promise<void> {
  if (!rows.length) return;
  await store.insert('stale_evaluations', rows.map(staleEvaluationRow));
}

/**
 * `stale_legs` of one pair per slice of `sliceMs` over [fromMs, toMs) (slice
 * start ms -> count; slices without any are absent). Distinct ids, not
 * rows: a redelivered batch writes its rows again, and ClickHouse may not
 * have merged them yet (count DISTINCT needs no FINAL).
 */
export async function staleLegsBySlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
  sliceMs: number,
): Promise<Map<number, number>> {
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`ts_ms`, sliceMs)} AS s, count(DISTINCT evaluation_id) AS n
    FROM stale_evaluations
    WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
    GROUP BY s`);
  return new Map(rows.map((r) => [num(r.s) * sliceMs, num(r.n)]));
}

/**
 * Stale evaluations stored, of one pair or of all, in [fromMs, toMs) or ever:
 * a window's `stale_legs`, the coverage route's `total_stale_legs`.
 */
export async function countStaleLegs(
  store: Store,
  filter: { pair?: string | undefined; fromMs?: number; toMs?: number } = {},
): Promise<number> {
  const conditions: Sql[] = [];
  if (filter.pair !== undefined) conditions.push(sql`pair = ${filter.pair}`);
  if (filter.fromMs !== undefined && filter.toMs !== undefined)
    conditions.push(timeRange(sql`ts`, sql`ts_ms`, filter.fromMs, filter.toMs));
  const where = conditions.length ? sql` WHERE ${join(conditions, ' AND ')}` : sql``;
  const [row] = await store.query(sql`SELECT count(DISTINCT evaluation_id) AS n FROM stale_evaluations${where}`);
  return row ? num(row.n) : 0;
}
