/**
 * Picks each port's adapter from configuration. Production adapters are
 * imported lazily so the embedded default loads no engine client it does not use.
 */
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { Bus } from './bus/bus.js';
import type { Store } from './store/store.js';
import type { JobQueue } from './queue/queue.js';
import { namespaced } from './bus/namespaced-bus.js';
import { withSchemaVersions } from './bus/schema-version-header.js';
import { SCHEMA_VERSION_HEADER, schemaVersionOf } from './events/contracts.js';

export async function createBus(config: Config, logger: Logger): Promise<Bus> {
  const common = {
    partitions: config.BUS_PARTITIONS,
    batchSize: config.BUS_BATCH_SIZE,
    maxAttempts: config.BUS_MAX_ATTEMPTS,
    retryBackoffMs: config.BUS_RETRY_BACKOFF_MS,
    retryMaxBackoffMs: config.BUS_RETRY_MAX_BACKOFF_MS,
    logger: logger.child({ port: 'bus' }),
  };
  if (config.BUS === 'kafka') {
    const { createKafkaBus } = await import('./bus/kafka-bus.js');
    const kafka = await createKafkaBus({
      ...common,
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
      minInsyncReplicas: config.KAFKA_MIN_INSYNC_REPLICAS,
      connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
      fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
      fetchMaxBytesPerPartition: config.KAFKA_FETCH_MAX_BYTES_PER_PARTITION,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
    });
    return withSchemaVersions(namespaced(kafka, config.BUS_NAMESPACE), SCHEMA_VERSION_HEADER, schemaVersionOf);
  }
  const { createMemoryBus } = await import('./bus/memory-bus.js');
  return withSchemaVersions(
    namespaced(await createMemoryBus(common), config.BUS_NAMESPACE),
    SCHEMA_VERSION_HEADER,
    schemaVersionOf,
  );
}

export async function createStore(config: Config, logger: Logger): Promise<Store> {
  if (config.STORE === 'clickhouse') {
    const { createClickHouseStore } = await import('./store/clickhouse-store.js');
    return createClickHouseStore({
      url: config.CLICKHOUSE_URL,
      database: config.CLICKHOUSE_DATABASE,
      username: config.CLICKHOUSE_USER,
      password: config.CLICKHOUSE_PASSWORD,
      connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
      logger: logger.child({ port: 'store' }),
    });
  }
  const { createDuckDbStore } = await import('./store/duckdb-store.js');
  return createDuckDbStore({ path: config.DUCKDB_PATH, logger: logger.child({ port: 'store' }) });
}

export async function createQueue(config: Config, logger: Logger): Promise<JobQueue> {
  if (config.QUEUE === 'bullmq') {
    const { createBullMqQueue } = await import('./queue/bullmq-queue.js');
    return createBullMqQueue({
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      concurrency: config.JOB_CONCURRENCY,
      lockMs: config.JOB_LOCK_MS,
      maxAttempts: config.JOB_MAX_ATTEMPTS,
      connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
      logger: logger.child({ port: 'queue' }),
    });
  }
  const { createInProcessQueue } = await import('./queue/inprocess-queue.js');
  return createInProcessQueue({
    concurrency: config.JOB_CONCURRENCY,
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    logger: logger.child({ port: 'queue' }),
  });
}
