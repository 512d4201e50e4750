/**
 * A store whose operations report to an OperationHealth (core/operation-health.ts):
 * inserts and commands are writes, queries are reads. The process wraps the
 * store it creates with this, so /health's `store` turns degraded on the
 * first failed write and ok on the first successful one, whatever the adapter.
 */
import type { OperationHealth } from '../operation-health.js';
import type { Row, RowBatch, Store } from './store.js';

export function observedStore(store: Store, health: OperationHealth): Store {
  return {
    get adapter() {
      return store.adapter;
    },
    migrate: (root) => health.track('write', () => store.migrate(root)),
    insert: (table, rows) => health.track('write', () => store.insert(table, rows)),
    beginInsert: async (table): Promise<RowBatch> => {
      // Its failure is a failed write; its success is not a write yet (it may not even reach the server).
      const batch = await store.beginInsert(table).catch((err: unknown) => {
        health.failed('write', err);
        throw err;
      });
      return {
        add: (row: Row) => batch.add(row),
        get size() {
          return batch.size;
        },
        send: () => health.track('write', () => batch.send()),
      };
    },
    query: <T extends Row = Row>(statement: Parameters<Store['query']>[0]) =>
      health.track('read', () => store.query<T>(statement)),
    command: (statement) => health.track('write', () => store.command(statement)),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
