/**
 * What /health says about one consumer, from its status (bus.ts). A consumer
 * is `ok` only once it has joined its group and is fetching: one that never
 * consumed is not reported ok on the strength of being constructed, and an
 * idle topic with nothing to consume does not keep it degraded. Otherwise:
 *  - `down` once stopped;
 *  - `degraded` after a crash, with its reason, until it has joined and
 *    fetched again (the bus restarts it with backoff meanwhile);
 *  - `degraded` while a retryable failure is being retried (dependency down);
 *  - `degraded` while starting: not yet joined, or joined and not yet fetched.
 * The facts (last batch, join, restarts) are shown in every case.
 */
import type { ProbeResult } from '../health.js';
import type { ConsumerStatus } from './bus.js';

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export function consumerHealth(s: ConsumerStatus, now = Date.now()): ProbeResult {
  const facts = {
    topics: s.topics,
    last_batch_at: iso(s.lastBatchAt),
    joined_at: iso(s.joinedAt),
    restarts: s.restarts,
  };
  if (!s.running) return { status: 'down', reason: 'consumer stopped', ...facts };
  if (s.crash) {
    const next =
      s.crash.nextRestartAt === undefined
        ? 'restarting'
        : `restart in ${Math.max(0, Math.ceil((s.crash.nextRestartAt - now) / 1000))} s`;
    return {
      status: 'degraded',
      reason: `crashed ${iso(s.crash.at)}: ${s.crash.reason}; ${next}`,
      ...facts,
    };
  }
  if (s.stalledReason) return { status: 'degraded', reason: `retrying: ${s.stalledReason}`, ...facts };
  if (s.joinedAt === undefined) return { status: 'degraded', reason: 'starting: not joined its group yet', ...facts };
  if (s.lastFetchAt === undefined && s.lastBatchAt === undefined)
    return { status: 'degraded', reason: 'starting: joined its group, not fetching yet', ...facts };
  return { status: 'ok', ...facts };
}
