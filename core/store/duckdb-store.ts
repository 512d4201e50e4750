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
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  DuckDBDataChunk,
  dateValue,
  DuckDBInstance,
  DuckDBTypeId,
  JSDuckDBValueConverter,
  jsToDuckDBValue,
  timestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
} from '@duckdb/node-api';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { runMigrations, type MigrationExecutor } from './migrations.js';
import { collectingRowBatch } from './row-batch.js';
import { ident, toSqlDateTime, type Sql } from './sql.js';
import type { MigrationReport, Row, Store } from './store.js';

export interface DuckDbStoreOptions {
  /** File path (parent folder created) or ':memory:'. */
  path: string;
  logger: Logger;
}

const ADAPTER = 'duckdb';
/** Rows per data chunk handed to the appender (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

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

  // TEMP staging tables (per writer connection), keyed by target table.
  const stages = new Map<string, Stage>();
  const dropStages = async () => {
    for (const stage of stages.values()) await writer.run(`DROP TABLE IF EXISTS temp.main.${stage.name}`);
    stages.clear();
  };

  const stageFor = async (table: string): Promise<Stage> => {
    let stage = stages.get(table);
    if (stage) return stage;
    const name = `__stage_${table.replace('.', '__')}`;
    await writer.run(`CREATE OR REPLACE TEMP TABLE ${name} AS SELECT * FROM ${table} LIMIT 0`);
    const probe = await writer.runAndReadAll(`SELECT * FROM temp.main.${name} LIMIT 0`);
    const columns = probe.columnNames();
    const types = probe.columnTypes();
    stage = { name, columns, types, index: new Map(columns.map((c, i) => [c, i])), encoders: types.map(encoderFor) };
    stages.set(table, stage);
    return stage;
  };

  const appendBatch = async (table: string, rows: Row[]) => {
    const stage = await stageFor(table);
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
  };

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
          await dropStages();
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
          await appendBatch(name, rows);
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
          await dropStages(); // the statement may have changed a table's columns
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
  for (let current = dir; ; ) {
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

interface Stage {
  name: string;
  columns: string[];
  types: DuckDBType[];
  index: Map<string, number>;
  encoders: Encoder[];
}

type Encoder = (value: unknown, column: string) => DuckDBValue;

/** Union of the keys of all rows (a row may omit a column: it gets the table default). */
function providedColumns(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key in row) seen.add(key);
  return [...seen];
}

const MS_PER_DAY = 86_400_000;

/** `jsToDuckDBValue` for a type known only at run time. */
const toDuckDb = jsToDuckDBValue as unknown as (value: unknown, type: DuckDBType) => DuckDBValue;

function toEpochMs(value: unknown, column: string): number {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  else throw new TypeError(`column ${column}: expected a Date, got ${typeof value}`);
  if (!Number.isFinite(ms)) throw new TypeError(`column ${column}: invalid date ${String(value)}`);
  return ms;
}

function toNumber(value: unknown, column: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`column ${column}: non-finite number ${value}`);
    return value;
  }
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new TypeError(`column ${column}: expected a number, got ${typeof value}`);
}

function toBigInt(value: unknown, column: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError(`column ${column}: expected an integer, got ${value}`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  if (typeof value === 'boolean') return value ? 1n : 0n;
  throw new TypeError(`column ${column}: expected an integer, got ${typeof value}`);
}

function encoderFor(type: DuckDBType): Encoder {
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR:
      return (v, column) => {
        if (typeof v === 'string') {
          if (v.includes('\0')) throw new TypeError(`column ${column}: NUL byte cannot be stored in DuckDB VARCHAR`);
          return v;
        }
        if (v instanceof Date) return toSqlDateTime(v);
        if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
        throw new TypeError(`column ${column}: expected a string, got ${typeof v}`);
      };
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
      return toNumber;
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return toBigInt;
    case DuckDBTypeId.BOOLEAN:
      return (v, column) => {
        if (typeof v === 'boolean') return v;
        if (v === 0 || v === 1) return v === 1;
        throw new TypeError(`column ${column}: expected a boolean, got ${String(v)}`);
      };
    case DuckDBTypeId.TIMESTAMP:
      // Second precision, like ClickHouse DateTime.
      return (v, column) => timestampValue(BigInt(Math.floor(toEpochMs(v, column) / 1000)) * 1_000_000n);
    case DuckDBTypeId.DATE:
      return (v, column) => dateValue(Math.floor(toEpochMs(v, column) / MS_PER_DAY));
    default:
      return (v, column) => {
        try {
          return toDuckDb(v, type);
        } catch (err) {
          throw new TypeError(`column ${column} (${type.toString()}): ${errorMessage(err)}`);
        }
      };
  }
}

// ---------------------------------------------------------------- results

const bigintOut = (value: bigint): number | string =>
  value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();

/** DuckDB values -> the plain shapes ClickHouse's JSONEachRow returns. */
export const plainValueConverter: DuckDBValueConverter<unknown> = (value, type, converter) => {
  if (value === null || value === undefined) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return typeof value === 'bigint' ? bigintOut(value) : String(value);
    case DuckDBTypeId.BOOLEAN:
      return value === true ? 1 : 0;
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
    case DuckDBTypeId.TIMESTAMP_TZ: {
      let date: unknown;
      try {
        date = JSDuckDBValueConverter(value, type, JSDuckDBValueConverter);
      } catch {
        return String(value); // outside the JS Date range (infinity and the like)
      }
      return date instanceof Date ? toSqlDateTime(date) : String(value);
    }
    case DuckDBTypeId.DATE:
      return String(value);
    default:
      return JSDuckDBValueConverter(value, type, converter as unknown as typeof JSDuckDBValueConverter);
  }
};

async function readRows(connection: DuckDBConnection, text: string): Promise<Row[]> {
  const reader = await connection.runAndReadAll(text);
  return reader.convertRowObjects(plainValueConverter) as Row[];
}
