/**
 * Stamps every published message with its topic's schema version (header
 * `schema_version`, core/events/contracts.ts), so a consumer, a replay or an
 * operator reading a DLQ knows which version of the contract a value follows
 * without parsing it. A header the producer set itself is kept. Topics
 * without a contract get no header. Messages without headers share one
 * headers object per topic (a batch is thousands of messages).
 */
import type { Bus, OutgoingMessage } from './bus.js';
import { forwardingBus } from './forwarding-bus.js';

export function withSchemaVersions(bus: Bus, header: string, versionOf: (topic: string) => string | undefined): Bus {
  const shared = new Map<string, Readonly<Record<string, string>>>();
  return forwardingBus(bus, {
    publish: (topic: string, messages: OutgoingMessage[]) => {
      const version = versionOf(topic);
      if (version === undefined) return bus.publish(topic, messages);
      let only = shared.get(topic);
      if (!only) shared.set(topic, (only = Object.freeze({ [header]: version })));
      const out = new Array<OutgoingMessage>(messages.length);
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i]!;
        out[i] = !m.headers
          ? { ...m, headers: only as Record<string, string> }
          : header in m.headers
            ? m
            : { ...m, headers: { ...m.headers, [header]: version } };
      }
      return bus.publish(topic, out);
    },
  });
}
