import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import { DLQ_HEADERS, type Bus, type BusMessage } from '../../core/bus/bus.js';
import { testLogger } from '../helpers/config.js';

async function drain(
  bus: ReturnType<typeof namespaced>,
  groupId: string,
  topic: string,
  expected: number,
  rejectPoison = true,
): Promise<BusMessage[]> {
  const seen: BusMessage[] = [];
  const consumer = await bus.consume({
    groupId,
    topics: [topic],
    handleBatch: async (messages, ctx) => {
      for (const m of messages) {
        if (rejectPoison && m.value === 'poison') await ctx.deadLetter(m, 'poison pill');
        else seen.push(m);
      }
    },
  });
  const until = Date.now() + 30_000; // a ceiling for a busy machine: the loop ends as soon as they are in
  while (seen.length < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await consumer.stop();
  return seen;
}

describe('namespaced bus (BUS_NAMESPACE)', () => {
  it('keeps namespaces apart, hands plain topic names to handlers, and dead-letters inside the namespace', async () => {
    const raw = await createMemoryBus({
      partitions: 3,
      batchSize: 100,
      maxAttempts: 1,
      retryBackoffMs: 1,
      logger: testLogger(),
    });
    const staging = namespaced(raw, 'staging.');
    const prod = namespaced(raw, 'prod.');
    await staging.ensureTopics(['md.quotes.v1']);
    await prod.ensureTopics(['md.quotes.v1']);
    await staging.publish('md.quotes.v1', [
      { key: 'ETH/USD', value: 'a' },
      { key: 'ETH/USD', value: 'poison' },
      { key: 'ETH/USD', value: 'b' },
    ]);
    await prod.publish('md.quotes.v1', [{ key: 'ETH/USD', value: 'p' }]);

    const stagingSeen = await drain(staging, 'g', 'md.quotes.v1', 2);
    expect(stagingSeen.map((m) => m.value)).toEqual(['a', 'b']);
    expect(stagingSeen.every((m) => m.topic === 'md.quotes.v1')).toBe(true);
    const prodSeen = await drain(prod, 'g', 'md.quotes.v1', 1);
    expect(prodSeen.map((m) => m.value)).toEqual(['p']);

    const physical = Object.values(await raw.endOffsets('staging.md.quotes.v1')).reduce((a, o) => a + Number(o), 0);
    expect(physical).toBe(3);
    expect(Object.values(await staging.committedOffsets('g', 'md.quotes.v1')).reduce((a, o) => a + Number(o), 0)).toBe(
      3,
    );

    const dlq = await drain(namespaced(raw, ''), 'dlq-reader', 'staging.md.quotes.v1.dlq', 1, false);
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.value).toBe('poison');
    expect(dlq[0]!.headers[DLQ_HEADERS.topic]).toBe('staging.md.quotes.v1');
    expect(dlq[0]!.headers[DLQ_HEADERS.reason]).toBe('poison pill');
    await raw.close();
  });

  it('hands messages through without reading them: a field is read from the delivered message only when the handler reads it', async () => {
    const raw = await createMemoryBus({
      partitions: 1,
      batchSize: 100,
      maxAttempts: 1,
      retryBackoffMs: 1,
      logger: testLogger(),
    });
    let valueReads = 0;
    // An adapter that decodes on read, like the Kafka one: counts the reads of `value`.
    const counting = (m: BusMessage): BusMessage => ({
      ...m,
      get value() {
        valueReads += 1;
        return m.value;
      },
    });
    const decodingOnRead: Bus = {
      adapter: raw.adapter,
      ensureTopics: (t) => raw.ensureTopics(t),
      publish: (t, m) => raw.publish(t, m),
      consume: (o) => raw.consume({ ...o, handleBatch: (messages, ctx) => o.handleBatch(messages.map(counting), ctx) }),
      resetOffsets: (g, t, f) => raw.resetOffsets(g, t, f),
      committedOffsets: (g, t) => raw.committedOffsets(g, t),
      endOffsets: (t) => raw.endOffsets(t),
      deadLetterSummary: (t, o) => raw.deadLetterSummary(t, o),
      readTopic: (t, f) => raw.readTopic(t, f),
      ping: () => raw.ping(),
      close: () => raw.close(),
    };
    const bus = namespaced(decodingOnRead, 'lazy.');
    await bus.publish('t', [
      { key: 'k1', value: 'v1', headers: { h: '1' }, timestamp: 1234 },
      { key: 'k2', value: 'v2' },
    ]);
    const keys: string[] = [];
    let first: BusMessage | undefined;
    const consumer = await bus.consume({
      groupId: 'g',
      topics: ['t'],
      handleBatch: async (messages) => {
        for (const m of messages) keys.push(m.key);
        first ??= messages[0];
      },
    });
    const until = Date.now() + 30_000; // a ceiling for a busy machine: the loop ends as soon as they are in
    while (keys.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await consumer.stop();
    expect(keys).toEqual(['k1', 'k2']);
    expect(valueReads).toBe(0);
    expect({
      topic: first!.topic,
      partition: first!.partition,
      offset: first!.offset,
      key: first!.key,
      value: first!.value,
      headers: first!.headers,
      timestamp: first!.timestamp,
    }).toEqual({
      topic: 't',
      partition: 0,
      offset: '0',
      key: 'k1',
      value: 'v1',
      headers: { h: '1' },
      timestamp: 1234,
    });
    expect(valueReads).toBe(1);
    await raw.close();
  });
});
