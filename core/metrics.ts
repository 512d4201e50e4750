/**
 * Prometheus metrics (prom-client): default process metrics plus counters and
 * histograms for each port. Adapters record through these objects; `/metrics`
 * renders the registry.
 */
import client from 'prom-client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const seconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  httpRequests: new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  busPublished: new client.Counter({
    name: 'bus_messages_published_total',
    help: 'Messages published to the bus',
    labelNames: ['adapter', 'topic'] as const,
    registers: [registry],
  }),
  busConsumed: new client.Counter({
    name: 'bus_messages_consumed_total',
    help: 'Messages handled and committed by consumers',
    labelNames: ['adapter', 'topic', 'group'] as const,
    registers: [registry],
  }),
  busDeadLettered: new client.Counter({
    name: 'bus_messages_dead_lettered_total',
    help: 'Messages sent to a dead-letter topic',
    labelNames: ['adapter', 'topic', 'group'] as const,
    registers: [registry],
  }),
  busDeadLettersAlreadyRecorded: new client.Counter({
    name: 'bus_dead_letters_already_recorded_total',
    help: 'Failing messages not dead-lettered again because their dead letter is already in the DLQ (replays)',
    labelNames: ['adapter', 'topic', 'group'] as const,
    registers: [registry],
  }),
  busHandlerRetries: new client.Counter({
    name: 'bus_handler_retries_total',
    help: 'Batch handler failures that were retried',
    labelNames: ['adapter', 'topic', 'group', 'retryable'] as const,
    registers: [registry],
  }),
  busConsumerCrashes: new client.Counter({
    name: 'bus_consumer_crashes_total',
    help: 'Consumer crashes (kafkajs CRASH events), by who restarts the consumer: kafkajs itself or the bus',
    labelNames: ['adapter', 'group', 'restarted_by'] as const,
    registers: [registry],
  }),
  busConsumerRestarts: new client.Counter({
    name: 'bus_consumer_restarts_total',
    help: 'Restarts of a crashed consumer by the bus (with backoff), attempted',
    labelNames: ['adapter', 'group'] as const,
    registers: [registry],
  }),
  busBatchSeconds: new client.Histogram({
    name: 'bus_batch_duration_seconds',
    help: 'Time to handle and commit one batch',
    labelNames: ['adapter', 'topic', 'group'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  storeRowsInserted: new client.Counter({
    name: 'store_rows_inserted_total',
    help: 'Rows handed to the store in batch inserts',
    labelNames: ['adapter', 'table'] as const,
    registers: [registry],
  }),
  storeInsertSeconds: new client.Histogram({
    name: 'store_insert_duration_seconds',
    help: 'Batch insert duration',
    labelNames: ['adapter', 'table'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  storeQuerySeconds: new client.Histogram({
    name: 'store_query_duration_seconds',
    help: 'Query duration',
    labelNames: ['adapter'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  storeErrors: new client.Counter({
    name: 'store_errors_total',
    help: 'Store operations that failed',
    labelNames: ['adapter', 'operation'] as const,
    registers: [registry],
  }),
  queueJobs: new client.Counter({
    name: 'queue_jobs_total',
    help: 'Jobs by outcome (completed, failed, timeout, cancelled, retried)',
    labelNames: ['adapter', 'name', 'outcome'] as const,
    registers: [registry],
  }),
  queueJobSeconds: new client.Histogram({
    name: 'queue_job_duration_seconds',
    help: 'Enqueue-to-result time seen by the caller',
    labelNames: ['adapter', 'name'] as const,
    buckets: seconds,
    registers: [registry],
  }),
  jobsCancelled: new client.Counter({
    name: 'jobs_cancelled_total',
    help: 'Jobs cancelled because their caller was answered: reason deadline or caller_gone; stage waiting (withdrawn before it started) or running (aborted)',
    labelNames: ['adapter', 'job', 'reason', 'stage'] as const,
    registers: [registry],
  }),
};
