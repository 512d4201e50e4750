/**
 * Insert path of the ClickHouse store. A batch goes as RowBinary when every
 * column's type (as the server reports it) and every value allows it (no
 * number formatted as text on either side), else as TabSeparated, else as
 * JSONEachRow (rows without one shared key set); every encoding refuses bad
 * values before anything is sent (clickhouse-rowbinary.ts and
 * clickhouse-formats.ts). beginInsert() encodes rows as they are added; a row
 * no binary writer takes goes to a collecting batch inserted by insert().
 * Column types and writers are cached per table until forget() (after a
 * migration). Nothing sent refers to the row objects, so a large batch's rows
 * can be collected while in flight.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { metrics } from '../metrics.js';
import { toJsonRows, toTabSeparated } from './clickhouse-formats.js';
import { encodeRowBinary, NotBinary, RowBinaryEncoder, writerFor, type Writer } from './clickhouse-rowbinary.js';
import { collectingRowBatch } from './row-batch.js';
import { ident, sql } from './sql.js';
import type { Row, RowBatch } from './store.js';

const ADAPTER = 'clickhouse';

/** Runs one store operation: counted, its errors mapped, refused once the store is closed. */
export type TrackOperation = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

export class ClickHouseInserter {
  /** table -> its column types (cleared by forget(), as a migration may alter tables). */
  private columnTypes = new Map<string, Promise<Map<string, string>>>();
  /** `table\0columns` -> RowBinary writers, or null when some column's type is not covered. */
  private writerCache = new Map<string, Writer[] | null>();
  /**
   * table -> RowBinary bytes of its last row-by-row batch: the next batch starts at that size instead of
   * doubling its way up from 64 KB (a 46k-quote batch is ~20 MB: nine reallocations, each copying the bytes so far).
   */
  private readonly lastBatchBytes = new Map<string, number>();

  constructor(
    private readonly client: ClickHouseClient,
    private readonly track: TrackOperation,
    private readonly serverUtc: boolean,
  ) {}

  /** Drops the cached column types and writers (tables may have changed). */
  forget(): void {
    this.columnTypes = new Map();
    this.writerCache = new Map();
  }

  async insert(table: string, rows: Row[]): Promise<void> {
    const name = ident(table).render('clickhouse');
    if (rows.length === 0) return;
    // RowBinary when every column's type and value allows it, else TabSeparated, else JSONEachRow
    // (rows without one shared key set). Every encoding refuses bad values before anything is sent.
    const columns = Object.keys(rows[0]!);
    const writers = this.writersOf(table, await this.tableTypes(table), columns);
    let binary: Buffer | undefined;
    if (writers) {
      try {
        binary = encodeRowBinary(rows, columns, writers);
      } catch (err) {
        if (!(err instanceof NotBinary)) throw err;
      }
    }
    if (binary) return this.sendBinary(table, columns, binary, rows.length);
    const tsv = toTabSeparated(rows);
    const values = tsv ? [] : toJsonRows(rows);
    // Nothing below refers to `rows`: a large batch's row objects can be collected while the insert is in flight.
    const count = rows.length;
    return this.track('insert', async () => {
      const end = metrics.storeInsertSeconds.startTimer({ adapter: ADAPTER, table });
      if (tsv) {
        await this.client.insert({
          table: name,
          values: Readable.from([tsv.body], { objectMode: false }),
          format: 'TabSeparated',
          columns: tsv.columns as [string, ...string[]],
        });
      } else await this.client.insert({ table: name, values, format: 'JSONEachRow' });
      end();
      metrics.storeRowsInserted.inc({ adapter: ADAPTER, table }, count);
    });
  }

  // Rows are encoded to RowBinary as they are added (the first row's keys are the columns); a row that
  // cannot be (other keys, a value no binary writer takes) goes to a collecting batch, inserted by `insert`.
  async beginInsert(table: string): Promise<RowBatch> {
    ident(table);
    const byName = await this.tableTypes(table);
    const rest = collectingRowBatch((rows) => this.insert(table, rows));
    let encoder: RowBinaryEncoder | null | undefined;
    let sent = false;
    const writersOf = (columns: string[]) => this.writersOf(table, byName, columns);
    const sendBinary = (e: RowBinaryEncoder, body: Buffer) => this.sendBinary(table, e.columns, body, e.rows);
    const { lastBatchBytes } = this;
    return {
      add(row: Row) {
        if (sent) throw new Error('row batch already sent');
        if (encoder === undefined) {
          const columns = Object.keys(row);
          const writers = columns.length ? writersOf(columns) : undefined;
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
        await Promise.all([body ? sendBinary(encoder!, body) : undefined, rest.send()]);
      },
    };
  }

  /** The table's column types as the server reports them (empty: no such table). */
  private tableTypes(table: string): Promise<Map<string, string>> {
    let types = this.columnTypes.get(table);
    if (!types) {
      types = this.track('insert', async () => {
        const rs = await this.client.query({
          query: `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = ${sqlString(table)}`,
          format: 'JSONEachRow',
        });
        return new Map((await rs.json<{ name: string; type: string }>()).map((r) => [r.name, r.type]));
      });
      this.columnTypes.set(table, types);
      types.catch(() => this.columnTypes.delete(table));
    }
    return types;
  }

  /** RowBinary writers of these columns, or undefined when some column is unknown or its type not covered. */
  private writersOf(table: string, byName: Map<string, string>, columns: string[]): Writer[] | undefined {
    const cacheKey = `${table}\u0000${columns.join(',')}`;
    let writers = this.writerCache.get(cacheKey);
    if (writers === undefined) {
      for (const c of columns) ident(c); // column names pass `ident` like everywhere else
      const list = columns.map((c) => {
        const type = byName.get(c);
        return type === undefined ? undefined : writerFor(type, this.serverUtc);
      });
      writers = list.every((w) => w !== undefined) ? (list as Writer[]) : null;
      // Unknown table or column: no cache entry (the text insert reports the error; a migration may add it).
      if (byName.size && list.every((_, i) => byName.has(columns[i]!))) this.writerCache.set(cacheKey, writers);
    }
    return writers ?? undefined;
  }

  /** Sends a RowBinary body of `count` rows. Nothing here refers to row objects. */
  private sendBinary(table: string, columns: readonly string[], body: Buffer, count: number): Promise<void> {
    return this.track('insert', async () => {
      const end = metrics.storeInsertSeconds.startTimer({ adapter: ADAPTER, table });
      const list = columns.map((c) => ident(c).render('clickhouse')).join(', ');
      const { stream } = await this.client.exec({
        query: `INSERT INTO ${ident(table).render('clickhouse')} (${list}) FORMAT RowBinary`,
        values: Readable.from([body], { objectMode: false }),
      });
      await drain(stream);
      end();
      metrics.storeRowsInserted.inc({ adapter: ADAPTER, table }, count);
    });
  }
}

const sqlString = (s: string) => sql`${s}`.render('clickhouse');

/** Reads a response body to its end (frees the keep-alive socket). */
async function drain(stream: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of stream) {
    // discard
  }
}
