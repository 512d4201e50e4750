/**
 * Bus throughput: n messages (~200-byte JSON values, 13 keys) published in
 * batches of 1000 and consumed (handled + committed) by one group, through
 * the memory adapter, the Kafka adapter, and raw kafkajs doing the same work
 * (same send batches; an eachBatch consumer that commits each batch) as the
 * Kafka baseline. Fresh topics and groups per run; the consumer has joined
 * before the clock starts. Kafka and raw kafkajs alternate ROUNDS times; the best of
 * each is reported.
 */
import { Kafka, Partitioners, logLevel, type Message } from 'kafkajs';
import type { Bus, OutgoingMessage } from '../../../core/bus/bus.js';
import { createKafkaBus } from '../../../core/bus/kafka-bus.js';
import { createMemoryBus } from '../../../core/bus/memory-bus.js';
import type { Config } from '../../../core/config.js';
import { createLogger } from '../../../core/logger.js';
import { uniqueName } from '../../helpers/config.js';
import type { BenchRow } from '../report.js';

const PUBLISH_BATCH = 1000;
const KEYS = [
  'BTC-USDT',
  'ETH-USDT',
  'SOL-USDT',
  'XRP-USDT',
  'DOGE-USDT',
  'ADA-USDT',
  'AVAX-USDT',
  'LINK-USDT',
  'DOT-USDT',
  'BTC-USDC',
  'ETH-USDC',
  'WETH-USDC',
  'cbBTC-USDC',
];
const TIMEOUT_MS = 300_000;
/** Kafka and raw kafkajs alternate this many times; the best of each counts (the machine is shared and noisy). */
const ROUNDS = 3;

function makeMessages(n: number): OutgoingMessage[] {
  const out = new Array<OutgoingMessage>(n);
  const base = Date.now();
  for (let i = 0; i < n; i++) {
    const key = KEYS[i % KEYS.length]!;
    const value = JSON.stringify({
      v: 1,
      pair: key,
      venue: 'binance',
      bid: (60000 + (i % 1000) * 0.01).toFixed(2),
      ask: (60000.5 + (i % 1000) * 0.01).toFixed(2),
      bidSize: '0.52100000',
      askSize: '0.48700000',
      ts: new Date(base + i).toISOString(),
      seq: i,
      source: 'bench',
    }).padEnd(200, ' ');
    out[i] = { key, value };
  }
  return out;
}

/** Publishes everything into a bus whose consumer is already running; resolves when all n are handled. */
async function runAdapter(bus: Bus, messages: OutgoingMessage[]): Promise<number> {
  const n = messages.length;
  const topic = uniqueName('bench_bus');
  await bus.ensureTopics([topic]);
  let seen = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const consumer = await bus.consume({
    groupId: uniqueName('bench_bus_group'),
    topics: [topic],
    async handleBatch(batch) {
      seen += batch.length;
      if (seen >= n) resolveDone();
    },
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i += PUBLISH_BATCH) await bus.publish(topic, messages.slice(i, i + PUBLISH_BATCH));
  await withDeadline(done, () => `${bus.adapter} adapter consumed ${seen}/${n}`);
  const seconds = (performance.now() - t0) / 1000;
  await consumer.stop();
  return n / seconds;
}

/** The same work with kafkajs alone. */
async function runRawKafkajs(config: Config, messages: OutgoingMessage[]): Promise<number> {
  const n = messages.length;
  const kafka = new Kafka({
    clientId: uniqueName('bench-raw'),
    brokers: config.KAFKA_BROKERS,
    logLevel: logLevel.ERROR,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId: uniqueName('bench_raw_group'), maxWaitTimeInMs: 1000 });
  const topic = uniqueName('bench_raw');
  try {
    await Promise.all([admin.connect(), producer.connect(), consumer.connect()]);
    await admin.createTopics({ topics: [{ topic, numPartitions: config.BUS_PARTITIONS }], waitForLeaders: true });
    let seen = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset }) => {
        const last = batch.lastOffset();
        seen += batch.messages.length;
        await consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
        ]);
        resolveOffset(last);
        if (seen >= n) resolveDone();
      },
    });
    const t0 = performance.now();
    for (let i = 0; i < n; i += PUBLISH_BATCH) {
      const chunk: Message[] = messages.slice(i, i + PUBLISH_BATCH).map((m) => ({ key: m.key, value: m.value }));
      await producer.send({ topic, acks: -1, messages: chunk });
    }
    await withDeadline(done, () => `raw kafkajs consumed ${seen}/${n}`);
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  }
}

export async function benchBus(config: Config, n: number): Promise<BenchRow[]> {
  const logger = createLogger('warn');
  const messages = makeMessages(n);
  const workload = `produce+consume ${n.toLocaleString('en-US')} msgs (~200 B JSON, ${KEYS.length} keys, publish batches of ${PUBLISH_BATCH})`;
  const common = {
    partitions: config.BUS_PARTITIONS,
    batchSize: config.BUS_BATCH_SIZE,
    maxAttempts: config.BUS_MAX_ATTEMPTS,
    retryBackoffMs: config.BUS_RETRY_BACKOFF_MS,
    logger,
  };

  const memory = await createMemoryBus(common);
  const memoryRate = Math.max(await runAdapter(memory, messages), await runAdapter(memory, messages));
  await memory.close();

  const kafkaBus = await createKafkaBus({
    ...common,
    brokers: config.KAFKA_BROKERS,
    clientId: uniqueName('bench-bus'),
    connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
  });
  let kafkaRate = 0;
  let rawRate = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      rawRate = Math.max(rawRate, await runRawKafkajs(config, messages));
      kafkaRate = Math.max(kafkaRate, await runAdapter(kafkaBus, messages));
    }
  } finally {
    await kafkaBus.close();
  }

  return [
    { port: 'bus', adapter: 'memory', workload, throughput: memoryRate, unit: 'msg/s' },
    {
      port: 'bus',
      adapter: 'kafka',
      workload,
      throughput: kafkaRate,
      unit: 'msg/s',
      baseline: rawRate,
      baselineName: 'kafkajs',
    },
  ];
}

async function withDeadline(done: Promise<void>, what: () => string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      done,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`bench timed out: ${what()}`)), TIMEOUT_MS)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
