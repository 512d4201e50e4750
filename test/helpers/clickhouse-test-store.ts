/**
 * A ClickHouse store on a database of its own (unique name) for one test run,
 * on the server the config names; `close` drops the database and closes the
 * client.
 */
import type { Config } from '../../core/config.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { ident, sql } from '../../core/store/sql.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../core/store/store.js';
import { testLogger, uniqueName } from './config.js';

export async function openClickHouseTestStore(
  config: Config,
  prefix: string,
  logger: Logger = testLogger(),
): Promise<{ store: Store; database: string; close(): Promise<void> }> {
  const database = uniqueName(prefix);
  const store = await createClickHouseStore({
    url: config.CLICKHOUSE_URL,
    database,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
    logger,
  });
  return {
    store,
    database,
    close: async () => (
      await store.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).catch(() => undefined),
      await store.close()
    ),
  };
}
