/**
 * Store adapter on ClickHouse over HTTP (@clickhouse/client), kept within
 * what ClickHouse 18.16 runs (no DateTime64, no server-side query
 * parameters, no async_insert): every value is rendered into the SQL text by
 * `sql` (core/store/sql.ts); inserts send RowBinary ("RowBinary" below,
 * from the column types the server reports; no number formatted as text on
 * either side), or TabSeparated when a value or type is not covered there,
 * or JSONEachRow when the rows do not share one key set.
 *
 * - Idempotence: tables are ReplacingMergeTree ordered by a key that ends in
 *   the event id; queries read them `FROM t ${final}`, which collapses
 *   re-inserted events (the last inserted copy wins; DuckDB keeps the first).
 * - Values on insert: Date -> 'YYYY-MM-DD hh:mm:ss' UTC (second precision;
 *   keep milliseconds in a UInt64 column), boolean -> 0/1, bigint -> decimal
 *   text, null/undefined -> NULL, arrays converted element-wise; non-finite
 *   numbers are refused (JSON would turn them into null).
 * - Values on read (JSONEachRow as 18.16 writes it): DateTime ->
 *   'YYYY-MM-DD hh:mm:ss' in the server's (or the column's) time zone (the
 *   adapter warns when the server is not on UTC), Date -> 'YYYY-MM-DD',
 *   Float/(U)Int8-32 -> number, and **(U)Int64 -> string** (count(),
 *   sum() of integers, UInt64 columns): 18.16 quotes 64-bit integers in JSON
 *   and the adapter leaves them as strings rather than lose precision. DuckDB
 *   returns them as numbers when safe: read 64-bit integers with Number(...).
 * - Errors: the server unreachable, a timeout, or a transient server state
 *   (too many parts/queries, memory limit, network codes) -> DependencyError
 *   (retryable, names CLICKHOUSE_URL); a rejected statement -> plain Error
 *   with ClickHouse's message.
 * - @clickhouse/client 1.23 sends no ClickHouse setting by default (response
 *   compression, which would add `enable_http_compression=1`, is off): nothing
 *   an 18.16 server could reject.
 *
 * This file composes the parts: start-up (clickhouse-connect.ts), the insert
 * path (clickhouse-insert.ts, encodings in clickhouse-formats.ts), error
 * mapping (clickhouse-errors.ts); migrations, queries, commands and close are
 * here.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { DependencyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { connectClickHouse } from './clickhouse-connect.js';
import { describeClickHouseError, mapError } from './clickhouse-errors.js';
import { ClickHouseInserter, type TrackOperation } from './clickhouse-insert.js';
import { runMigrations, type MigrationExecutor } from './migrations.js';
import type { Sql } from './sql.js';
import type { MigrationReport, Row, Store } from './store.js';

export { ClickHouseStatementError, mapError } from './clickhouse-errors.js';

export interface ClickHouseStoreOptions {
  url: string;
  database: string;
  username: string;
  password: string;
  /** Start-up: how long the server may take to answer before DependencyError. */
  connectTimeoutMs: number;
  logger: Logger;
  /** Per-request timeout once started (default 60 s). */
  requestTimeoutMs?: number;
}

const ADAPTER = 'clickhouse';
const DATABASE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export async function createClickHouseStore(options: ClickHouseStoreOptions): Promise<Store> {
  const { url, database, username, password, connectTimeoutMs, logger } = options;
  const log = logger.child({ component: 'store', adapter: ADAPTER });
  if (!DATABASE.test(database)) throw new TypeError(`invalid ClickHouse database name: ${JSON.stringify(database)}`);

  const clientOptions = {
    url,
    username,
    password,
    request_timeout: options.requestTimeoutMs ?? 60_000,
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
    application: 'x402-gateway',
  };

  // Start-up: the server answers (retrying until the deadline: it may still be starting), the database exists.
  const { serverUtc } = await connectClickHouse(clientOptions, database, connectTimeoutMs, log);

  const client: ClickHouseClient = createClient({ ...clientOptions, database });
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  const track: TrackOperation = <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new Error('clickhouse store is closed'));
    const run = (async () => {
      try {
        return await fn();
      } catch (err) {
        metrics.storeErrors.inc({ adapter: ADAPTER, operation });
        throw mapError(err, operation, url);
      }
    })();
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run)).catch(() => undefined);
    return run;
  };

  const queryRows = async (text: string): Promise<Row[]> => {
    const rs = await client.query({ query: text, format: 'JSONEachRow' });
    return rs.json<Row>();
  };

  // Errors mapped here, so the runner sees DependencyError (rethrown as is) or a clean statement error.
  const executor: MigrationExecutor = {
    dialect: 'clickhouse',
    exec: async (statement) => {
      await client.command({ query: statement }).catch((err: unknown) => {
        throw mapError(err, 'migrate', url);
      });
    },
    query: (statement) =>
      queryRows(statement.render('clickhouse')).catch((err: unknown) => {
        throw mapError(err, 'migrate', url);
      }),
  };

  const inserter = new ClickHouseInserter(client, track, serverUtc);

  const store: Store = {
    adapter: 'clickhouse',

    migrate: (migrationsRoot?: string): Promise<MigrationReport> =>
      track('migrate', async () => {
        const report = await runMigrations(executor, migrationsRoot);
        inserter.forget();
        if (report.applied.length) log.info({ applied: report.applied }, 'migrations applied');
        return report;
      }),

    insert: (table, rows) => inserter.insert(table, rows),

    beginInsert: (table) => inserter.beginInsert(table),

    query: async <T extends Row = Row>(statement: Sql): Promise<T[]> => {
      const text = statement.render('clickhouse');
      return track('query', async () => {
        const end = metrics.storeQuerySeconds.startTimer({ adapter: ADAPTER });
        const rows = await queryRows(text);
        end();
        return rows as T[];
      });
    },

    command: async (statement: Sql): Promise<void> => {
      const text = statement.render('clickhouse');
      return track('command', async () => {
        await client.command({ query: text });
      });
    },

    ping: () =>
      track('ping', async () => {
        const result = await client.ping();
        if (!result.success)
          throw new DependencyError(
            'clickhouse',
            `ping failed (CLICKHOUSE_URL=${url}): ${describeClickHouseError(result.error)}`,
            { cause: result.error },
          );
      }),

    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      await client.close();
      log.info('clickhouse store closed');
    },
  };
  return store;
}
