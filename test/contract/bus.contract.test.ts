/**
 * Bus port contract (core/bus/bus.ts): the same suite against the in-process
 * adapter and against Kafka (brokers from KAFKA_BROKERS, started by
 * `npm run engines:up`). Every test uses its own topics and groups.
 *
 * Delivery is at-least-once at both ends, and the assertions say so rather
 * than what the memory adapter happens to do (exactly once): the Kafka
 * producer is not idempotent, so a send kafkajs retries (a request that timed
 * out on a loaded machine) can append its messages a second time, and a batch
 * handled but not yet committed is handed over again after a rebalance. What
 * the contract promises, and what is checked: every published message is
 * delivered; repeats are allowed; a key's messages stay in one partition, so
 * its first deliveries come in publish order (a repeat never overtakes);
 * offsets and the group's resume point are exact. Figures that depend on what
 * is in the log (end offsets, how many records were dead-lettered) are taken
 * from the log itself (readTopic) instead of from how many were published.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import {
  DLQ_HEADERS,
  dlqTopic,
  type Bus,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type OutgoingMessage,
  type PartitionOffsets,
} from '../../core/bus/bus.js';
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
    create: () =>
      createKafkaBus({
        ...common,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('bus-contract'),
        connectTimeoutMs: 10000,
      }),
  },
];

/** The partition kafkajs' DefaultPartitioner (murmur2) picks for a key: what both adapters must use. */
const partitionMetadata: PartitionMetadata[] = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
  partitionId,
  leader: 0,
  partitionErrorCode: 0,
  replicas: [0],
  isr: [0],
}));
const kafkajsPartitioner = Partitioners.DefaultPartitioner();
const expectedPartition = (key: string) =>
  kafkajsPartitioner({ topic: 'any', partitionMetadata, message: { key, value: null } });

const sum = (offsets: PartitionOffsets) => Object.values(offsets).reduce((a, o) => a + Number(o), 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Whether a group has committed everything up to `end` (a partition without a commit counts as offset 0). */
const caughtUp = (committed: PartitionOffsets, end: PartitionOffsets) =>
  Object.entries(end).every(([p, o]) => (committed[Number(p)] ?? '0') === o);
/** Ceiling of every wait for deliveries or commits: generous, so a loaded machine only makes a test slower. */
const WAIT_MS = 60_000;

/** A record's identity in its topic: a redelivered record has the same one, a repeat of a retried publish another. */
const recordId = (m: BusMessage) => `${m.partition}/${m.offset}`;
/** The first delivery of each value, in delivery order: what at-least-once keeps of the publish order. */
const firstDeliveries = (values: string[]) => [...new Set(values)];
const distinct = (values: string[]) => new Set(values).size;
/** Each record once (redeliveries dropped), by partition and offset. */
function uniqueRecords(messages: BusMessage[]): BusMessage[] {
  const byId = new Map<string, BusMessage>();
  for (const m of messages) if (!byId.has(recordId(m))) byId.set(recordId(m), m);
  return [...byId.values()].sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
}
const ints = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

async function counterValue(
  counter: { get(): Promise<{ values: { value: number; labels: Record<string, string | number> }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((a, v) => a + v.value, 0);
}

// Several waits of up to WAIT_MS each: the default 60 s per test is too short on a loaded machine.
describe.each(adapters)('bus contract: $name adapter', { timeout: 240_000 }, ({ name, create }) => {
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
  async function collect(
    topic: string,
    groupId: string,
    extra: Partial<Omit<ConsumerOptions, 'handleBatch'>> = {},
    delayMs = 0,
  ) {
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

  /** Every record of a topic, in partition and offset order (read up to its end offsets of the moment). */
  async function readAll(topic: string): Promise<BusMessage[]> {
    const out: BusMessage[] = [];
    await bus.readTopic(topic, (m) => void out.push(m));
    return out;
  }

  /** Waits until the group has committed up to the end offsets (taken once the publishing is done). */
  async function waitCommitted(group: string, topic: string, end: PartitionOffsets): Promise<void> {
    await eventually(
      () => bus.committedOffsets(group, topic),
      (c) => caughtUp(c, end),
      WAIT_MS,
      20,
    );
  }

  /**
   * Every record of `<topic>.dlq`, each once, read by a consumer group of its own. Call it once the source
   * group has committed: a dead letter is published before the batch that produced it is committed.
   */
  async function readDlq(topic: string): Promise<BusMessage[]> {
    const size = sum(await bus.endOffsets(dlqTopic(topic)));
    const { consumer, received } = await collect(dlqTopic(topic), uniqueName('dlq_reader'));
    await eventually(
      async () => distinct(received.map(recordId)),
      (n) => n >= size,
      WAIT_MS,
      20,
    );
    await consumer.stop();
    return uniqueRecords(received);
  }

  it('hands a backlog over in equal batches of at most maxBatchSize (no small tail batch)', async () => {
    const topic = uniqueName('bus_chunks');
    await bus.ensureTopics([topic]);
    await bus.publish(
      topic,
      Array.from({ length: 100 }, (_, i) => ({ key: 'one-key', value: String(i) })),
    );
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
    await eventually(
      async () => distinct(values),
      (n) => n >= 100,
      WAIT_MS,
      20,
    );
    await consumer.stop();
    expect(firstDeliveries(values)).toEqual(ints(0, 100).map(String));
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
      for (let seq = round * 10; seq < round * 10 + 10; seq++)
        for (const key of keys) batch.push({ key, value: JSON.stringify({ key, seq }) });
      await bus.publish(topic, batch);
    }
    const end = await bus.endOffsets(topic);
    const group = uniqueName('order');
    const { consumer, received } = await collect(topic, group, { maxBatchSize: 37 });
    await eventually(
      async () => distinct(received.map((m) => m.value)),
      (n) => n >= 1000,
      WAIT_MS,
      20,
    );
    await waitCommitted(group, topic, end);
    await consumer.stop();

    const seqs = new Map<string, string[]>();
    for (const m of received) {
      expect(m.topic).toBe(topic);
      expect(m.partition).toBe(expectedPartition(m.key));
      const list = seqs.get(m.key) ?? [];
      list.push(String((JSON.parse(m.value) as { seq: number }).seq));
      seqs.set(m.key, list);
    }
    const inOrder = ints(0, 50).map(String);
    for (const key of keys) expect(firstDeliveries(seqs.get(key) ?? []), key).toEqual(inOrder);
    expect(new Set(received.map((m) => m.partition)).size).toBeGreaterThan(1);

    // Offsets are per partition, consecutive from 0 (first deliveries in order, none skipped), and the end offsets
    // count the records each partition holds: the messages of its keys (plus any repeat of a retried publish).
    for (let p = 0; p < PARTITIONS; p++) {
      const inPartition = received.filter((m) => m.partition === p);
      const offsets = firstDeliveries(inPartition.map((m) => m.offset));
      expect(offsets, `partition ${p}`).toEqual(ints(0, Number(end[p])).map(String));
      const published = keys.filter((k) => expectedPartition(k) === p).length * 50;
      expect(distinct(inPartition.map((m) => m.value)), `partition ${p}`).toBe(published);
    }
  });

  it('publishes one call larger than the broker accepts in a single batch (3 MB, one key), in order', async () => {
    const topic = uniqueName('bus_big');
    await bus.ensureTopics([topic]);
    const pad = 'x'.repeat(1000);
    const batch: OutgoingMessage[] = Array.from({ length: 3000 }, (_, i) => ({ key: 'ETH/USD', value: `${i}:${pad}` }));
    await bus.publish(topic, batch);
    const { received } = await collect(topic, uniqueName('big'));
    const index = () => received.map((m) => m.value.split(':')[0]!);
    await eventually(
      async () => distinct(index()),
      (n) => n >= 3000,
      WAIT_MS,
      50,
    );
    expect(firstDeliveries(index())).toEqual(batch.map((_, i) => String(i)));
  });

  it('puts the same key in the same partition as kafkajs would (records read back, end offsets)', async () => {
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
    const log = await readAll(topic);
    for (const m of log) expect(m.partition, m.value).toBe(expectedPartition(m.key));
    expect(new Set(log.map((m) => m.value))).toEqual(new Set(batch.map((m) => m.value)));
    // The end offsets count each partition's records. Its distinct messages (a retried publish repeats, never adds)
    // make a bit mask of the keys it holds.
    const perPartition = ints(0, PARTITIONS).map((p) => log.filter((m) => m.partition === p));
    expect(perPartition.map((records) => String(records.length))).toEqual(
      ints(0, PARTITIONS).map((p) => end[p] ?? '0'),
    );
    const masks = perPartition.map((records) => distinct(records.map((m) => m.value)));
    const actual = keys.map((_, i) => masks.flatMap((mask, p) => ((mask >> i) & 1 ? [p] : [])));
    expect(actual).toEqual(expected.map((p) => [p]));
  });

  it('resumes a group after a restart with exactly the uncommitted rest', async () => {
    const topic = uniqueName('bus_resume');
    await bus.ensureTopics([topic]);
    const group = uniqueName('resume');
    const msg = (id: number): OutgoingMessage => ({ key: `k${id % 6}`, value: String(id) });
    await bus.publish(
      topic,
      Array.from({ length: 60 }, (_, i) => msg(i)),
    );

    const first = await collect(topic, group, { maxBatchSize: 10 }, 30);
    await eventually(
      async () => first.received.length,
      (n) => n >= 20,
      WAIT_MS,
      5,
    );
    await first.consumer.stop();
    expect(first.consumer.status.running).toBe(false);
    // stop() let the in-flight batch finish and commit: the records handled are exactly those committed.
    const committed = await bus.committedOffsets(group, topic);
    const handled1 = uniqueRecords(first.received).map(recordId);
    expect(handled1).toEqual(Object.entries(committed).flatMap(([p, o]) => ints(0, Number(o)).map((i) => `${p}/${i}`)));

    await bus.publish(
      topic,
      Array.from({ length: 20 }, (_, i) => msg(60 + i)),
    );
    const end = await bus.endOffsets(topic);
    const second = await collect(topic, group, { maxBatchSize: 10 });
    await waitCommitted(group, topic, end);
    await second.consumer.stop();
    // The restarted group resumes at its committed offsets: none of the committed records again...
    for (const m of second.received) {
      expect(Number(m.offset), recordId(m)).toBeGreaterThanOrEqual(Number(committed[m.partition] ?? 0));
    }
    // ...and nothing lost: between them the two consumers handled every record, so every published message.
    const handled = new Set([...handled1, ...second.received.map(recordId)]);
    expect(handled.size).toBe(sum(end));
    const ids = new Set([...first.received, ...second.received].map((m) => Number(m.value)));
    expect([...ids].sort((a, b) => a - b)).toEqual(ints(0, 80));
  });

  it('retries a retryable failure, redelivers the same messages and commits once after success', async () => {
    const topic = uniqueName('bus_retry');
    await bus.ensureTopics([topic]);
    await bus.publish(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ key: 'one-key', value: String(i) })),
    );
    const end = await bus.endOffsets(topic);
    const p = expectedPartition('one-key');
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
    await expect(bus.consume({ groupId: group, topics: [topic], handleBatch: async () => {} })).rejects.toThrow(
      /already has a running consumer/,
    );

    await waitCommitted(group, topic, end);
    // The two failed calls and the successful one got the same batch, from the first offset.
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls[1]).toEqual(calls[0]);
    expect(calls[2]).toEqual(calls[0]);
    expect(calls[0]!.slice(0, 5)).toEqual(['0', '1', '2', '3', '4']);
    expect(stalled[2]).toBe('store: down for a moment');
    expect(consumer.status.stalledReason).toBeUndefined();
    expect(consumer.status.lastBatchAt).toBeTypeOf('number');
    expect(Number(end[p])).toBeGreaterThanOrEqual(5);
    expect(await bus.committedOffsets(group, topic)).toEqual({ [p]: end[p] });
    const labels = { adapter: name, topic, group };
    // Only successful calls count as consumed (the failed ones committed nothing): at least every record once,
    // at most what the successful calls got (more than once only if a batch was handed over again).
    const consumed = await counterValue(metrics.busConsumed, labels);
    expect(consumed).toBeGreaterThanOrEqual(sum(end));
    expect(consumed).toBeLessThanOrEqual(calls.slice(2).flat().length);
    expect(await counterValue(metrics.busHandlerRetries, { ...labels, retryable: 'true' })).toBe(2);
    expect(await counterValue(metrics.busDeadLettered, labels)).toBe(0);
  });

  it('leaves the offsets uncommitted when stopped while the handler keeps failing', async () => {
    const topic = uniqueName('bus_stall');
    await bus.ensureTopics([topic]);
    await bus.publish(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ key: 'stall', value: String(i) })),
    );
    const end = await bus.endOffsets(topic);
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
    await eventually(
      async () => calls,
      (n) => n >= 3,
      WAIT_MS,
      10,
    );
    expect(failing.status.stalledReason).toBe('store: down');
    await failing.stop();
    expect(await bus.committedOffsets(group, topic)).toEqual({});
    expect(Number(end[expectedPartition('stall')])).toBeGreaterThanOrEqual(5);

    // Nothing was committed: the next consumer of the group starts at the first record.
    const next = await collect(topic, group);
    await waitCommitted(group, topic, end);
    expect(next.received[0]!.offset).toBe('0');
    expect(firstDeliveries(next.received.map((m) => m.value))).toEqual(['0', '1', '2', '3', '4']);
  });

  it('dead-letters a poison message with its origin while the rest of its batch is processed and committed', async () => {
    const topic = uniqueName('bus_poison');
    await bus.ensureTopics([topic]);
    const t0 = Date.now();
    await bus.publish(
      topic,
      Array.from({ length: 10 }, (_, i) => ({
        key: 'pk',
        value: i === 6 ? 'poison' : `ok-${i}`,
        headers: { trace: `t${i}` },
      })),
    );
    const end = await bus.endOffsets(topic);
    // The poison records of the log: offset 6, and its repeat if the publish was retried.
    const poison = (await readAll(topic)).filter((m) => m.value === 'poison').map((m) => m.offset);
    expect(poison[0]).toBe('6');
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
    await waitCommitted(group, topic, end);
    expect([...new Set(processed)].sort()).toEqual([0, 1, 2, 3, 4, 5, 7, 8, 9].map((i) => `ok-${i}`));

    // One dead letter per poison record (a retried DLQ publish may repeat one), and nothing else in the DLQ.
    const dlq = await readDlq(topic);
    expect(dlq.map((m) => m.value)).toEqual(dlq.map(() => 'poison'));
    expect([...new Set(dlq.map((m) => m.headers[DLQ_HEADERS.offset]))].sort()).toEqual([...poison].sort());
    const dead = dlq.find((m) => m.headers[DLQ_HEADERS.offset] === '6');
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
    expect(await counterValue(metrics.busDeadLettered, { adapter: name, topic, group })).toBe(poison.length);
    // One retry with its batch and one alone per poison record: 2 for the one published; a repeat in the same
    // batch adds one, in a batch of its own two.
    const retries = await counterValue(metrics.busHandlerRetries, { adapter: name, topic, group, retryable: 'false' });
    expect(retries).toBeGreaterThanOrEqual(poison.length + 1);
    expect(retries).toBeLessThanOrEqual(2 * poison.length);
  });

  it('sends messages to the DLQ on an explicit ctx.deadLetter and commits them with the batch', async () => {
    const topic = uniqueName('bus_explicit');
    await bus.ensureTopics([topic]);
    await bus.publish(topic, [
      { key: 'a', value: 'good-1' },
      { key: 'a', value: 'malformed', headers: { source: 'test' } },
      { key: 'a', value: 'good-2' },
    ]);
    const end = await bus.endOffsets(topic);
    const malformed = (await readAll(topic)).filter((m) => m.value === 'malformed').map((m) => m.offset);
    expect(malformed[0]).toBe('1');
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
    await waitCommitted(group, topic, end);
    expect(firstDeliveries(processed)).toEqual(['good-1', 'good-2']);
    const dlq = await readDlq(topic);
    expect(dlq.map((m) => m.value)).toEqual(dlq.map(() => 'malformed'));
    expect([...new Set(dlq.map((m) => m.headers[DLQ_HEADERS.offset]))].sort()).toEqual([...malformed].sort());
    const dead = dlq.find((m) => m.headers[DLQ_HEADERS.offset] === '1');
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
    await bus.publish(
      topic,
      Array.from({ length: 12 }, (_, i) => ({ key: `k${i % 4}`, value: i % 3 === 0 ? `bad-${i}` : `ok-${i}` })),
    );
    const end = await bus.endOffsets(topic);
    // The bad records of the log (bad-0, -3, -6, -9, and their repeats if the publish was retried): each group
    // dead-letters each of them.
    const bad = (await readAll(topic)).filter((m) => m.value.startsWith('bad-'));
    expect(new Set(bad.map((m) => m.value))).toEqual(new Set(['bad-0', 'bad-3', 'bad-6', 'bad-9']));
    const badOrigins = bad.map(recordId).sort();
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
      await waitCommitted(groupId, topic, end);
      await consumer.stop();
    };
    const dlqSize = async () => sum(await bus.endOffsets(dlqTopic(topic)));
    /** The origin (partition/offset) a dead letter names. */
    const origin = (m: BusMessage) => `${m.headers[DLQ_HEADERS.partition]}/${m.headers[DLQ_HEADERS.offset]}`;
    /** The origins a group's dead letters name, each once. */
    const origins = (dlq: BusMessage[], groupId: string) =>
      [...new Set(dlq.filter((m) => m.headers[DLQ_HEADERS.group] === groupId).map(origin))].sort();
    await run(group, true);
    // A dead letter per bad record (a retried DLQ publish may have written one twice: the DLQ is what it holds now).
    const size = await dlqSize();
    expect(origins(await readAll(dlqTopic(topic)), group)).toEqual(badOrigins);
    expect(size).toBeGreaterThanOrEqual(bad.length);
    // Replayed twice: explicitly dead-lettered (ctx.deadLetter) the first time, failing the handler the second.
    // Neither adds a dead letter: every bad record is found in the DLQ already.
    for (const explicit of [true, false]) {
      await bus.resetOffsets(group, topic, { kind: 'earliest' });
      await run(group, explicit);
      expect(await dlqSize()).toBe(size);
    }
    // Counted each time a replay meets one (more than twice per record if a batch was handed over again).
    const alreadyRecorded = await counterValue(metrics.busDeadLettersAlreadyRecorded, { adapter: name, topic, group });
    expect(alreadyRecorded).toBeGreaterThanOrEqual(2 * bad.length);
    // Another group failing on the same messages records its own dead letters.
    await run(other, false);
    const total = await dlqSize();
    expect(total).toBeGreaterThanOrEqual(size + bad.length);

    const summary = await bus.deadLetterSummary([topic], { waitMs: 30_000 });
    expect(summary[topic]).toMatchObject({ count: total, recent: total, complete: true });
    expect(summary[topic]!.last).toMatchObject({
      topic,
      group: other,
      reason: expect.stringMatching(/^cannot handle bad-/),
    });
    expect(Date.parse(summary[topic]!.last!.failedAt)).toBeGreaterThanOrEqual(t0);
    const quiet = await bus.deadLetterSummary([topic], { recentWindowMs: 1, waitMs: 30_000 });
    expect(quiet[topic]!.recent).toBe(0);

    const read: BusMessage[] = [];
    expect(await bus.readTopic(dlqTopic(topic), (m) => void read.push(m))).toBe(total);
    // Each group's dead letters name exactly the bad records, and carry their values.
    expect(origins(read, group)).toEqual(badOrigins);
    expect(origins(read, other)).toEqual(badOrigins);
    const valueAt = new Map(bad.map((m) => [recordId(m), m.value]));
    for (const m of read) expect(m.value).toBe(valueAt.get(origin(m)));
    await expect(bus.readTopic(uniqueName('bus_missing'), () => undefined)).rejects.toThrow(/does not exist/);
  });

  it('replays a stopped group from earliest, from a timestamp, and moves it to latest or an offset', async () => {
    const topic = uniqueName('bus_replay');
    await bus.ensureTopics([topic]);
    const t0 = Date.now() - 600_000;
    const keys = ['a', 'b', 'c'];
    const published = Array.from({ length: 12 }, (_, i) => ({
      key: keys[i % 3]!,
      value: String(i),
      timestamp: t0 + i * 1000,
    }));
    await bus.publish(topic, published);
    const end = await bus.endOffsets(topic);
    expect(sum(end)).toBeGreaterThanOrEqual(12); // more if a retried publish repeated some
    const group = uniqueName('replay');
    const values = (ms: BusMessage[]) => [...new Set(ms.map((m) => Number(m.value)))].sort((x, y) => x - y);

    const first = await collect(topic, group);
    await waitCommitted(group, topic, end);
    // What the group read is the whole log: every published message, each record with the timestamp it was sent with.
    const log = uniqueRecords(first.received);
    expect(log.length).toBe(sum(end));
    expect(values(log)).toEqual(ints(0, 12));
    for (const m of log) expect(m.timestamp, `#${m.value}`).toBe(published[Number(m.value)]!.timestamp);
    await expect(bus.resetOffsets(group, topic, { kind: 'earliest' })).rejects.toThrow(/running consumer/);
    await first.consumer.stop();

    await bus.resetOffsets(group, topic, { kind: 'earliest' });
    const zeros = Object.fromEntries(Object.keys(end).map((p) => [p, '0']));
    expect(await bus.committedOffsets(group, topic)).toEqual(zeros);
    const again = await collect(topic, group);
    await waitCommitted(group, topic, end);
    await again.consumer.stop();
    expect(values(again.received)).toEqual(ints(0, 12));

    // The first message with timestamp >= t0 + 6.5 s is #7, in every partition: the group is set to the offset of
    // the first record at or after it in each partition (its end where there is none).
    const cut = t0 + 6500;
    await bus.resetOffsets(group, topic, { kind: 'timestamp', timestamp: cut });
    const expectedAfter: PartitionOffsets = {};
    for (const p of Object.keys(end).map(Number)) {
      expectedAfter[p] = log.find((m) => m.partition === p && m.timestamp >= cut)?.offset ?? end[p]!;
    }
    expect(await bus.committedOffsets(group, topic)).toEqual(expectedAfter);
    const fromTs = await collect(topic, group);
    await waitCommitted(group, topic, end);
    await fromTs.consumer.stop();
    // Exactly the records from there on (#7 to #11, and a repeat's records after them if there is one).
    const rest = log.filter((m) => Number(m.offset) >= Number(expectedAfter[m.partition]));
    expect(uniqueRecords(fromTs.received).map(recordId)).toEqual(rest.map(recordId));
    expect(values(fromTs.received)).toEqual(expect.arrayContaining([7, 8, 9, 10, 11]));

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
    const connectTimeoutMs = 3000;
    const t0 = Date.now();
    const unreachable = { ...common, brokers: ['127.0.0.1:1'], clientId: 'unreachable', connectTimeoutMs };
    const err = await createKafkaBus(unreachable).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The budget, the bounded clean-up after it (2 s) and a wide margin for a loaded machine's late timers; a
    // start-up not bounded by connectTimeoutMs would hang on the unreachable broker.
    expect(Date.now() - t0).toBeLessThan(connectTimeoutMs + 2000 + 10_000);
    expect(err).toBeInstanceOf(DependencyError);
    expect((err as Error).message).toMatch(/KAFKA_BROKERS=127\.0\.0\.1:1/);
  });
});
