/**
 * The idempotent-retries service of the api role, from the configuration:
 * its store beside the replay lock (payments.ts's `replayStoreOf`: Redis when
 * replicas share payment state), its TTL and bounds.
 *
 *   const retries = configuredRetries(config, { terms: core.terms, store: replayStoreOf(config), log });
 *   ...on shutdown: await retries.store.close();
 */
import type { Config } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { createIdempotencyStore } from './create-idempotency-store.js';
import { IdempotentRetries, type IdempotentRetriesOptions } from './idempotent-retries.js';

type RetriesConfig = Pick<
  Config,
  | 'REDIS_URL'
  | 'QUEUE_PREFIX'
  | 'PAYMENT_IDEMPOTENCY_TTL_SECONDS'
  | 'PAYMENT_IDEMPOTENCY_MAX_ENTRY_BYTES'
  | 'PAYMENT_IDEMPOTENCY_MEMORY_MAX_MB'
>;

export function configuredRetries(
  config: RetriesConfig,
  options: { terms: IdempotentRetriesOptions['terms']; store: 'memory' | 'redis'; log?: Logger },
): IdempotentRetries {
  const store = createIdempotencyStore({
    store: options.store,
    redisUrl: config.REDIS_URL,
    prefix: `${config.QUEUE_PREFIX}:x402:idem:`,
    memoryMaxBytes: config.PAYMENT_IDEMPOTENCY_MEMORY_MAX_MB * 1024 * 1024,
  });
  return new IdempotentRetries({
    store,
    terms: options.terms,
    ttlMs: config.PAYMENT_IDEMPOTENCY_TTL_SECONDS * 1000,
    maxEntryBytes: config.PAYMENT_IDEMPOTENCY_MAX_ENTRY_BYTES,
    ...(options.log ? { log: options.log } : {}),
  });
}
