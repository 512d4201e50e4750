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
 */
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { encodeRowBinary, NotBinary, RowBinaryEncoder, toJsonRows, toTabSeparated, writerFor, type Writer } from './clickhouse-formats.js';
import { MigrationError, runMigrations, type MigrationExecutor } from './migrations.js';
import { collectingRowBatch } from './row-batch.js';
import { ident, sql, type Sql } from './sql.js';
import type { MigrationReport, Row, RowBatch, Store } from './store.js';

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

/**
 * Server error codes that describe a transient server state, not a bad
 * statement: the work is retried instead of dead-lettered.
 * 159 TIMEOUT_EXCEEDED, 202 TOO_MANY_SIMULTANEOUS_QUERIES, 203 NO_FREE_CONNECTION,
 * 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 241 MEMORY_LIMIT_EXCEEDED,
 * 242 TABLE_IS_READ_ONLY, 252 TOO_MANY_PARTS, 319 UNKNOWN_STATUS_OF_INSERT.
 */
const RETRYABLE_CODES = new Set([159, 202, 203, 209, 210, 241, 242, 252, 319]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

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

  let serverUtc = false;
  // Start-up: the server answers (retrying until the deadline: it may still be starting), the database exists.
  const admin = createClient(clientOptions);
  let lastError: unknown;
  try {
    await withDeadline(connectTimeoutMs, async (signal) => {
      for (let attempt = 0; !signal.aborted; attempt++) {
        const ping = await admin.ping({ select: false, abort_signal: signal });
        if (ping.success) {
          lastError = undefined;
          break;
        }
        if (signal.aborted) break; // the deadline's own abort is no answer from the server
        lastError = ping.error;
        await sleep(Math.min(100 * 2 ** attempt, 1000), signal);
      }
      if (lastError !== undefined || signal.aborted) throw lastError ?? new Error('no answer');
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}`, abort_signal: signal });
      const rs = await admin.query({ query: 'SELECT timezone() AS tz, version() AS version', format: 'JSONEachRow', abort_signal: signal });
      const [info] = await rs.json<{ tz: string; version: string }>();
      serverUtc = info?.tz === 'UTC' || info?.tz === 'Etc/UTC';
      if (info && info.tz !== 'UTC' && info.tz !== 'Etc/UTC') {
        log.warn({ timezone: info.tz }, 'ClickHouse server time zone is not UTC: declare DateTime columns as DateTime(\'UTC\') or run the server on UTC');
      }
      log.info({ url, database, version: info?.version }, 'clickhouse store connected');
    });
  } catch (err) {
    metrics.storeErrors.inc({ adapter: ADAPTER, operation: 'connect' });
    const mapped = mapError(err, 'start-up', url);
    if (mapped instanceof DependencyError || isDeadline(err)) {
      throw new DependencyError(
        'clickhouse',
        `CLICKHOUSE_URL=${url} did not answer within ${connectTimeoutMs} ms: ${
          isDeadline(err) ? `timed out${lastError !== undefined ? ` (last error: ${describe(lastError)})` : ''}` : errorMessage(err)
        }`,
        { cause: lastError ?? err },
      );
    }
    throw mapped;
  } finally {
    await admin.close().catch(() => undefined);
  }

  const client: ClickHouseClient = createClient({ ...clientOptions, database });
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  const track = <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
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

  /** table -> its column types (cleared by migrate, which may alter tables). */
  let columnTypes = new Map<string, Promise<Map<string, string>>>();
  /** `table\0columns` -> RowBinary writers, or null when some column's type is not covered. */
  let writerCache = new Map<string, Writer[] | null>();
  /**
   * table -> RowBinary bytes of its last row-by-row batch: the next batch starts at that size instead of
   * doubling its way up from 64 KB (a 46k-quote batch is ~20 MB: nine reallocations, each copying the bytes so far).
   */
  const lastBatchBytes = new Map<string, number>();

  /** The table's column types as the server reports them (empty: no such table). */
  const tableTypes = (table: string): Promise<Map<string, string>> => {
    let types = columnTypes.get(table);
    if (!types) {
      types = track('insert', async () => {
        const rs = await client.query({ query: `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = ${sqlString(table)}`, format: 'JSONEachRow' });
        return new Map((await rs.json<{ name: string; type: string }>()).map((r) => [r.name, r.type]));
      });
      columnTypes.set(table, types);
      types.catch(() => columnTypes.delete(table));
    }
    return types;
  };

  /** RowBinary writers of these columns, or undefined when some column is unknown or its type not covered. */
  const writersOf = (table: string, byName: Map<string, string>, columns: string[]): Writer[] | undefined => {
    const cacheKey = `${table}\u0000${columns.join(',')}`;
    let writers = writerCache.get(cacheKey);
    if (writers === undefined) {
      for (const c of columns) ident(c); // column names pass `ident` like everywhere else
      const list = columns.map((c) => {
        const type = byName.get(c);
        return type === undefined ? undefined : writerFor(type, serverUtc);
      });
      writers = list.every((w) => w !== undefined) ? (list as Writer[]) : null;
      // Unknown table or column: no cache entry (the text insert reports the error; a migration may add it).
      if (byName.size && list.every((_, i) => byName.has(columns[i]!))) writerCache.set(cacheKey, writers);
    }
    return writers ?? undefined;
  };

  const binaryWriters = async (table: string, columns: string[]): Promise<Writer[] | undefined> => writersOf(table, await tableTypes(table), columns);

  /** Sends a RowBinary body of `count` rows. Nothing here refers to row objects. */
  const sendBinary = (table: string, columns: readonly string[], body: Buffer, count: number): Promise<void> =>
    track('insert', async () => {
      const end = metrics.storeInsertSeconds.startTimer({ adapter: ADAPTER, table });
      const list = columns.map((c) => ident(c).render('clickhouse')).join(', ');
      const { stream } = await client.exec({ query: `INSERT INTO ${ident(table).render('clickhouse')} (${list}) FORMAT RowBinary`, values: Readable.from([body], { objectMode: false }) });
      await drain(stream);
      end();
      metrics.storeRowsInserted.inc({ adapter: ADAPTER, table }, count);
    });

  const store: Store = {
    adapter: 'clickhouse',

    migrate: (migrationsRoot?: string): Promise<MigrationReport> =>
      track('migrate', async () => {
        const report = await runMigrations(executor, migrationsRoot);
        columnTypes = new Map();
        writerCache = new Map();
        if (report.applied.length) log.info({ applied: report.applied }, 'migrations applied');
        return report;
      }),

    insert: async (table: string, rows: Row[]): Promise<void> => {
      const name = ident(table).render('clickhouse');
      if (rows.length === 0) return;
      // RowBinary when every column's type and value allows it, else TabSeparated, else JSONEachRow
      // (rows without one shared key set). Every encoding refuses bad values before anything is sent.
      const columns = Object.keys(rows[0]!);
      const writers = await binaryWriters(table, columns);
      let binary: Buffer | undefined;
      if (writers) {
        try {
          binary = encodeRowBinary(rows, columns, writers);
        } catch (err) {
          if (!(err instanceof NotBinary)) throw err;
        }
      }
      if (binary) return sendBinary(table, columns, binary, rows.length);
      const tsv = toTabSeparated(rows);
      const values = tsv ? [] : toJsonRows(rows);
      // Nothing below refers to `rows`: a large batch's row objects can be collected while the insert is in flight.
      const count = rows.length;
      return track('insert', async () => {
        const end = metrics.storeInsertSeconds.startTimer({ adapter: ADAPTER, table });
        if (tsv) {
          await client.insert({ table: name, values: Readable.from([tsv.body], { objectMode: false }), format: 'TabSeparated', columns: tsv.columns as [string, ...string[]] });
        } else await client.insert({ table: name, values, format: 'JSONEachRow' });
        end();
        metrics.storeRowsInserted.inc({ adapter: ADAPTER, table }, count);
      });
    },

    // Rows are encoded to RowBinary as they are added (the first row's keys are the columns); a row that
    // cannot be (other keys, a value no binary writer takes) goes to a collecting batch, inserted by `insert`.
    beginInsert: async (table: string): Promise<RowBatch> => {
      ident(table);
      const byName = await tableTypes(table);
      const rest = collectingRowBatch((rows) => store.insert(table, rows));
      let encoder: RowBinaryEncoder | null | undefined;
      let sent = false;
      return {
        add(row: Row) {
          if (sent) throw new Error('row batch already sent');
          if (encoder === undefined) {
            const columns = Object.keys(row);
            const writers = columns.length ? writersOf(table, byName, columns) : undefined;
            encoder = writers ? new RowBinaryEncoder(columns, writers, lastBatchBytes.get(table)) : null;
          }
          if (!encoder?.tryAdd(row)) rest.add(row);
        },
        get size() {
          return (encoder?.rows ?? 0) + rest.size;
        },
        async send() {
          if (sent) throw new Error('row batch already sent');
          sent = true;
          const body = encoder?.rows ? encoder.body() : undefined;
          if (body) lastBatchBytes.set(table, body.length);
          await Promise.all([body ? sendBinary(table, encoder!.columns, body, encoder!.rows) : undefined, rest.send()]);
        },
      };
    },

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
        if (!result.success) throw new DependencyError('clickhouse', `ping failed (CLICKHOUSE_URL=${url}): ${describe(result.error)}`, { cause: result.error });
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

// ---------------------------------------------------------------- errors

/** Connection failures and transient server states -> DependencyError; rejected statements -> Error. */
/** A statement ClickHouse rejected (not retryable): `code` is ClickHouse's error code. */
export class ClickHouseStatementError extends Error {
  constructor(
    message: string,
    readonly code: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClickHouseStatementError';
  }
}

export function mapError(err: unknown, operation: string, url: string): Error {
  if (err instanceof DependencyError || err instanceof ClickHouseStatementError || err instanceof MigrationError) return err;
  const message = errorMessage(err);
  const code = (err as { code?: unknown })?.code;
  const serverCode = Number(typeof code === 'string' && /^\d+$/.test(code) ? code : /Code: (\d+)/.exec(message)?.[1]);
  if (Number.isFinite(serverCode)) {
    const text = cleanServerMessage(message);
    if (RETRYABLE_CODES.has(serverCode)) {
      return new DependencyError('clickhouse', `${operation} failed (CLICKHOUSE_URL=${url}): ${text}`, { cause: err });
    }
    return new ClickHouseStatementError(`ClickHouse ${operation} failed: ${text}`, serverCode, { cause: err });
  }
  if (
    (typeof code === 'string' && NETWORK_CODES.has(code)) ||
    /socket hang up|Timeout error|ECONNREFUSED|ECONNRESET|aborted|other side closed/i.test(message)
  ) {
    return new DependencyError('clickhouse', `${operation} failed (CLICKHOUSE_URL=${url}): ${message}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(message);
}

/** "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist., e.what() = DB::Exception" -> "Code: 60. Table x doesn't exist." */
function cleanServerMessage(message: string): string {
  const code = /Code: (\d+)/.exec(message)?.[1];
  let body = message;
  const exception = body.indexOf('DB::Exception: ');
  if (exception >= 0) body = body.slice(exception + 'DB::Exception: '.length);
  const what = body.indexOf(', e.what() = ');
  if (what >= 0) body = body.slice(0, what);
  body = body.trim();
  return code && !body.startsWith('Code:') ? `Code: ${code}. ${body}` : body;
}

// ---------------------------------------------------------------- helpers

const sqlString = (s: string) => sql`${s}`.render('clickhouse');

/** Reads a response body to its end (frees the keep-alive socket). */
async function drain(stream: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of stream) {
    // discard
  }
}

/** A message for errors that may carry none (an empty HTTP error body, a bare AggregateError). */
function describe(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return errorMessage(err) || (typeof code === 'string' ? code : '') || 'an error response without a message';
}

class DeadlineError extends Error {}
const isDeadline = (err: unknown) => err instanceof DeadlineError;

/** Runs fn with an AbortSignal that fires after ms; rejects with DeadlineError then, whatever fn does. */
async function withDeadline<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeadlineError(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
