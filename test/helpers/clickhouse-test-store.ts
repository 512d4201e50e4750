/**
 * A ClickHouse store on a database of its own for one test run, on the server
 * the config names: a unique name from a prefix, or the name a test already
 * gave its app (`{ database }`). `close` drops the database and closes the
 * client, and never throws (a test's cleanup goes on).
 */
import type { Config } from '../../core/config.js';
import { createStore } from '../../core/ports.js';
import { ident, sql } from '../../core/store/sql.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../core/store/store.js';
import { testLogger, uniqueName } from './config.js';

export interface ClickHouseTestStore {
  store: Store;
  database: string;
  close(): Promise<void>;
}

export async function openClickHouseTestStore(
  config: Config,
  name: string | { database: string },
  logger: Logger = testLogger(),
): Promise<ClickHouseTestStore> {
  const database = typeof name === 'string' ? uniqueName(name) : name.database;
  // The product's own construction of the port (core/ports.ts), on this test's database.
  const store = await createStore({ ...config, STORE: 'clickhouse', CLICKHOUSE_DATABASE: database }, logger);
  return {
    store,
    database,
    close: async () => {
      await store.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).catch(() => undefined);
      await store.close().catch(() => undefined);
    },
  };
}
