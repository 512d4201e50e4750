/**
 * Bus port contract (core/bus/bus.ts): the same suite against the in-process
 * adapter and against Kafka (brokers from KAFKA_BROKERS, started by
 * `npm run engines:up`). Every test uses its own topics and groups.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { DLQ_HEADERS, dlqTopic, type Bus, type BusMessage, type Consumer, type ConsumerOptions, type OutgoingMessage, type PartitionOffsets } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { DependencyError } from '../../core/errors.js';
import { metrics } from '../../core/metrics.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const config = testConfig();
const logger = testLogger();
const PARTITIONS = 3;
const common = { partitions: PARTITIONS, batchSize: 100, maxAttempts: 3, retryBackoffMs: 10, logger };

const adapters: { name: 'memory' | 'kafka'; create: () => Promise<Bus> }[] = [
  { name: 'memory', create: () => createMemoryBus(common) },
  {
    name: 'kafka',
    create: () => createKafkaBus({ ...common, brokers: config.KAFKA_BROKERS, clientId: uniqueName('bus-contract'), connectTimeoutMs: 10000 }),
  },
];

/** The partition kafkajs' DefaultPartitioner (murmur2) picks for a key: what both adapters must use. */
const partitionMetadata: PartitionMetadata[] = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
const kafkajsPartitioner = Partitioners.DefaultPartitioner();
const expectedPartition = (key: string) => kafkajsPartitioner({ topic: 'any', partitionMetadata, message: { key, value: null } });

const sum = (offsets: PartitionOffsets) => Object.values(offsets).reduce((a, o) => a + Number(o), 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function counterValue(counter: { get(): Promise<{ values: { value: number; labels: Record<string, string | number> }[] }> }, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)).reduce((a, v) => a + v.value, 0);
}

describe.each(adapters)('bus contract: $name adapter', ({ name, create }) => {
  let bus: Bus;
  const started: Consumer[] = [];

  beforeAll(async () => {
    bus = await create();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((c) => c.stop()));
  });
  afterAll(async () => {
    await bus?.close();
  });

  async function consume(options: ConsumerOptions): Promise<Consumer> {
    const consumer = await bus.consume(options);
    started.push(consumer);
    return consumer;
  }

  /** A consumer that records everything it gets. */
  async function collect(topic: string, groupId: string, extra: Partial<Omit<ConsumerOptions, 'handleBatch'>> = {}, delayMs = 0) {
    const received: BusMessage[] = [];
    const consumer = await consume({
      groupId,
      topics: [topic],
      async handleBatch(messages) {
        if (delayMs) await sleep(delayMs);
        received.push(...messages);
      },
      ...extra,
    });
    return { consumer, received };
  }

  async function readDlq(topic: string, count: number): Promise<BusMessage[]> {
    const { consumer, received } = await collect(dlqTopic(topic), uniqueName('dlq_reader'));
    await eventually(async () => received.length, (n) => n >= count, 30000, 20);
    await consumer.stop();
    return received;
  }

  it('hands a backlog over in equal batches of at most maxBatchSize (no small tail batch)', async () => {
    const topic = uniqueName('bus_chunks');
    await bus.ensureTopics([topic]);
    await bus.publish(topic, Array.from({ length: 100 }, (_, i) => ({ key: 'one-key', value: String(i) })));
    const sizes: number[] = [];
    const values: string[] = [];
    const consumer = await consume({
      groupId: uniqueName('chunks'),
      topics: [topic],
      maxBatchSize: 37,
      async handleBatch(messages) {
        sizes.push(messages.length);
        for (const m of messages) values.push(m.value);
      },
    });
    await eventually(async () => values.length, (n) => n >= 100, 30000, 20);
    await consumer.stop();
    expect(values).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(37);
    // The memory bus holds the whole backlog at once; Kafka cuts each fetch (whose size the broker decides) the
    // same way (equalChunkSize, test/unit/equal-chunks.test.ts).
    if (name === 'memory') expect(sizes).toEqual([34, 33, 33]);
  });

  it('keeps each key in order across many keys and partitions, and maps keys to kafkajs partitions', async () => {
    const topic = uniqueName('bus_order');
    await bus.ensureTopics([topic]);
    const keys = Array.from({ length: 20 }, (_, i) => `key-${i}`);
    for (let round = 0; round < 5; round++) {
      const batch: OutgoingMessage[] = [];
      for (let seq = round * 10; seq < round * 10 + 10; seq++) for (const key of keys) batch.push({ key, value: JSON.stringify({ key, seq }) });
      await bus.publish(topic, batch);
    }
    const group = uniqueName('order');
    const { received } = await collect(topic, group, { maxBatchSize: 37 });
    await eventually(async () => received.length, (n) => n >= 1000, 30000, 20);

    const seqs = new Map<string, number[]>();
    for (const m of received) {
      expect(m.topic).toBe(topic);
      expect(m.partition).toBe(expectedPartition(m.key));
      const list = seqs.get(m.key) ?? [];
      list.push((JSON.parse(m.value) as { seq: number }).seq);
      seqs.set(m.key, list);
    }
    const inOrder = Array.from({ length: 50 }, (_, i) => i);
    for (const key of keys) expect(seqs.get(key), key).toEqual(inOrder);
    expect(new Set(received.map((m) => m.partition)).size).toBeGreaterThan(1);

    // Offsets are per partition, consecutive from 0, and the end offsets count what each partition got.
    const expectedEnd: PartitionOffsets = {};
    for (let p = 0; p < PARTITIONS; p++) expectedEnd[p] = String(keys.filter((k) => expectedPartition(k) === p).length * 50);
    expect(await bus.endOffsets(topic)).toEqual(expectedEnd);
    for (let p = 0; p < PARTITIONS; p++) {
      const offsets = received.filter((m) => m.partition === p).map((m) => Number(m.offset));
      expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, i) => i));
    }
    await eventually(() => bus.committedOffsets(group, topic), (c) => JSON.stringify(c) === JSON.stringify(expectedEnd), 15000, 50);
  });

  it('publishes one call larger than the broker accepts in a single batch (3 MB, one key), in order', async () => {
    const topic = uniqueName('bus_big');
    await bus.ensureTopics([topic]);
    const pad = 'x'.repeat(1000);
    const batch: OutgoingMessage[] = Array.from({ length: 3000 }, (_, i) => ({ key: 'ETH/USD', value: `${i}:${pad}` }));
    await bus.publish(topic, batch);
    const { received } = await collect(topic, uniqueName('big'));
    await eventually(async () => received.length, (n) => n >= 3000, 30000, 50);
    expect(received.map((m) => Number(m.value.split(':')[0]))).toEqual(batch.map((_, i) => i));
  });

  it('puts the same key in the same partition as kafkajs would (end offsets)', async () => {
    const topic = uniqueName('bus_keys');
    await bus.ensureTopics([topic]);
    const keys = ['BTC-USDT', 'ETH-USDT', 'SOL-USDT', 'BTC-USDC', 'ETH-USDC', 'WETH-USDC', 'cbBTC-USDC', 'AERO-USDC'];
    const expected = keys.map(expectedPartition);
    expect(new Set(expected).size).toBeGreaterThan(1);
    // Key i gets 2^i messages: each partition's end offset is a bit mask of the keys it holds.
    const batch: OutgoingMessage[] = [];
    keys.forEach((key, i) => {
      for (let n = 0; n < 2 ** i; n++) batch.push({ key, value: `${key}#${n}` });
    });
    await bus.publish(topic, batch);
    const end = await bus.endOffsets(topic);
    const actual = keys.map((_, i) => Object.entries(end).filter(([, o]) => (Number(o) >> i) & 1).map(([p]) => Number(p)));
    expect(actual).toEqual(expected.map((p) => [p]));
  });

  it('resumes a group after a restart with exactly the uncommitted rest', async () => {
    const topic = uniqueName('bus_resume');
    await bus.ensureTopics([topic]);
    const group = uniqueName('resume');
    const msg = (id: number): OutgoingMessage => ({ key: `k${id % 6}`, value: String(id) });
    await bus.publish(topic, Array.from({ length: 60 }, (_, i) => msg(i)));

    const first = await collect(topic, group, { maxBatchSize: 10 }, 30);
    await eventually(async () => first.received.length, (n) => n >= 20, 30000, 5);
    await first.consumer.stop();
    expect(first.consumer.status.running).toBe(false);
    const got1 = first.received.map((m) => Number(m.value));
    // stop() let the in-flight batch finish and commit: what was handled is exactly what is committed.
    expect(sum(await bus.committedOffsets(group, topic))).toBe(got1.length);

    await bus.publish(topic, Array.from({ length: 20 }, (_, i) => msg(60 + i)));
    const second = await collect(topic, group, { maxBatchSize: 10 });
    await eventually(async () => got1.length + second.received.length, (n) => n >= 80, 30000, 20);
    await sleep(200);
    const got2 = second.received.map((m) => Number(m.value));
    expect(got2.filter((id) => got1.includes(id))).toEqual([]); // none of the committed ones again
    expect(new Set([...got1, ...got2]).size).toBe(got1.length + got2.length); // no duplicates
    expect([...got1, ...got2].sort((a, b) => a - b)).toEqual(Array.from({ length: 80 }, (_, i) => i)); // nothing lost
    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 80, 15000, 50);
    expect(sum(await bus.endOffsets(topic))).toBe(80);
  });

  it('retries a retryable failure, redelivers the same messages and commits once after success', async () => {
    const topic = uniqueName('bus_retry');
    await bus.ensureTopics([topic]);
    await bus.publish(topic, Array.from({ length: 5 }, (_, i) => ({ key: 'one-key', value: String(i) })));
    const group = uniqueName('retry');
    const calls: string[][] = [];
    const stalled: (string | undefined)[] = [];
    const ref: { consumer?: Consumer } = {}; // the memory adapter may call the handler before consume() returns
    const consumer = await consume({
      groupId: group,
      topics: [topic],
      retryBackoffMs: 20,
      async handleBatch(messages) {
        calls.push(messages.map((m) => m.offset));
        stalled.push(ref.consumer?.status.stalledReason);
        if (calls.length <= 2) throw new DependencyError('store', 'down for a moment');
      },
    });
    ref.consumer = consumer;
    await expect(bus.consume({ groupId: group, topics: [topic], handleBatch: async () => {} })).rejects.toThrow(/already has a running consumer/);

    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 5, 30000, 20);
    expect(calls).toHaveLength(3);
    expect(calls[1]).toEqual(calls[0]);
    expect(calls[2]).toEqual(calls[0]);
    expect(calls[0]).toEqual(['0', '1', '2', '3', '4']);
    expect(stalled[2]).toBe('store: down for a moment');
    expect(consumer.status.stalledReason).toBeUndefined();
    expect(consumer.status.lastBatchAt).toBeTypeOf('number');
    expect(await bus.committedOffsets(group, topic)).toEqual({ [expectedPartition('one-key')]: '5' });
    const labels = { adapter: name, topic, group };
    expect(await counterValue(metrics.busConsumed, labels)).toBe(5); // committed once
    expect(await counterValue(metrics.busHandlerRetries, { ...labels, retryable: 'true' })).toBe(2);
    expect(await counterValue(metrics.busDeadLettered, labels)).toBe(0);
  });

  it('leaves the offsets uncommitted when stopped while the handler keeps failing', async () => {
    const topic = uniqueName('bus_stall');
    await bus.ensureTopics([topic]);
    await bus.publish(topic, Array.from({ length: 5 }, (_, i) => ({ key: 'stall', value: String(i) })));
    const group = uniqueName('stall');
    let calls = 0;
    const failing = await consume({
      groupId: group,
      topics: [topic],
      retryBackoffMs: 20,
      async handleBatch() {
        calls++;
        throw new DependencyError('store', 'down');
      },
    });
    await eventually(async () => calls, (n) => n >= 3, 30000, 10);
    expect(failing.status.stalledReason).toBe('store: down');
    await failing.stop();
    expect(await bus.committedOffsets(group, topic)).toEqual({});
    expect(await bus.endOffsets(topic)).toMatchObject({ [expectedPartition('stall')]: '5' });

    const next = await collect(topic, group);
    await eventually(async () => next.received.length, (n) => n >= 5, 30000, 20);
    expect(next.received.map((m) => m.value)).toEqual(['0', '1', '2', '3', '4']);
    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 5, 15000, 50);
  });

  it('dead-letters a poison message with its origin while the rest of its batch is processed and committed', async () => {
    const topic = uniqueName('bus_poison');
    await bus.ensureTopics([topic]);
    const t0 = Date.now();
    await bus.publish(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ key: 'pk', value: i === 6 ? 'poison' : `ok-${i}`, headers: { trace: `t${i}` } })),
    );
    const group = uniqueName('poison');
    const processed: string[] = [];
    await consume({
      groupId: group,
      topics: [topic],
      maxAttempts: 2,
      retryBackoffMs: 5,
      async handleBatch(messages) {
        const bad = messages.find((m) => m.value === 'poison');
        if (bad) throw new Error(`cannot parse message at offset ${bad.offset}`);
        processed.push(...messages.map((m) => m.value));
      },
    });
    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 10, 30000, 20);
    expect(processed.sort()).toEqual(['ok-0', 'ok-1', 'ok-2', 'ok-3', 'ok-4', 'ok-5', 'ok-7', 'ok-8', 'ok-9']);

    const [dead, ...more] = await readDlq(topic, 1);
    expect(more).toEqual([]);
    expect(dead!.key).toBe('pk');
    expect(dead!.value).toBe('poison');
    expect(dead!.partition).toBe(expectedPartition('pk'));
    const h = dead!.headers;
    expect(h.trace).toBe('t6');
    expect(h[DLQ_HEADERS.reason]).toBe('cannot parse message at offset 6');
    expect(h[DLQ_HEADERS.topic]).toBe(topic);
    expect(h[DLQ_HEADERS.partition]).toBe(String(expectedPartition('pk')));
    expect(h[DLQ_HEADERS.offset]).toBe('6');
    expect(h[DLQ_HEADERS.group]).toBe(group);
    expect(h[DLQ_HEADERS.attempts]).toBe('4'); // 2 with its batch + 2 alone
    const failedAt = Date.parse(h[DLQ_HEADERS.failedAt]!);
    expect(new Date(failedAt).toISOString()).toBe(h[DLQ_HEADERS.failedAt]);
    expect(failedAt).toBeGreaterThanOrEqual(t0);
    expect(failedAt).toBeLessThanOrEqual(Date.now());
    expect(await counterValue(metrics.busDeadLettered, { adapter: name, topic, group })).toBe(1);
    expect(await counterValue(metrics.busHandlerRetries, { adapter: name, topic, group, retryable: 'false' })).toBe(2);
  });

  it('sends messages to the DLQ on an explicit ctx.deadLetter and commits them with the batch', async () => {
    const topic = uniqueName('bus_explicit');
    await bus.ensureTopics([topic]);
    await bus.publish(topic, [
      { key: 'a', value: 'good-1' },
      { key: 'a', value: 'malformed', headers: { source: 'test' } },
      { key: 'a', value: 'good-2' },
    ]);
    const group = uniqueName('explicit');
    const processed: string[] = [];
    await consume({
      groupId: group,
      topics: [topic],
      async handleBatch(messages, ctx) {
        expect(ctx.signal.aborted).toBe(false);
        for (const m of messages) {
          if (m.value === 'malformed') await ctx.deadLetter(m, 'malformed payload');
          else processed.push(m.value);
        }
      },
    });
    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 3, 30000, 20);
    expect(processed).toEqual(['good-1', 'good-2']);
    const [dead] = await readDlq(topic, 1);
    expect(dead!.value).toBe('malformed');
    expect(dead!.key).toBe('a');
    expect(dead!.headers).toMatchObject({
      source: 'test',
      [DLQ_HEADERS.reason]: 'malformed payload',
      [DLQ_HEADERS.topic]: topic,
      [DLQ_HEADERS.partition]: String(expectedPartition('a')),
      [DLQ_HEADERS.offset]: '1',
      [DLQ_HEADERS.group]: group,
      [DLQ_HEADERS.attempts]: '1',
    });
  });

  it('dead-letters a message once per group: replays over it do not add copies; the summary and readTopic show the DLQ', async () => {
    const topic = uniqueName('bus_replay_dlq');
    await bus.ensureTopics([topic]);
    const t0 = Date.now();
    await bus.publish(topic, Array.from({ length: 12 }, (_, i) => ({ key: `k${i % 4}`, value: i % 3 === 0 ? `bad-${i}` : `ok-${i}` })));
    const group = uniqueName('replay_dlq');
    const other = uniqueName('replay_dlq_other');
    const run = async (groupId: string, explicit: boolean) => {
      const consumer = await consume({
        groupId,
        topics: [topic],
        maxAttempts: 1,
        retryBackoffMs: 5,
        async handleBatch(messages, ctx) {
          for (const m of messages) {
            if (!m.value.startsWith('bad-')) continue;
            if (explicit) await ctx.deadLetter(m, `malformed ${m.value}`);
            else throw new Error(`cannot handle ${m.value}`);
          }
        },
      });
      await eventually(() => bus.committedOffsets(groupId, topic), (c) => sum(c) === 12, 30000, 20);
      await consumer.stop();
    };
    const dlqSize = async () => sum(await bus.endOffsets(dlqTopic(topic)));
    await run(group, true);
    expect(await dlqSize()).toBe(4);
    // Replayed twice: explicitly dead-lettered (ctx.deadLetter) the first time, failing the handler the second.
    for (const explicit of [true, false]) {
      await bus.resetOffsets(group, topic, { kind: 'earliest' });
      await run(group, explicit);
      expect(await dlqSize()).toBe(4);
    }
    expect(await counterValue(metrics.busDeadLettersAlreadyRecorded, { adapter: name, topic, group })).toBe(8);
    // Another group failing on the same messages records its own dead letters.
    await run(other, false);
    expect(await dlqSize()).toBe(8);

    const summary = await bus.deadLetterSummary([topic], { waitMs: 10000 });
    expect(summary[topic]).toMatchObject({ count: 8, recent: 8, complete: true });
    expect(summary[topic]!.last).toMatchObject({ topic, group: other, reason: expect.stringMatching(/^cannot handle bad-/) });
    expect(Date.parse(summary[topic]!.last!.failedAt)).toBeGreaterThanOrEqual(t0);
    const quiet = await bus.deadLetterSummary([topic], { recentWindowMs: 1, waitMs: 10000 });
    expect(quiet[topic]!.recent).toBe(0);

    const read: BusMessage[] = [];
    expect(await bus.readTopic(dlqTopic(topic), (m) => void read.push(m))).toBe(8);
    expect(read.map((m) => m.value).sort()).toEqual(['bad-0', 'bad-0', 'bad-3', 'bad-3', 'bad-6', 'bad-6', 'bad-9', 'bad-9']);
    expect(new Set(read.map((m) => `${m.headers[DLQ_HEADERS.group]}/${m.headers[DLQ_HEADERS.offset]}/${m.headers[DLQ_HEADERS.partition]}`)).size).toBe(8);
    await expect(bus.readTopic(uniqueName('bus_missing'), () => undefined)).rejects.toThrow(/does not exist/);
  });

  it('replays a stopped group from earliest, from a timestamp, and moves it to latest or an offset', async () => {
    const topic = uniqueName('bus_replay');
    await bus.ensureTopics([topic]);
    const t0 = Date.now() - 600_000;
    const keys = ['a', 'b', 'c'];
    const published = Array.from({ length: 12 }, (_, i) => ({ key: keys[i % 3]!, value: String(i), timestamp: t0 + i * 1000 }));
    await bus.publish(topic, published);
    const end = await bus.endOffsets(topic);
    expect(sum(end)).toBe(12);
    const group = uniqueName('replay');
    const values = (ms: BusMessage[]) => ms.map((m) => Number(m.value)).sort((x, y) => x - y);

    const first = await collect(topic, group);
    await eventually(async () => first.received.length, (n) => n >= 12, 30000, 20);
    expect(first.received.map((m) => [Number(m.value), m.timestamp]).sort((x, y) => x[0]! - y[0]!)).toEqual(published.map((p) => [Number(p.value), p.timestamp]));
    await eventually(() => bus.committedOffsets(group, topic), (c) => sum(c) === 12, 15000, 50);
    await expect(bus.resetOffsets(group, topic, { kind: 'earliest' })).rejects.toThrow(/running consumer/);
    await first.consumer.stop();

    await bus.resetOffsets(group, topic, { kind: 'earliest' });
    const zeros = Object.fromEntries(Object.keys(end).map((p) => [p, '0']));
    expect(await bus.committedOffsets(group, topic)).toEqual(zeros);
    const again = await collect(topic, group);
    await eventually(async () => again.received.length, (n) => n >= 12, 30000, 20);
    await again.consumer.stop();
    expect(values(again.received)).toEqual(Array.from({ length: 12 }, (_, i) => i));

    // First message with timestamp >= t0 + 6.5 s is #7, in every partition.
    await bus.resetOffsets(group, topic, { kind: 'timestamp', timestamp: t0 + 6500 });
    const expectedAfter: PartitionOffsets = {};
    for (const p of Object.keys(end).map(Number)) {
      const inPartition = published.filter((m) => expectedPartition(m.key) === p);
      const firstIdx = inPartition.findIndex((m) => m.timestamp >= t0 + 6500);
      expectedAfter[p] = String(firstIdx === -1 ? inPartition.length : firstIdx);
    }
    expect(await bus.committedOffsets(group, topic)).toEqual(expectedAfter);
    const fromTs = await collect(topic, group);
    await eventually(async () => fromTs.received.length, (n) => n >= 5, 30000, 20);
    await sleep(200);
    await fromTs.consumer.stop();
    expect(values(fromTs.received)).toEqual([7, 8, 9, 10, 11]);

    await bus.resetOffsets(group, topic, { kind: 'earliest' });
    await bus.resetOffsets(group, topic, { kind: 'latest' });
    expect(await bus.committedOffsets(group, topic)).toEqual(end);
    const pa = expectedPartition('a');
    await bus.resetOffsets(group, topic, { kind: 'offset', offset: '1', partition: pa });
    expect(await bus.committedOffsets(group, topic)).toEqual({ ...end, [pa]: '1' });
  });

  it('reports no committed offsets for an unknown group', async () => {
    const topic = uniqueName('bus_empty');
    await bus.ensureTopics([topic]);
    expect(await bus.committedOffsets(uniqueName('nobody'), topic)).toEqual({});
    expect(await bus.endOffsets(topic)).toEqual({ 0: '0', 1: '0', 2: '0' });
    await bus.ping();
  });
});

describe('kafka adapter start-up', () => {
  it('fails fast with a DependencyError naming KAFKA_BROKERS when nothing listens', async () => {
    const t0 = Date.now();
    const err = await createKafkaBus({ ...common, brokers: ['127.0.0.1:1'], clientId: 'unreachable', connectTimeoutMs: 3000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - t0).toBeLessThan(3000 + 5000);
    expect(err).toBeInstanceOf(DependencyError);
    expect((err as Error).message).toMatch(/KAFKA_BROKERS=127\.0\.0\.1:1/);
  });
});
