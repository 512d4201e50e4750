/**
 * The `dead_letters` component of the aggregate's /health: per topic the
 * role reads, how many dead letters its DLQ holds (written by any process,
 * any run), how many are recent, and the newest one's reason and origin.
 * `degraded` while dead letters are recent (RECENT_WINDOW_MS): messages are
 * being set aside and someone should look (`npm run dlq -- list`).
 */
import type { Bus } from '../core/bus/bus.js';
import type { HealthProbe } from '../core/health.js';

export const RECENT_WINDOW_MS = 5 * 60_000;

export function deadLetterProbe(bus: Bus, topics: readonly string[]): HealthProbe {
  return async () => {
    const summary = await bus.deadLetterSummary([...topics], { recentWindowMs: RECENT_WINDOW_MS, waitMs: 1000 });
    const perTopic: Record<string, unknown> = {};
    let recent = 0;
    let newest: { topic: string; reason: string; at: string } | undefined;
    for (const topic of topics) {
      const s = summary[topic]!;
      recent += s.recent;
      perTopic[topic] = {
        count: s.count,
        recent: s.recent,
        ...(s.last
          ? {
              last_reason: s.last.reason,
              last_at: s.last.failedAt,
              last_origin: `${s.last.topic}[${s.last.partition}]@${s.last.offset} (group ${s.last.group})`,
            }
          : {}),
        ...(s.complete ? {} : { reading: true }),
      };
      if (s.last && (!newest || s.last.failedAt > newest.at))
        newest = { topic, reason: s.last.reason, at: s.last.failedAt };
    }
    const facts = { recent_window_s: RECENT_WINDOW_MS / 1000, topics: perTopic };
    if (recent > 0 && newest) {
      return {
        status: 'degraded',
        reason: `${recent} message(s) dead-lettered in the last ${RECENT_WINDOW_MS / 60_000} min; newest on ${newest.topic}: ${newest.reason}`,
        ...facts,
      };
    }
    return { status: 'ok', ...facts };
  };
}
