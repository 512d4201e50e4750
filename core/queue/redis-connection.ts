/**
 * The BullMQ adapter's caller-side Redis connection and how Redis trouble is
 * reported: the connection fails fast (no offline queue, few retries) so an
 * enqueue during an outage errors at once instead of piling up; start-up
 * waits at most connectTimeoutMs for Redis to answer, else a DependencyError
 * naming REDIS_URL (credentials redacted), and warns when maxmemory-policy is
 * not `noeviction`. Connection errors are logged at most once per 5 s per
 * source, since a down Redis emits one per reconnect attempt.
 *
 * Every connection of the adapter (caller, events, workers) reconnects with
 * `reconnectDelay`: BullMQ's default grows as e^attempt up to 20 s, and its
 * worker waited `runRetryDelay` (15 s) after a lost blocking call, so after a
 * Redis restart a worker took no job for 12-16 s (issue 23).
 */
import { Redis } from 'ioredis';
import { withTimeout } from '../backoff.js';
import { DependencyError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface RedisConnectOptions {
  redisUrl: string;
  /** Redis key prefix; names the connection. */
  prefix: string;
  connectTimeoutMs: number;
  logger: Logger;
}

/** Connects the caller side's client; answers it and the redacted URL. */
export async function connectCallerRedis(options: RedisConnectOptions): Promise<{ client: Redis; where: string }> {
  const { redisUrl, connectTimeoutMs, logger } = options;
  const where = redactUrl(redisUrl);
  let lastError: unknown;
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 2,
    retryStrategy: reconnectDelay,
    connectionName: `${options.prefix}:caller`,
  });
  const onError = throttledLog(logger, 'Redis connection error (caller side)');
  client.on('error', (err) => {
    lastError = err;
    onError(err);
  });
  let info: string;
  try {
    info = await withTimeout(
      client.connect().then(() => client.info('memory')),
      connectTimeoutMs,
      () => new Error(`no answer within ${connectTimeoutMs} ms`),
    );
  } catch (err) {
    client.disconnect();
    throw new DependencyError(
      'REDIS_URL',
      `Redis at ${where} is unreachable or did not answer within ${connectTimeoutMs} ms: ${describeError(lastError ?? err)}`,
      { cause: lastError ?? err },
    );
  }
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy !== 'noeviction') {
    logger.warn(
      { redis: where, maxmemory_policy: policy ?? 'unknown' },
      'Redis maxmemory-policy is not noeviction: Redis may evict queued jobs under memory pressure',
    );
  }
  return { client, where };
}

/** Reconnect delay after `attempt` failed attempts: 100 ms, 200 ms, ... capped at 1 s (one attempt a second while Redis is away). */
export function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 100, 1000);
}

/** The URL without credentials, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username) u.username = '***';
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

/** Node's connection errors are sometimes AggregateErrors with an empty message. */
export function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map(describeError).join('; ');
  if (err instanceof Error) return err.message || (err as { code?: string }).code || err.name;
  return String(err);
}

/** Logs an error at most once per 5 s per source (a down Redis emits one per reconnect attempt). */
export function throttledLog(logger: Logger, message: string): (err: Error) => void {
  let last = 0;
  let suppressed = 0;
  return (err: Error) => {
    const now = Date.now();
    if (now - last < 5000) {
      suppressed++;
      return;
    }
    last = now;
    logger.warn({ err: describeError(err), suppressed }, message);
    suppressed = 0;
  };
}
