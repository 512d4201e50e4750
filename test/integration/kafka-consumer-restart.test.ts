/**
 * A consumer crash that kafkajs does not restart itself, on real Kafka (issue
 * 27 item 7: `aggregate.heartbeats` crashed once with
 * KafkaJSGroupCoordinatorNotFound, `restart: false`, was never restarted, and
 * /health said `ok`). The crash here is a real broker refusal, not a mock:
 * another member (plain kafkajs, its default RoundRobinAssigner protocol)
 * holds the group, so the bus consumer's join (OrderedRoundRobinAssigner
 * only) is answered INCONSISTENT_GROUP_PROTOCOL, a non-retriable error:
 * kafkajs emits CRASH with `restart: false` and leaves the consumer
 * disconnected. The bus must restart it with backoff (counted on /metrics),
 * /health must say `degraded` with the crash reason meanwhile, and once the
 * other member has left, the consumer must rejoin, be `ok` and consume
 * everything that waited, and what comes after.
 */
import { Kafka, logLevel, type Consumer as KafkaConsumer } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { consumerHealth } from '../../core/bus/consumer-health.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { metrics } from '../../core/metrics.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const config = testConfig();
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

async function restartsCounted(group: string): Promise<number> {
  const m = await metrics.busConsumerRestarts.get();
  return m.values.find((v) => v.labels.group === group)?.value ?? 0;
}

describe('a consumer crash kafkajs does not restart (real Kafka)', () => {
  it('is restarted with backoff, degraded with the reason until it has joined again, then consumes', async () => {
    const bus: Bus = await createKafkaBus({
      partitions: 2,
      batchSize: 100,
      maxAttempts: 3,
      retryBackoffMs: 10,
      logger: testLogger(),
      brokers: config.KAFKA_BROKERS,
      clientId: uniqueName('consumer-restart'),
      connectTimeoutMs: 10000,
    });
    cleanup.push(() => bus.close());
    const topic = uniqueName('restart');
    const group = uniqueName('restart_group');
    await bus.ensureTopics([topic, `${topic}_other`]);

    // The other member: same group, another topic (so it consumes none of ours), another assignment protocol.
    const kafka = new Kafka({
      clientId: 'protocol-blocker',
      brokers: config.KAFKA_BROKERS,
      logLevel: logLevel.NOTHING,
    });
    const blocker: KafkaConsumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000 });
    cleanup.push(() => blocker.disconnect());
    await blocker.connect();
    await blocker.subscribe({ topics: [`${topic}_other`] });
    await blocker.run({ eachMessage: async () => undefined });

    await bus.publish(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `before-${i}` })),
    );
    const consumed = new Set<string>();
    const consumer: Consumer = await bus.consume({
      groupId: group,
      topics: [topic],
      async handleBatch(messages) {
        for (const m of messages) consumed.add(m.value);
      },
    });
    cleanup.push(() => consumer.stop());

    // Crashed at its join: degraded with the broker's reason, never ok, and restarted more than once meanwhile.
    const crashed = await eventually(
      async () => ({ health: consumerHealth(consumer.status), restarts: consumer.status.restarts }),
      (s) => s.restarts >= 2,
      60_000,
    );
    expect(crashed.health.status).toBe('degraded');
    expect(String(crashed.health.reason)).toMatch(/^crashed .*protocol/i);
    expect(crashed.health.last_batch_at).toBeNull();
    expect(consumer.status.running).toBe(true);
    expect(consumed.size).toBe(0);
    expect(await restartsCounted(group)).toBeGreaterThanOrEqual(2);

    // The other member leaves: the next restart joins, the consumer is ok and consumes what waited.
    await blocker.disconnect();
    await eventually(
      async () => consumerHealth(consumer.status).status,
      (s) => s === 'ok',
      90_000,
    );
    await eventually(
      async () => consumed.size,
      (n) => n === 10,
      60_000,
    );
    await bus.publish(topic, [{ key: 'k', value: 'after' }]);
    await eventually(async () => consumed.has('after'), Boolean, 60_000);
    expect(consumerHealth(consumer.status)).toMatchObject({ status: 'ok', restarts: consumer.status.restarts });

    // Stopped: down, and no restart comes after.
    await consumer.stop();
    const restarts = consumer.status.restarts;
    expect(consumerHealth(consumer.status).status).toBe('down');
    await new Promise((r) => setTimeout(r, 1500));
    expect(consumer.status.restarts).toBe(restarts);
  }, 240_000);
});
