/**
 * The rows of a bulk history file, from the per-slice answers of the day
 * (each exactly what the per-slice route serves for that window):
 *
 *   - candles, execution-latency, shadow-capacity: one row per slice answer;
 *   - dislocations: one row per item of each slice's `dislocations`, as served
 *     (the slice's own fields are in the manifest, not repeated per row).
 *
 * Flattening rule: a nested object's fields become columns named by the path
 * joined with `_` (`legs.cex.event_id` -> `legs_cex_event_id`,
 * `costs.gas_usd` -> `costs_gas_usd`); an array (shadow-capacity's `pairs`) is
 * one column holding its JSON text; a value is kept exactly as served (numbers
 * with their rounding, strings, booleans; a missing or null field is null).
 * Columns are in the order of their first appearance across the day.
 *
 * Column types (the Parquet schema, and the manifest's): BOOLEAN, DOUBLE
 * (every JSON number), VARCHAR (strings, JSON arrays, a column of mixed or
 * only null values).
 */
import type { HistoryDataset } from './bulk-terms.js';

export type Cell = string | number | boolean | null;
export type HistoryRow = Record<string, Cell>;
export type ColumnType = 'BOOLEAN' | 'DOUBLE' | 'VARCHAR';
export interface Column {
  name: string;
  type: ColumnType;
}

/** One served object flattened (see the module comment). */
export function flatten(value: Record<string, unknown>, prefix = '', out: HistoryRow = {}): HistoryRow {
  for (const [key, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}_${key}` : key;
    if (v === null || v === undefined) out[name] = null;
    else if (Array.isArray(v)) out[name] = JSON.stringify(v);
    else if (typeof v === 'object') flatten(v as Record<string, unknown>, name, out);
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[name] = v;
    else out[name] = JSON.stringify(v);
  }
  return out;
}

/** The rows of one dataset from the day's slice answers (oldest first). */
export function historyRows(dataset: HistoryDataset, answers: readonly unknown[]): HistoryRow[] {
  if (dataset !== 'dislocations') return answers.map((a) => flatten(a as Record<string, unknown>));
  return answers.flatMap((a) =>
    ((a as { dislocations?: Record<string, unknown>[] }).dislocations ?? []).map((item) => flatten(item)),
  );
}

const typeOf = (v: Cell): ColumnType | undefined =>
  v === null ? undefined : typeof v === 'boolean' ? 'BOOLEAN' : typeof v === 'number' ? 'DOUBLE' : 'VARCHAR';

/** The columns of the rows, in order of first appearance, typed from their values. */
export function historyColumns(rows: readonly HistoryRow[]): Column[] {
  const types = new Map<string, ColumnType | undefined | 'MIXED'>();
  for (const row of rows)
    for (const [name, v] of Object.entries(row)) {
      const t = typeOf(v);
      const known = types.get(name);
      if (!types.has(name) || known === undefined) types.set(name, t);
      else if (t !== undefined && t !== known) types.set(name, 'MIXED');
    }
  return [...types].map(([name, t]) => ({ name, type: t === 'BOOLEAN' || t === 'DOUBLE' ? t : 'VARCHAR' }));
}
