/**
 * The idempotency store a process uses: in Redis when the API replicas share
 * payment state (the same choice as the replay guard, PAYMENT_REPLAY_STORE),
 * in memory otherwise.
 */
import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryIdempotencyStore } from './memory-idempotency-store.js';
import { RedisIdempotencyStore } from './redis-idempotency-store.js';

export function createIdempotencyStore(options: {
  store: 'memory' | 'redis';
  redisUrl?: string;
  prefix?: string;
  /** The memory adapter's budget (bytes). */
  memoryMaxBytes: number;
}): IdempotencyStore {
  if (options.store === 'redis') {
    if (!options.redisUrl) throw new Error('the redis idempotency store needs a Redis URL');
    return new RedisIdempotencyStore(options.redisUrl, options.prefix);
  }
  return new MemoryIdempotencyStore({ maxBytes: options.memoryMaxBytes });
}
