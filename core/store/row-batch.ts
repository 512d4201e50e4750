/** Store.beginInsert for adapters that send rows as objects: the batch keeps them and inserts them on `send`. */
import type { Row, RowBatch } from './store.js';

export function collectingRowBatch(insert: (rows: Row[]) => Promise<void>): RowBatch {
  let rows: Row[] = [];
  let sent = false;
  return {
    add(row: Row) {
      if (sent) throw new Error('row batch already sent');
      rows.push(row);
    },
    get size() {
      return rows.length;
    },
    send() {
      if (sent) return Promise.reject(new Error('row batch already sent'));
      sent = true;
      const all = rows;
      rows = [];
      return insert(all);
    },
  };
}
