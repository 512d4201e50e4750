/**
 * A bus whose publishes report to an OperationHealth (core/operation-health.ts),
 * so /health's `bus` turns degraded on the first failed publish and ok on the
 * first successful one. Everything else passes through.
 */
import type { OperationHealth } from '../operation-health.js';
import type { Bus } from './bus.js';

export function observedBus(bus: Bus, health: OperationHealth): Bus {
  return {
    get adapter() {
      return bus.adapter;
    },
    ensureTopics: (topics) => bus.ensureTopics(topics),
    publish: (topic, messages) => health.track('publish', () => bus.publish(topic, messages)),
    consume: (options) => bus.consume(options),
    resetOffsets: (groupId, topic, from) => bus.resetOffsets(groupId, topic, from),
    committedOffsets: (groupId, topic) => bus.committedOffsets(groupId, topic),
    endOffsets: (topic) => bus.endOffsets(topic),
    deadLetterSummary: (topics, options) => bus.deadLetterSummary(topics, options),
    readTopic: (topic, onMessage) => bus.readTopic(topic, onMessage),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}
