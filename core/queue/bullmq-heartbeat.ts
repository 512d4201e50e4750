/**
 * Worker heartbeats of the BullMQ adapter: "a worker able to take a job of
 * this name is running", which a Redis PING cannot say (issue 23: the API
 * reported the queue ok while no worker had reconnected). Every
 * HEARTBEAT_INTERVAL_MS a worker process sets `<prefix>:worker-heartbeat:<name>`
 * with a TTL of HEARTBEAT_TTL_MS for each job name whose BullMQ Worker is
 * running; the caller side reads them with one MGET. A key per job name (not
 * per process): any live worker keeps it fresh, and Redis expires it on its
 * own clock (no clock skew between hosts). A worker that stops (drain, crash,
 * lost Redis) is no longer seen within the TTL; the key is not deleted on a
 * clean stop, since another process may serve the same name.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { describeError } from './redis-connection.js';

export const HEARTBEAT_INTERVAL_MS = 1000;
export const HEARTBEAT_TTL_MS = 3500;

export function heartbeatKey(prefix: string, name: string): string {
  return `${prefix}:worker-heartbeat:${name}`;
}

/** Writes the heartbeats of the job names `serving()` answers, now and every interval, until `stop()`. */
export function startHeartbeats(
  client: Redis,
  prefix: string,
  identity: string,
  serving: () => string[],
  logger: Logger,
): { beat(): Promise<void>; stop(): void } {
  let failing = false;
  const beat = async () => {
    const names = serving();
    // The caller's connection has no offline queue: while Redis is away a beat fails at once and is skipped.
    if (names.length === 0 || client.status !== 'ready') return;
    const batch = client.pipeline();
    for (const name of names) batch.set(heartbeatKey(prefix, name), identity, 'PX', HEARTBEAT_TTL_MS);
    try {
      const results = (await batch.exec()) ?? [];
      const err = results.find(([e]) => e)?.[0];
      if (err) throw err;
      if (failing) logger.info({ jobs: names.length }, 'worker heartbeats written again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err: describeError(err) }, 'worker heartbeat not written');
      failing = true;
    }
  };
  const timer = setInterval(() => void beat(), HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return { beat, stop: () => clearInterval(timer) };
}

/** The names among `names` with a fresh heartbeat. */
export async function freshHeartbeats(client: Redis, prefix: string, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const values = await client.mget(...names.map((n) => heartbeatKey(prefix, n)));
  return new Set(names.filter((_, i) => values[i] !== null));
}
