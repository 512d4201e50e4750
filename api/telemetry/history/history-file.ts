/**
 * A bulk history file written to a private temp directory, read back and the
 * directory removed before the answer is sent (so a call whose payment fails,
 * and whose body is never read, leaves nothing behind); the bytes are sent as a
 * stream. One dataset-day is small (14-103 kB in CSV measured for a full day).
 *
 *   - CSV (RFC 4180): a header row of the column names, then one line per row,
 *     CRLF line ends; a field holding `,` `"` CR or LF is quoted with `"`
 *     doubled; null is an empty field, a boolean `true`/`false`, a number as
 *     JSON writes it (the served rounding). Hand-written: these few lines are
 *     the whole of RFC 4180's writing rules, no dependency for them.
 *   - Parquet: written by DuckDB (`@duckdb/node-api`, as scripts/export.ts)
 *     from the rows as NDJSON, read with the columns' declared types (no type
 *     inference, so a timestamp stays the served string).
 *
 * The file's sha-256 (hex) and size are computed from the written file.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Cell, Column, HistoryRow } from './history-rows.js';

export type HistoryFormat = 'csv' | 'parquet';

export interface WrittenFile {
  sha256: string;
  bytes: number;
  /** The file's bytes as a stream. */
  open(): Readable;
}

function csvField(v: Cell): string {
  if (v === null) return '';
  const text = typeof v === 'string' ? v : String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvText(columns: readonly Column[], rows: readonly HistoryRow[]): string {
  const lines = [columns.map((c) => csvField(c.name)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c.name] ?? null)).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A cell as the Parquet column's declared type reads it from NDJSON. */
function typedCell(v: Cell, column: Column): Cell {
  if (v === null || column.type !== 'VARCHAR') return v;
  return typeof v === 'string' ? v : String(v);
}

async function writeParquet(dir: string, out: string, columns: readonly Column[], rows: readonly HistoryRow[]) {
  const ndjson = join(dir, 'rows.ndjson');
  await writeFile(
    ndjson,
    rows
      .map((row) => JSON.stringify(Object.fromEntries(columns.map((c) => [c.name, typedCell(row[c.name] ?? null, c)]))))
      .join('\n'),
  );
  const struct = `{${columns.map((c) => `${sqlText(c.name)}: ${sqlText(c.type)}`).join(', ')}}`;
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const select = rows.length
      ? `SELECT * FROM read_json(${sqlText(ndjson)}, format = 'newline_delimited', columns = ${struct})`
      : // DuckDB cannot read an empty NDJSON file: an empty table of the columns instead.
        `SELECT ${columns.length ? columns.map((c) => `CAST(NULL AS ${c.type}) AS "${c.name.replace(/"/g, '""')}"`).join(', ') : '1 AS empty'} LIMIT 0`;
    await connection.run(`COPY (${select}) TO ${sqlText(out)} (FORMAT PARQUET)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

export async function writeHistoryFile(
  format: HistoryFormat,
  columns: readonly Column[],
  rows: readonly HistoryRow[],
): Promise<WrittenFile> {
  const dir = await mkdtemp(join(tmpdir(), 'bulk-history-'));
  try {
    const file = join(dir, `history.${format}`);
    if (format === 'csv') await writeFile(file, csvText(columns, rows));
    else await writeParquet(dir, file, columns, rows);
    const bytes = await readFile(file);
    return {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.length,
      open: () => Readable.from([bytes]),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
