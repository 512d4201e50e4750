/**
 * Table `detector_state` (sql/<dialect>/002_market_data.sql): the
 * dislocation detector's checkpoint, one row per (consumer group, pair),
 * written with every batch before its offsets are committed. The highest
 * version wins: ClickHouse keeps it by ReplacingMergeTree(version) (read with
 * argMax, so unmerged parts do not matter); DuckDB upserts (INSERT ... ON
 * CONFLICT DO UPDATE only when the version is not lower), the one place
 * where a row is replaced instead of inserted once.
 */
import { join, sql } from '../sql.js';
import type { Store } from '../store.js';
import { inList, num } from './query-helpers.js';

export interface DetectorStateRow {
  scope: string;
  pair: string;
  /** Strictly increasing per (scope, pair) with every state change. */
  version: number;
  saved_at_ms: number;
  /** JSON of the pair's state. */
  state: string;
}

export async function saveDetectorStates(store: Store, rows: DetectorStateRow[]): Promise<void> {
  if (!rows.length) return;
  if (store.adapter === 'clickhouse') {
    await store.insert('detector_state', rows as unknown as Record<string, unknown>[]);
    return;
  }
  const values = join(rows.map((r) => sql`(${r.scope}, ${r.pair}, ${r.version}, ${r.saved_at_ms}, ${r.state})`));
  await store.command(sql`
    INSERT INTO detector_state (scope, pair, version, saved_at_ms, state) VALUES ${values}
    ON CONFLICT (scope, pair) DO UPDATE SET version = excluded.version, saved_at_ms = excluded.saved_at_ms, state = excluded.state
    WHERE excluded.version >= detector_state.version`);
}

/** Latest state per pair of a scope (optionally only some pairs). */
export async function loadDetectorStates(
  store: Store,
  scope: string,
  pairs?: readonly string[],
): Promise<Map<string, { version: number; state: string }>> {
  const out = new Map<string, { version: number; state: string }>();
  if (pairs && !pairs.length) return out;
  const pairFilter = pairs ? sql` AND pair IN ${inList(pairs)}` : sql``;
  const rows = await store.query(sql`
    SELECT pair, max(version) AS v, argMax(state, version) AS s
    FROM detector_state WHERE scope = ${scope}${pairFilter}
    GROUP BY pair`);
  for (const r of rows) out.set(String(r.pair), { version: num(r.v), state: String(r.s) });
  return out;
}
