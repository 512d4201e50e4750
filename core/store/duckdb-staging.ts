/**
 * Idempotent batch inserts of the DuckDB store. The rows (column-wise data
 * chunks) go first straight into the target through an Appender: one
 * statement, atomic, refused whole by the primary key when one of its keys is
 * already stored or repeated inside the batch. Only then is the batch
 * appended into a TEMP staging table of its target and moved by `INSERT OR
 * IGNORE INTO t SELECT ... FROM staging`, so existing keys and duplicates
 * inside the batch are skipped (the first version wins). Both paths store the
 * same rows: the fast one only when no key conflicts, where OR IGNORE skips
 * nothing. The fast path is why the embedded default idles cheaply: OR IGNORE
 * costs 3-4 times a plain append per statement, and most batches are small
 * (docs/scaling.md, "Idle cost"). A batch that omits a column with a DEFAULT
 * takes the staging path (the appender would write NULL, not the default).
 * Every value is encoded before anything is written, so a bad value refuses
 * the whole batch; the staging table is emptied after each batch whatever
 * happened. Runs on the store's one writer connection; the store serializes
 * the calls and calls drop() when a table may have changed.
 */
import {
  DuckDBDataChunk,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { encoderFor, type Encoder } from './duckdb-values.js';
import { ident } from './sql.js';
import type { Row } from './store.js';

/** Rows per data chunk handed to the appender (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

interface Stage {
  name: string;
  columns: string[];
  types: DuckDBType[];
  index: Map<string, number>;
  encoders: Encoder[];
  /** Target columns with a DEFAULT: a batch that omits one of them cannot be appended straight into the target. */
  defaulted: string[];
}

export class DuckDbStaging {
  /** TEMP staging tables (per writer connection), keyed by target table. */
  private readonly stages = new Map<string, Stage>();

  constructor(private readonly writer: DuckDBConnection) {}

  /** Drops every staging table (their target's columns may have changed). */
  async drop(): Promise<void> {
    for (const stage of this.stages.values()) await this.writer.run(`DROP TABLE IF EXISTS temp.main.${stage.name}`);
    this.stages.clear();
  }

  /** Appends `rows` to `table` (a rendered identifier), skipping keys it already holds. */
  async append(table: string, rows: Row[]): Promise<void> {
    const { writer } = this;
    const stage = await this.stageFor(table);
    const given = providedColumns(rows);
    for (const column of given) {
      if (!stage.index.has(column)) throw new Error(`table ${table} has no column ${JSON.stringify(column)}`);
    }
    // Encode every value first: a bad value refuses the batch before anything is staged.
    const chunks: DuckDBDataChunk[] = [];
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const slice = rows.slice(start, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(stage.types, slice.length);
      chunk.setColumns(
        stage.columns.map((column, c) => {
          const encode = stage.encoders[c]!;
          const values: DuckDBValue[] = new Array(slice.length);
          for (let r = 0; r < slice.length; r++) {
            const value = slice[r]![column];
            values[r] = value === null || value === undefined ? null : encode(value, column);
          }
          return values;
        }),
      );
      chunks.push(chunk);
    }
    // `db.table` names (a ClickHouse-style database) keep the statement path: the appender takes schema and catalog apart.
    const straight = !table.includes('.') && stage.defaulted.every((column) => given.includes(column));
    if (straight && (await this.appendStraight(table, chunks))) return;
    const list = given.map((c) => ident(c).render('duckdb')).join(', ');
    try {
      const appender: DuckDBAppender = await writer.createAppender(stage.name, 'main', 'temp');
      try {
        for (const chunk of chunks) appender.appendDataChunk(chunk);
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      await writer.run(`INSERT OR IGNORE INTO ${table} (${list}) SELECT ${list} FROM temp.main.${stage.name}`);
    } finally {
      // The staging table is empty between batches, whatever happened.
      await writer.run(`DELETE FROM temp.main.${stage.name}`);
    }
  }

  /**
   * Appends the chunks straight into the target in one flush (one statement: all or nothing). False when the
   * engine refused them (a key already stored or repeated in the batch): nothing was written, the caller takes
   * the OR IGNORE path, which skips exactly those rows.
   */
  private async appendStraight(table: string, chunks: DuckDBDataChunk[]): Promise<boolean> {
    const appender = await this.writer.createAppender(table);
    try {
      for (const chunk of chunks) appender.appendDataChunk(chunk);
      appender.flushSync();
      appender.closeSync();
      return true;
    } catch {
      // A refused flush leaves its rows buffered: closing retries them and throws again; nothing is written.
      try {
        appender.closeSync();
      } catch {
        /* the same refusal */
      }
      return false;
    }
  }

  private async stageFor(table: string): Promise<Stage> {
    let stage = this.stages.get(table);
    if (stage) return stage;
    const name = `__stage_${table.replace('.', '__')}`;
    await this.writer.run(`CREATE OR REPLACE TEMP TABLE ${name} AS SELECT * FROM ${table} LIMIT 0`);
    const probe = await this.writer.runAndReadAll(`SELECT * FROM temp.main.${name} LIMIT 0`);
    const columns = probe.columnNames();
    const types = probe.columnTypes();
    // ident()'s closed character set: the name is safe inside a string literal. (`db.table`: no straight path.)
    const defaulted = table.includes('.')
      ? []
      : (
          await this.writer.runAndReadAll(
            `SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = current_schema() AND table_name = '${table}' AND column_default IS NOT NULL`,
          )
        )
          .getRows()
          .map((r) => String(r[0]));
    stage = {
      name,
      columns,
      types,
      index: new Map(columns.map((c, i) => [c, i])),
      encoders: types.map(encoderFor),
      defaulted,
    };
    this.stages.set(table, stage);
    return stage;
  }
}

/** Union of the keys of all rows (a row may omit a column: it gets the table default). */
function providedColumns(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key in row) seen.add(key);
  return [...seen];
}
