/**
 * The sign-in-with-x store a process uses: in Redis when the API replicas
 * share payment state (PAYMENT_REPLAY_STORE, as the replay guard), in memory
 * otherwise.
 */
import { MemorySiwxStore } from './memory-siwx-store.js';
import { RedisSiwxStore } from './redis-siwx-store.js';
import type { SiwxStore } from './siwx-store.js';

export function createSiwxStore(options: {
  store: 'memory' | 'redis';
  redisUrl?: string;
  prefix?: string;
  /** The memory adapter's bound. */
  maxEntitlements: number;
}): SiwxStore {
  if (options.store === 'redis') {
    if (!options.redisUrl) throw new Error('the redis sign-in-with-x store needs a Redis URL');
    return new RedisSiwxStore(options.redisUrl, options.prefix);
  }
  return new MemorySiwxStore({ maxEntitlements: options.maxEntitlements });
}
