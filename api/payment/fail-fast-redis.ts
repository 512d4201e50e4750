/**
 * The Redis client of the payment state (replay guard, nonce lease, stored answers, entitlements): it fails fast
 * instead of queueing commands while Redis is down (one retry per request, a 2 s connect timeout by default), so
 * the caller answers 503 or retries; reconnects back off to 2 s. Connection errors are not thrown as events: they
 * surface through the failing command and the health probes.
 */
import { Redis } from 'ioredis';

export function failFastRedis(url: string, connectTimeoutMs = 2000): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: connectTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  redis.on('error', () => undefined);
  return redis;
}
