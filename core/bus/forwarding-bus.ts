/**
 * The base of the bus decorators (observed-bus.ts, schema-version-header.ts):
 * a Bus that forwards every call to the bus it wraps, unchanged, except the
 * methods the decorator replaces. Its `adapter` is the wrapped bus's.
 */
import type { Bus } from './bus.js';

export function forwardingBus(bus: Bus, replaced: Partial<Omit<Bus, 'adapter'>>): Bus {
  return {
    get adapter() {
      return bus.adapter;
    },
    ensureTopics: (topics) => bus.ensureTopics(topics),
    publish: (topic, messages) => bus.publish(topic, messages),
    consume: (options) => bus.consume(options),
    resetOffsets: (groupId, topic, from) => bus.resetOffsets(groupId, topic, from),
    committedOffsets: (groupId, topic) => bus.committedOffsets(groupId, topic),
    endOffsets: (topic) => bus.endOffsets(topic),
    deadLetterSummary: (topics, options) => bus.deadLetterSummary(topics, options),
    readTopic: (topic, onMessage) => bus.readTopic(topic, onMessage),
    ping: () => bus.ping(),
    close: () => bus.close(),
    ...replaced,
  };
}
