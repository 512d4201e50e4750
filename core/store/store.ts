/**
 * Store port. Two adapters (ClickHouse, DuckDB) honour these semantics
 * (checked by test/contract/store.contract.test.ts against both):
 *  - migrations: `sql/<dialect>/NNN_name.sql`, applied in order at start-up,
 *    recorded in `schema_migrations`, idempotent (a second run applies none;
 *    an edited applied migration is refused by checksum);
 *  - batch inserts of plain row objects;
 *  - idempotent by key: every table has an event id key. Inserting the same
 *    event twice never counts twice in a query: DuckDB tables carry a
 *    PRIMARY KEY and inserts skip existing keys; ClickHouse tables are
 *    ReplacingMergeTree and queries read them through `${q.final}`;
 *  - every value enters SQL through `sql` (core/store/sql.ts), which escapes
 *    per dialect; identifiers through `ident`.
 */
import type { Sql, SqlDialect } from './sql.js';

export type { Sql, SqlDialect };

export interface MigrationReport {
  applied: string[];
  skipped: string[];
}

export type Row = Record<string, unknown>;

/** An insert in the making (Store.beginInsert). */
export interface RowBatch {
  add(row: Row): void;
  /** Rows added so far. */
  readonly size: number;
  /** Inserts every row added; resolves once the store acknowledged them. Once only. */
  send(): Promise<void>;
}

export interface Store {
  readonly adapter: SqlDialect;
  /** Applies pending migrations from `sql/<dialect>/` (or the given folder root). */
  migrate(migrationsRoot?: string): Promise<MigrationReport>;
  /**
   * Batch insert. Values: string, number, bigint, boolean, null, Date
   * (stored as UTC DateTime, second precision: keep milliseconds in a
   * separate integer column), arrays of those.
   */
  insert(table: string, rows: Row[]): Promise<void>;
  /**
   * The same insert built row by row, for large batches made in a loop:
   * `add` takes each row as it is made (the ClickHouse adapter encodes it at
   * once, so the row object is garbage right after instead of living until
   * the round trip: bench:pipeline), `send` inserts them all. A bad value
   * throws from `add` or rejects `send`; either way the caller drops the
   * batch and nothing of it is stored.
   */
  beginInsert(table: string): Promise<RowBatch>;
  query<T extends Row = Row>(statement: Sql): Promise<T[]>;
  /** DDL or other statements without a result. */
  command(statement: Sql): Promise<void>;
  ping(): Promise<void>;
  /** Flushes pending writes and closes connections. */
  close(): Promise<void>;
}
