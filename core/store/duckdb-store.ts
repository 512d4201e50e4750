/**
 * Store adapter on an embedded DuckDB file (@duckdb/node-api): the default
 * when no ClickHouse server is configured.
 *
 * - Idempotent inserts: tables carry a PRIMARY KEY; a batch is appended into
 *   a TEMP staging table (column-wise data chunks through an Appender), then
 *   `INSERT OR IGNORE INTO t SELECT ... FROM staging`: existing keys (and
 *   duplicates inside the batch) are skipped, the first version wins.
 *   (ClickHouse's ReplacingMergeTree keeps the last one: replays of identical
 *   events read the same in both; do not rely on which edited copy wins.)
 * - One writer: DuckDB allows one writing connection per file, so inserts,
 *   commands and migrations are serialized through one connection; queries
 *   use a second connection of the same instance (they see committed writes).
 * - Rows come back in the shapes ClickHouse's JSONEachRow gives, so one
 *   query text reads the same through both adapters:
 *     TIMESTAMP -> 'YYYY-MM-DD hh:mm:ss' (UTC), DATE -> 'YYYY-MM-DD',
 *     DECIMAL -> number, BOOLEAN -> 1/0 (ClickHouse 18.16 has UInt8 only),
 *     LIST/ARRAY -> arrays, BIGINT/HUGEINT -> number when safe, else string.
 *   Known difference: ClickHouse 18.16 returns (U)Int64 as strings (count(),
 *   UInt64 columns); read 64-bit integers with Number(...) in portable code.
 * - Dates are stored at second precision (the store contract): milliseconds
 *   are dropped on insert, as ClickHouse's DateTime does.
 * Staging and appending in duckdb-staging.ts, value mapping both ways in
 * duckdb-values.ts; this file opens the file, serializes writes, migrates.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { runMigrations, type MigrationExecutor } from './migrations.js';
import { collectingRowBatch } from './row-batch.js';
import { DuckDbStaging } from './duckdb-staging.js';
import { readRows } from './duckdb-values.js';
import { ident, type Sql } from './sql.js';
import type { MigrationReport, Row, Store } from './store.js';

export interface DuckDbStoreOptions {
  /** File path (parent folder created) or ':memory:'. */
  path: string;
  logger: Logger;
}

const ADAPTER = 'duckdb';
/** A statement that writes rows and cannot change a table's columns (with no `;`: a single statement). */
const ROW_WRITE = /^\s*(INSERT|UPDATE|DELETE)\s/i;

export async function createDuckDbStore(options: DuckDbStoreOptions): Promise<Store> {
  const { path, logger } = options;
  const log = logger.child({ component: 'store', adapter: ADAPTER });
  let instance: DuckDBInstance;
  let writer: DuckDBConnection;
  let reader: DuckDBConnection;
  try {
    if (path !== ':memory:') await ensureDir(dirname(resolve(path)));
    instance = await DuckDBInstance.create(path);
    writer = await instance.connect();
    reader = await instance.connect();
  } catch (err) {
    metrics.storeErrors.inc({ adapter: ADAPTER, operation: 'connect' });
    throw new DependencyError('duckdb', `cannot open DUCKDB_PATH=${path}: ${errorMessage(err)}`, { cause: err });
  }
  log.info({ path }, 'duckdb store opened');

  // One writer: every write runs after the previous one settled.
  let tail: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };

  let closed = false;
  let closing: Promise<void> | undefined;
  const ensureOpen = () => {
    if (closed) throw new Error('duckdb store is closed');
  };

  const staging = new DuckDbStaging(writer);

  const observe = async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      metrics.storeErrors.inc({ adapter: ADAPTER, operation });
      throw err;
    }
  };

  const executor: MigrationExecutor = {
    dialect: 'duckdb',
    exec: async (statement) => {
      await writer.run(statement);
    },
    query: async (statement) => readRows(writer, statement.render('duckdb')),
    transaction: async (fn) => {
      await writer.run('BEGIN TRANSACTION');
      try {
        const result = await fn();
        await writer.run('COMMIT');
        return result;
      } catch (err) {
        await writer.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
  };

  const store: Store = {
    adapter: 'duckdb',

    migrate: (migrationsRoot?: string): Promise<MigrationReport> =>
      observe('migrate', () =>
        serialized(async () => {
          ensureOpen();
          await staging.drop();
          const report = await runMigrations(executor, migrationsRoot);
          if (report.applied.length) log.info({ applied: report.applied }, 'migrations applied');
          return report;
        }),
      ),

    insert: async (table: string, rows: Row[]): Promise<void> => {
      const name = ident(table).render('duckdb'); // validates before anything is queued
      if (rows.length === 0) return;
      return observe('insert', () =>
        serialized(async () => {
          ensureOpen();
          const end = metrics.storeInsertSeconds.startTimer({ adapter: ADAPTER, table });
          await staging.append(name, rows);
          end();
          metrics.storeRowsInserted.inc({ adapter: ADAPTER, table }, rows.length);
        }),
      );
    },

    beginInsert: async (table: string) => {
      ident(table); // validates at once, like insert
      return collectingRowBatch((rows) => store.insert(table, rows));
    },

    query: <T extends Row = Row>(statement: Sql): Promise<T[]> =>
      observe('query', async () => {
        ensureOpen();
        const text = statement.render('duckdb');
        const end = metrics.storeQuerySeconds.startTimer({ adapter: ADAPTER });
        const rows = await readRows(reader, text);
        end();
        return rows as T[];
      }),

    command: async (statement: Sql): Promise<void> => {
      const text = statement.render('duckdb');
      return observe('command', () =>
        serialized(async () => {
          ensureOpen();
          await writer.run(text);
          // A statement that may have changed a table's columns drops the staging tables; a write of rows (the
          // detector's upsert, every quote batch) keeps them: recreating them cost three statements per insert.
          if (!ROW_WRITE.test(text) || text.includes(';')) await staging.drop();
        }),
      );
    },

    ping: async () => {
      ensureOpen();
      await reader.run('SELECT 1');
    },

    close: () =>
      (closing ??= serialized(async () => {
        // Runs after every write queued before it.
        closed = true;
        reader.closeSync();
        writer.closeSync();
        instance.closeSync();
        log.info('duckdb store closed');
      })),
  };
  return store;
}

/**
 * `mkdir -p` one level at a time: Node 20's `mkdir(..., { recursive: true })`
 * spins forever on some unwritable parents (e.g. under /proc).
 */
async function ensureDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let current = dir; ;) {
    try {
      if (!(await stat(current)).isDirectory()) throw new Error(`${current} is not a directory`);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  for (const folder of missing.reverse()) {
    try {
      await mkdir(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
