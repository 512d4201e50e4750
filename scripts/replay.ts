/**
 * Operator command: replay a topic for a consumer group from a timestamp or an
 * offset, with a progress bar and a summary.
 *
 *   npm run replay -- --topic md.quotes.v1 --from 2026-11-20T00:00:00Z
 *   npm run replay -- --topic md.quotes.v1 --group aggregate.quotes --from earliest
 *   npm run replay -- --topic md.quotes.v1 --from-offset 1200 [--partition 0]
 *   npm run replay -- --topic md.quotes.v1 --from 2026-11-20T00:00:00Z --reset-only
 *
 * The group must be stopped (stop the aggregate role first): the command
 * rewinds it, then runs the group's own consumer in this process until it has
 * caught up with the end offsets seen at the start, and stops. Sinks are
 * idempotent (deterministic event ids), so a replay changes no query result,
 * and a message that fails again is not dead-lettered a second time (its
 * dead letter is already in the DLQ).
 * `--reset-only` only rewinds; the next aggregate start replays.
 * Uses the configured BUS and STORE (e.g. BUS=kafka STORE=clickhouse).
 */
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { operatorConfig } from './operator-config.js';
import { createLogger } from '../core/logger.js';
import { createBus, createStore } from '../core/ports.js';
import type { PartitionOffsets, ReplayFrom } from '../core/bus/bus.js';
import { metrics } from '../core/metrics.js';
import { errorMessage } from '../core/errors.js';
import { CONSUMER_GROUPS, groupsReading } from '../aggregate/consumer-groups.js';

const USAGE =
  'usage: npm run replay -- --topic <topic> (--from <ISO time|earliest|latest> | --from-offset <n> [--partition <p>]) [--group <id>] [--reset-only]';

function fail(message: string): never {
  console.error(`replay: ${message}\n${USAGE}`);
  process.exit(2);
}

export function parseReplayFrom(
  from: string | undefined,
  offset: string | undefined,
  partition: string | undefined,
): ReplayFrom {
  if (offset !== undefined) {
    if (!/^\d+$/.test(offset)) fail(`--from-offset must be a non-negative integer, got ${offset}`);
    if (partition !== undefined && !/^\d+$/.test(partition))
      fail(`--partition must be a non-negative integer, got ${partition}`);
    return { kind: 'offset', offset, ...(partition !== undefined ? { partition: Number(partition) } : {}) };
  }
  if (from === undefined) fail('give --from or --from-offset');
  if (from === 'earliest' || from === 'latest') return { kind: from };
  const ts = Date.parse(from);
  if (!/^\d{4}-\d{2}-\d{2}/.test(from) || Number.isNaN(ts))
    fail(`--from must be an ISO 8601 time (e.g. 2026-11-20T00:00:00Z), earliest or latest; got ${from}`);
  return { kind: 'timestamp', timestamp: ts };
}

const sum = (offsets: PartitionOffsets) => Object.values(offsets).reduce((acc, o) => acc + BigInt(o), 0n);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      topic: { type: 'string' },
      group: { type: 'string' },
      from: { type: 'string' },
      'from-offset': { type: 'string' },
      partition: { type: 'string' },
      'reset-only': { type: 'boolean', default: false },
    },
  });
  if (!values.topic) fail('give --topic');
  const topic = values.topic;
  const from = parseReplayFrom(values.from, values['from-offset'], values.partition);
  const groups = values.group ? CONSUMER_GROUPS.filter((g) => g.groupId === values.group) : groupsReading(topic);
  if (!groups.length)
    fail(
      values.group
        ? `unknown group ${values.group}; groups: ${CONSUMER_GROUPS.map((g) => g.groupId).join(', ')}`
        : `no consumer group reads ${topic}`,
    );
  for (const g of groups)
    if (!g.topics.includes(topic)) fail(`group ${g.groupId} does not read ${topic} (it reads ${g.topics.join(', ')})`);

  const config = operatorConfig(
    fail,
    'the in-process bus lives inside the running app and has no history to replay here',
  );
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', { command: 'replay' });
  const bus = await createBus(config, logger);
  const store = await createStore(config, logger);
  await store.migrate();

  const started = Date.now();
  const summaries: string[] = [];
  try {
    for (const group of groups) {
      const end = await bus.endOffsets(topic);
      await bus.resetOffsets(group.groupId, topic, from).catch((err) => {
        throw new Error(
          `cannot rewind ${group.groupId} (is the aggregate role still running? stop it first): ${errorMessage(err)}`,
        );
      });
      const start = await bus.committedOffsets(group.groupId, topic);
      const total = Number(sum(end) - sum(start));
      const line = `${group.groupId} on ${topic}: partitions ${Object.keys(end)
        .map((p) => `${p}:${start[Number(p)] ?? '?'}->${end[Number(p)]}`)
        .join(' ')}, ${total} message(s)`;
      if (values['reset-only']) {
        summaries.push(`rewound ${line}; the next aggregate start replays them`);
        continue;
      }
      // The bus labels its metrics with the namespaced group id (BUS_NAMESPACE prefix).
      const metricGroup = `${config.BUS_NAMESPACE}${group.groupId}`;
      const dlqBefore = await deadLettered(metricGroup);
      const repeatsBefore = await alreadyDeadLettered(metricGroup);
      const t0 = Date.now();
      const bar = new cliProgress.SingleBar(
        {
          format: `${group.groupId} [{bar}] {percentage}% | {value}/{total} msgs | {rate} msg/s | ETA {eta}s`,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(Math.max(total, 0), 0, { rate: 0 });
      const consumer = await group.start(bus, store, logger, config);
      let done = 0;
      while (true) {
        const committed = await bus.committedOffsets(group.groupId, topic);
        done = Number(sum(committed) - sum(start));
        bar.update(Math.min(done, total), { rate: Math.round(done / Math.max((Date.now() - t0) / 1000, 0.001)) });
        const caughtUp = Object.entries(end).every(([p, e]) => BigInt(committed[Number(p)] ?? '0') >= BigInt(e));
        if (caughtUp) break;
        if (consumer.status.stalledReason)
          bar.update(Math.min(done, total), { rate: `stalled: ${consumer.status.stalledReason}` });
        await new Promise((r) => setTimeout(r, 250));
      }
      await consumer.stop();
      bar.stop();
      const seconds = (Date.now() - t0) / 1000;
      const dlq = (await deadLettered(metricGroup)) - dlqBefore;
      const repeats = (await alreadyDeadLettered(metricGroup)) - repeatsBefore;
      summaries.push(
        `replayed ${line} in ${seconds.toFixed(1)} s (${Math.round(done / Math.max(seconds, 0.001))} msg/s), ${dlq} dead-lettered, ${repeats} already in the DLQ (not repeated)`,
      );
    }
  } finally {
    await bus.close();
    await store.close();
  }
  console.log(`\nreplay summary (${((Date.now() - started) / 1000).toFixed(1)} s):`);
  for (const s of summaries) console.log(`  - ${s}`);
  console.log('  sinks are idempotent by event id: rows already stored were not counted twice');
}

async function deadLettered(groupId: string): Promise<number> {
  const m = await metrics.busDeadLettered.get();
  return m.values.filter((v) => v.labels.group === groupId).reduce((acc, v) => acc + v.value, 0);
}

/** Failing messages whose dead letter was already in the DLQ (from the run that first met them). */
async function alreadyDeadLettered(groupId: string): Promise<number> {
  const m = await metrics.busDeadLettersAlreadyRecorded.get();
  return m.values.filter((v) => v.labels.group === groupId).reduce((acc, v) => acc + v.value, 0);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`replay failed: ${errorMessage(err)}`);
    process.exit(1);
  },
);
