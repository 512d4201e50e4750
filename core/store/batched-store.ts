/**
 * A Store whose inserts go through a TableBatcher (core/store/table-batcher.ts):
 * `insert` and `beginInsert(...).send()` resolve once the grouped insert that
 * carried the rows was acknowledged, so a consumer that awaits them before its
 * batch is committed still commits only durable rows. Queries, commands and
 * migrations pass through untouched (a caller reading what it wrote waited for
 * the write first).
 *
 * A row-by-row batch that reaches the batcher's `maxRows` is already large:
 * it goes to the store's own row batch (the ClickHouse adapter encodes rows as
 * they are added, so a 40k-quote batch's objects die young: bench:pipeline)
 * and is inserted at once, not held, and the rows held for the other tables
 * go with it (TableBatcher.flushAll: the consumer is busy).
 */
import type { TableBatcher } from './table-batcher.js';
import type { Row, RowBatch, Sql, Store } from './store.js';

export function batchedStore(store: Store, batcher: TableBatcher, maxRows: number): Store {
  return {
    get adapter() {
      return store.adapter;
    },
    migrate: (root) => store.migrate(root),
    insert: (table, rows) => batcher.write(table, rows),
    beginInsert: async (table): Promise<RowBatch> => {
      const direct = await store.beginInsert(table);
      let held: Row[] | undefined = [];
      let sent = false;
      return {
        add(row: Row) {
          if (sent) throw new Error('row batch already sent');
          if (!held) return direct.add(row);
          held.push(row);
          if (held.length < maxRows) return;
          for (const r of held) direct.add(r);
          held = undefined;
        },
        get size() {
          return held ? held.length : direct.size;
        },
        send() {
          if (sent) return Promise.reject(new Error('row batch already sent'));
          sent = true;
          if (!held) {
            batcher.flushAll();
            return direct.send();
          }
          const rows = held;
          held = [];
          return batcher.write(table, rows);
        },
      };
    },
    query: <T extends Row = Row>(statement: Sql) => store.query<T>(statement),
    command: (statement) => store.command(statement),
    ping: () => store.ping(),
    close: async () => {
      await batcher.drain();
      await store.close();
    },
  };
}
