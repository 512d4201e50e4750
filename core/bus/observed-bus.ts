/**
 * A bus whose publishes report to an OperationHealth (core/operation-health.ts),
 * so /health's `bus` turns degraded on the first failed publish and ok on the
 * first successful one. Everything else passes through.
 */
import type { OperationHealth } from '../operation-health.js';
import type { Bus } from './bus.js';
import { forwardingBus } from './forwarding-bus.js';

export function observedBus(bus: Bus, health: OperationHealth): Bus {
  return forwardingBus(bus, {
    publish: (topic, messages) => health.track('publish', () => bus.publish(topic, messages)),
  });
}
