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
  query<T extends Row = Row>(statement: Sql): Promise<T[]>;
  /** DDL or other statements without a result. */
  command(statement: Sql): Promise<void>;
  ping(): Promise<void>;
  /** Flushes pending writes and closes connections. */
  close(): Promise<void>;
}
