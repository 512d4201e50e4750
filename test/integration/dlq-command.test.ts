/**
 * The operator DLQ command (scripts/dlq.ts), run as the operator runs it (a
 * child process, BUS=kafka, its own BUS_NAMESPACE) on real Kafka:
 *  - the real quote consumer dead-letters malformed quotes (md.quotes.v1.dlq);
 *  - `list` counts them per group and reason; `inspect` shows origin, reason,
 *    key, value, filtered, and as JSON lines;
 *  - on a topic whose consumer rejected messages it can handle once fixed,
 *    `redrive --dry-run` changes nothing and `redrive` publishes them back
 *    (progress bar, `dlq-redriven-from` header), where the fixed consumer
 *    handles them; the DLQ keeps its dead letters; bad input exits 2.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuoteConsumer } from '../../aggregate/quote-consumer.js';
import { dlqTopic, type Bus, type BusMessage } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import { openClickHouseTestStore, type ClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import type { Store } from '../../core/store/store.js';
import { TOPICS } from '../../core/topics.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const config = testConfig();
const logger = testLogger();
const namespace = `${uniqueName('dlqcmd')}.`;
const database = uniqueName('dlq_cmd');

function dlq(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dlq.ts', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      BUS: 'kafka',
      KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
      BUS_NAMESPACE: namespace,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000); // a ceiling: tsx start-up alone is slow when busy
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const sum = (o: Record<number, string>) => Object.values(o).reduce((a, x) => a + Number(x), 0);

describe('dlq command (child process, Kafka)', () => {
  let bus: Bus;
  let store: Store;
  let clickhouse: ClickHouseTestStore | undefined;
  const malformed = ['{"not":"a quote"}', '{broken json', '{"event_id":"short"}'];

  beforeAll(async () => {
    bus = namespaced(
      await createKafkaBus({
        partitions: 3,
        batchSize: 500,
        maxAttempts: 2,
        retryBackoffMs: 20,
        logger,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('dlq-it'),
        connectTimeoutMs: 15000,
      }),
      namespace,
    );
    await bus.ensureTopics(Object.values(TOPICS));
    clickhouse = await openClickHouseTestStore(config, { database }, logger);
    store = clickhouse.store;
    await store.migrate();
    await bus.publish(
      TOPICS.quotes,
      malformed.map((value, i) => ({ key: i === 0 ? 'ETH/USD' : 'cbBTC/USD', value, headers: { trace: `t${i}` } })),
    );
    const consumer = await startQuoteConsumer(bus, store, { logger });
    await eventually(
      async () => sum(await bus.endOffsets(dlqTopic(TOPICS.quotes))),
      (n) => n === 3,
      60_000,
      100,
    );
    await consumer.stop();
  }, 240_000);

  afterAll(async () => {
    await bus?.close();
    await clickhouse?.close();
  }, 60_000);

  it('lists every DLQ of the product with counts per group and reason', async () => {
    const r = await dlq(['list']);
    console.log(`dlq list:\n${r.stdout.trim()}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('md.quotes.v1.dlq: 3 dead letter(s)');
    expect(r.stdout).toContain('  group aggregate.quotes: 3');
    expect(r.stdout).toMatch(/reasons \(\d\):\n(\s+\d+\s+.*quote.*\n){1,3}/);
    for (const t of [TOPICS.books, TOPICS.latency, TOPICS.heartbeat, TOPICS.dislocations])
      expect(r.stdout).toContain(`${t}.dlq: 0 dead letter(s)`);
  }, 240_000);

  it('inspects dead letters with their origin, reason, key, headers and value; filters; JSON lines', async () => {
    const r = await dlq(['inspect', '--topic', TOPICS.quotes]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('3 matching dead letter(s) in md.quotes.v1.dlq');
    expect(r.stdout).toMatch(
      /md\.quotes\.v1\.dlq\[\d\]@\d+ {2}origin md\.quotes\.v1\[\d\]@\d+ {2}group aggregate\.quotes {2}failed \d{4}-\d\d-\d\dT/,
    );
    expect(r.stdout).toContain('  value:   {broken json');
    expect(r.stdout).toContain('"trace":"t1"');

    const json = await dlq(['inspect', '--topic', TOPICS.quotes, '--json', '--group', 'aggregate.quotes']);
    expect(json.code, json.stderr).toBe(0);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            origin: string;
            reason: string;
            value: string;
            key: string;
            group: string;
            attempts: number;
          },
      );
    expect(rows.map((x) => x.value).sort()).toEqual([...malformed].sort());
    const first = rows.find((x) => x.value === malformed[0])!;
    expect(first.key).toBe('ETH/USD');
    expect(first.group).toBe('aggregate.quotes');
    expect(first.reason).toMatch(/quote/i);

    const one = await dlq([
      'inspect',
      '--topic',
      TOPICS.quotes,
      '--json',
      '--partition',
      first.origin.match(/\[(\d+)\]/)![1]!,
      '--offset',
      first.origin.split('@')[1]!,
    ]);
    expect(
      one.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { value: string }).value),
    ).toEqual([malformed[0]]);
    const none = await dlq(['inspect', '--topic', TOPICS.quotes, '--reason', 'no such reason at all']);
    expect(none.stdout).toContain('0 matching dead letter(s)');
    const limited = await dlq(['inspect', '--topic', TOPICS.quotes, '--limit', '1']);
    expect(limited.stdout).toContain('3 matching dead letter(s) in md.quotes.v1.dlq, 1 shown (--limit)');
  }, 300_000);

  it('re-drives dead letters to their topic once the cause is fixed (dry run first), with a progress bar', async () => {
    const topic = 'orders.v1';
    await bus.ensureTopics([topic]);
    await bus.publish(
      topic,
      Array.from({ length: 12 }, (_, i) => ({ key: `k${i % 3}`, value: i % 4 === 0 ? `needs-v2-${i}` : `ok-${i}` })),
    );
    const group = 'orders.sink';
    // v1 of the consumer cannot handle `needs-v2-*` messages: it dead-letters them.
    const v1 = await bus.consume({
      groupId: group,
      topics: [topic],
      async handleBatch(messages, ctx) {
        for (const m of messages)
          if (m.value.startsWith('needs-v2-')) await ctx.deadLetter(m, `unsupported format: ${m.value}`);
      },
    });
    await eventually(
      async () => sum(await bus.committedOffsets(group, topic)),
      (n) => n === 12,
      60_000,
      100,
    );
    await v1.stop();
    expect(sum(await bus.endOffsets(dlqTopic(topic)))).toBe(3);

    const dry = await dlq(['redrive', '--topic', topic, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`dry run: 3 dead letter(s) would be re-driven to ${topic}`);
    expect(sum(await bus.endOffsets(topic))).toBe(12);

    // v2 handles them; the re-driven messages reach it.
    const handled: BusMessage[] = [];
    const v2 = await bus.consume({
      groupId: group,
      topics: [topic],
      async handleBatch(messages) {
        handled.push(...messages);
      },
    });
    const r = await dlq(['redrive', '--topic', topic, '--reason', 'unsupported format']);
    console.log(`dlq redrive:\n${r.stdout.trim()}\n${r.stderr.trim()}`);
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/re-drive to orders\.v1 \[[=\-\s░█]*\] 100% \| 3\/3/);
    expect(r.stdout).toContain(`re-drove 3 dead letter(s) from ${topic}.dlq to ${topic}`);
    // At least once: a redelivery (a rebalance on a busy machine) may hand one over twice; each must arrive.
    const redriven = () => [...new Set(handled.map((m) => m.value))].sort();
    await eventually(
      async () => redriven().length,
      (n) => n >= 3,
      60_000,
      100,
    );
    await v2.stop();
    expect(redriven()).toEqual(['needs-v2-0', 'needs-v2-4', 'needs-v2-8']);
    for (const m of handled) expect(m.headers['dlq-redriven-from']).toMatch(/^orders\.v1\.dlq\[\d\]@\d+$/);
    expect(handled.every((m) => m.headers['dlq-reason'] === undefined)).toBe(true);
    expect(sum(await bus.endOffsets(dlqTopic(topic)))).toBe(3); // the DLQ keeps them
  }, 300_000);

  it('refuses bad input with the usage (exit 2)', async () => {
    const none = await dlq([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give a command/);
    expect(none.stderr).toMatch(/^usage: npm run dlq -- list/m);
    const noTopic = await dlq(['inspect']);
    expect(noTopic.code).toBe(2);
    expect(noTopic.stderr).toMatch(/inspect needs --topic/);
    const badOffset = await dlq(['inspect', '--topic', 'x', '--offset', 'ten']);
    expect(badOffset.code).toBe(2);
    expect(badOffset.stderr).toMatch(/--offset must be a non-negative integer/);
  }, 240_000);
});
