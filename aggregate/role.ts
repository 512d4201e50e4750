/** The aggregate role: consumes events, derives metrics, writes the store in batches. */
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import type { Consumer } from '../core/bus/bus.js';
import { consumerHealth } from '../core/bus/consumer-health.js';
import { TOPICS } from '../core/topics.js';
import { CONSUMER_GROUPS } from './consumer-groups.js';
import { PaperExecutor } from './paper-execution.js';
import { deadLetterProbe } from './dead-letter-health.js';
import { batchWrites } from './store-batching.js';

/** How often paper executions are attempted (they wait for their inputs in the store). */
const PAPER_EXECUTION_INTERVAL_MS = 1000;

export async function startAggregate(ctx: RoleContext): Promise<RunningRole> {
  const bus = need(ctx.bus, 'bus', 'aggregate');
  const store = need(ctx.store, 'store', 'aggregate');
  const logger = ctx.logger.child({ role: 'aggregate' });
  // The consumers' writes, grouped per table (STORE_BATCH_*): each batch handler awaits the insert that carried
  // its rows, so its offsets are still committed only once they are stored.
  const writes = batchWrites(store, ctx.config);
  const consumingBus = writes.consumingBus(bus);
  await bus.ensureTopics(Object.values(TOPICS));
  // All groups at once: kafkajs' run() waits until the group is joined and synced, and joining a group whose
  // members are busy waits for their current batch, so one after another the waits add up (a second replica
  // took 9 s to start next to a busy one in bench:pipeline, 0.3 s alone).
  const started = await Promise.allSettled(
    CONSUMER_GROUPS.map((group) => group.start(consumingBus, writes.store, logger, ctx.config)),
  );
  const consumers: Consumer[] = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(consumers.map((c) => c.stop()));
    throw failed.reason;
  }
  for (const consumer of consumers) {
    ctx.health.register(consumer.status.groupId, async () => consumerHealth(consumer.status));
  }
  ctx.health.register('dead_letters', deadLetterProbe(bus, [...new Set(CONSUMER_GROUPS.flatMap((g) => g.topics))]));
  // One paper executor per deployment (AGGREGATE_PAPER_EXECUTOR): it works on the stored rows, not on a partition.
  const paper = ctx.config.AGGREGATE_PAPER_EXECUTOR ? new PaperExecutor(store, logger) : undefined;
  if (paper) {
    paper.start(PAPER_EXECUTION_INTERVAL_MS);
    ctx.health.register('aggregate.paper_executions', async () => {
      const s = paper.status;
      if (!s.running) return { status: 'down', reason: 'paper executor stopped' };
      const facts = {
        executed: s.executed,
        waiting: s.waiting,
        last_run_at: s.lastRunAt ? new Date(s.lastRunAt).toISOString() : null,
      };
      if (s.lastError) return { status: 'degraded', reason: `last run failed: ${s.lastError}`, ...facts };
      return { status: 'ok', ...facts };
    });
  }
  return {
    name: 'aggregate',
    stop: async () => {
      // Draining first: the in-flight batches' rows are inserted now rather than after the wait, then committed.
      const drained = writes.drain();
      await Promise.all([...consumers.map((c) => c.stop()), paper?.stop(), drained]);
    },
  };
}
