/**
 * Groups small inserts per table into fewer, larger ones (issue 28, item 4:
 * at the idle simulated feed the aggregate made ~19 inserts/s of ~5 rows and
 * ClickHouse rewrote ~450x the rows inserted in merges; every insert is a
 * part to write and merge). Semantics:
 *  - `write(table, rows)` resolves once an insert holding these rows was
 *    acknowledged by the store, and rejects when it failed: a caller that
 *    awaits it before letting the bus commit keeps "offsets are committed
 *    only after the rows are durable" (core/bus/bus.ts);
 *  - a table's pending rows are inserted together when they reach `maxRows`,
 *    or `maxWaitMs` after the first of them arrived, whichever comes first;
 *    a table that reaches `maxRows` (or a large insert that bypasses the
 *    batcher: `flushAll`) sends every table's pending rows with it: the
 *    consumers are busy, and holding their other tables' rows would only stall
 *    their commits (bench:pipeline: a 5 s hold on the few dislocation rows of
 *    each batch cut the throughput fourfold);
 *    `maxWaitMs` 0 inserts every write at once (batching off);
 *  - a grouped insert that fails with a retryable error (DependencyError: the
 *    store is away) rejects every write in it (each caller's bus retries its
 *    batch, core/bus/batch-runner.ts); any other failure (a bad value) is
 *    retried write by write, so only the writer whose rows are bad fails;
 *  - `drain()` inserts everything pending at once and makes later writes go
 *    at once too (SIGTERM: the consumers' in-flight batches are stored and
 *    committed without waiting out the timer). A SIGKILL loses only rows whose
 *    offsets were not committed: Kafka redelivers them and the tables (keyed by
 *    event id) collapse the replay.
 * Hand-written: no npm batcher resolves each caller with the fate of the very
 * insert that carried its rows and isolates a bad writer (p-batch, dataloader
 * and friends batch reads by key).
 */
import { isRetryable } from '../errors.js';
import type { Row } from './store.js';

export interface TableBatcherOptions {
  /** Pending rows of one table that trigger its insert at once. */
  maxRows: number;
  /** Longest a row waits for others before its table's insert; 0: no waiting. */
  maxWaitMs: number;
  /** The real insert (the store's). */
  insert(table: string, rows: Row[]): Promise<void>;
}

interface Write {
  rows: Row[];
  resolve(): void;
  reject(err: unknown): void;
}

interface Pending {
  writes: Write[];
  rows: number;
  timer: NodeJS.Timeout | undefined;
}

export class TableBatcher {
  private readonly pending = new Map<string, Pending>();
  private readonly inFlight = new Set<Promise<void>>();
  private draining = false;

  constructor(private readonly options: TableBatcherOptions) {}

  /** Rows waiting for their table's insert (all tables). */
  get pendingRows(): number {
    let n = 0;
    for (const p of this.pending.values()) n += p.rows;
    return n;
  }

  /** Resolves once the rows are in an insert the store acknowledged. */
  write(table: string, rows: Row[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    if (this.options.maxWaitMs <= 0) return this.options.insert(table, rows);
    return new Promise<void>((resolve, reject) => {
      let p = this.pending.get(table);
      if (!p) {
        p = { writes: [], rows: 0, timer: undefined };
        this.pending.set(table, p);
        p.timer = setTimeout(() => this.flush(table), this.options.maxWaitMs);
      }
      p.writes.push({ rows, resolve, reject });
      p.rows += rows.length;
      if (this.draining) this.flush(table);
      else if (p.rows >= this.options.maxRows) this.flushAll();
    });
  }

  /** Inserts every table's pending rows now (later writes are held again as usual). */
  flushAll(): void {
    for (const table of [...this.pending.keys()]) this.flush(table);
  }

  /** Inserts everything pending now, and every later write at once; resolves when those inserts are settled. */
  async drain(): Promise<void> {
    this.draining = true;
    for (const table of [...this.pending.keys()]) this.flush(table);
    await Promise.allSettled([...this.inFlight]);
  }

  private flush(table: string): void {
    const p = this.pending.get(table);
    if (!p) return;
    this.pending.delete(table);
    clearTimeout(p.timer);
    const done = this.insertAll(table, p.writes);
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private async insertAll(table: string, writes: Write[]): Promise<void> {
    const rows = writes.length === 1 ? writes[0]!.rows : writes.flatMap((w) => w.rows);
    try {
      await this.options.insert(table, rows);
      for (const w of writes) w.resolve();
      return;
    } catch (err) {
      if (writes.length === 1 || isRetryable(err)) {
        for (const w of writes) w.reject(err);
        return;
      }
    }
    // Not the store being away: some writer's rows are bad. Each alone, so only that writer fails.
    await Promise.all(
      writes.map((w) =>
        this.options.insert(table, w.rows).then(
          () => w.resolve(),
          (err: unknown) => w.reject(err),
        ),
      ),
    );
  }
}
