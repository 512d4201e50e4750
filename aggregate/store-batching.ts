/**
 * How the aggregate's consumers write: their inserts grouped per table
 * (STORE_BATCH_MAX_ROWS rows or STORE_BATCH_MAX_WAIT_MS, whichever first;
 * core/store/table-batcher.ts), and the batches of all the partitions of a
 * Kafka fetch handled at once (`partitionsConcurrently`), so that they meet in
 * the batcher: one insert per table per fetch instead of one per partition.
 * Each batch handler awaits the insert that carried its rows, so the bus still
 * commits a batch's offsets only once its rows are stored; `drain()` (the
 * role's stop) inserts what is pending at once. On ClickHouse only; with
 * STORE_BATCH_MAX_WAIT_MS=0 (or on DuckDB) both are off: one insert per table
 * per batch, one partition at a time.
 */
import type { Bus } from '../core/bus/bus.js';
import { forwardingBus } from '../core/bus/forwarding-bus.js';
import type { Config } from '../core/config.js';
import { batchedStore } from '../core/store/batched-store.js';
import type { Store } from '../core/store/store.js';
import { TableBatcher } from '../core/store/table-batcher.js';

export type StoreBatchSettings = Pick<Config, 'STORE_BATCH_MAX_ROWS' | 'STORE_BATCH_MAX_WAIT_MS' | 'BUS_PARTITIONS'>;

export interface BatchedWrites {
  /** The store to hand the consumers. */
  store: Store;
  /** The bus to start the consumers on: every partition of a group's fetch handled at once while batching. */
  consumingBus(bus: Bus): Bus;
  /** Rows waiting for their table's insert. */
  readonly pendingRows: number;
  /** Inserts everything pending now (and later writes at once); resolves when those inserts are settled. */
  drain(): Promise<void>;
}

export function batchWrites(store: Store, settings: StoreBatchSettings): BatchedWrites {
  const batcher = new TableBatcher({
    maxRows: settings.STORE_BATCH_MAX_ROWS,
    maxWaitMs: settings.STORE_BATCH_MAX_WAIT_MS,
    insert: (table, rows) => store.insert(table, rows),
  });
  // ClickHouse only: DuckDB writes no parts to merge, and the memory bus runs a group's partitions one after
  // another, so holding rows there would only add latency.
  const batching = settings.STORE_BATCH_MAX_WAIT_MS > 0 && store.adapter === 'clickhouse';
  return {
    store: batching ? batchedStore(store, batcher, settings.STORE_BATCH_MAX_ROWS) : store,
    consumingBus: (bus) =>
      batching
        ? forwardingBus(bus, {
            consume: (options) =>
              bus.consume({ partitionsConcurrently: settings.BUS_PARTITIONS * options.topics.length, ...options }),
          })
        : bus,
    get pendingRows() {
      return batcher.pendingRows;
    },
    drain: () => batcher.drain(),
  };
}
