/** The aggregate role: consumes events, derives metrics, writes the store in batches. */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import type { Consumer } from '../core/bus/bus.js';
import { TOPICS } from '../core/topics.js';
import { startHeartbeatSink } from './heartbeat-sink.js';

export async function startAggregate(ctx: RoleContext): Promise<RunningRole> {
  const bus = need(ctx.bus, 'bus', 'aggregate');
  const store = need(ctx.store, 'store', 'aggregate');
  await bus.ensureTopics(Object.values(TOPICS));
  const consumers: Consumer[] = [await startHeartbeatSink(bus, store)];
  for (const consumer of consumers) {
    ctx.health.register(consumer.status.groupId, async () => {
      const s = consumer.status;
      if (!s.running) return { status: 'down', reason: 'consumer stopped' };
      if (s.stalledReason) return { status: 'degraded', reason: `retrying: ${s.stalledReason}`, topics: s.topics };
      return { status: 'ok', topics: s.topics, last_batch_at: s.lastBatchAt ? new Date(s.lastBatchAt).toISOString() : null };
    });
  }
  return {
    name: 'aggregate',
    stop: async () => {
      await Promise.all(consumers.map((c) => c.stop()));
    },
  };
}
