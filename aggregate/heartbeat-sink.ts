/**
 * Consumes the pipeline canary and stores it. Malformed events are
 * dead-lettered with the reason; offsets are committed only after the store
 * acknowledged the batch (the bus commits after handleBatch resolves).
 */
import type { Bus, BusMessage, BatchContext, Consumer } from '../core/bus/bus.js';
import type { Store } from '../core/store/store.js';
import { TOPICS } from '../core/topics.js';
import { HeartbeatEvent } from '../core/events/heartbeat.js';
import { insertHeartbeats } from '../core/store/tables/pipeline-heartbeats.js';

export const HEARTBEAT_GROUP = 'aggregate.heartbeats';

export async function startHeartbeatSink(bus: Bus, store: Store): Promise<Consumer> {
  return bus.consume({
    groupId: HEARTBEAT_GROUP,
    topics: [TOPICS.heartbeat],
    fromBeginning: false,
    async handleBatch(messages: BusMessage[], ctx: BatchContext) {
      const events: HeartbeatEvent[] = [];
      for (const message of messages) {
        const parsed = HeartbeatEvent.safeParse(safeJson(message.value));
        if (parsed.success) events.push(parsed.data);
        else
          await ctx.deadLetter(
            message,
            `invalid heartbeat: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
          );
      }
      await insertHeartbeats(store, events);
    },
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
