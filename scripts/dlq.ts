/**
 * Operator command for dead letters (`<topic>.dlq`, see core/bus/bus.ts):
 *
 *   npm run dlq -- list [--topic <topic>]
 *   npm run dlq -- inspect --topic <topic> [filters] [--limit 20] [--json]
 *   npm run dlq -- redrive --topic <topic> [filters] [--dry-run]
 *
 * filters: --reason <text> (substring, any case), --group <consumer group>,
 *          --partition <p> --offset <o> (the failed message's origin), --since <ISO time>
 *
 * `list` (default: every topic of core/topics.ts) prints per DLQ how many dead
 * letters it holds, per consumer group and per reason, and the oldest and
 * newest. `inspect` prints the matching dead letters (origin, group, time,
 * attempts, reason, key, headers, value) or one JSON object per line.
 * `redrive` publishes the matching dead letters back to their topic
 * (core/bus/dead-letter-redrive.ts) with a progress bar; fix the cause first
 * (a message that fails again is dead-lettered again). Reading a DLQ moves no
 * consumer group. Uses the configured bus (BUS=kafka, KAFKA_BROKERS, BUS_NAMESPACE).
 */
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { operatorConfig } from './operator-config.js';
import { createLogger } from '../core/logger.js';
import { createBus } from '../core/ports.js';
import { dlqTopic, type Bus, type BusMessage } from '../core/bus/bus.js';
import { parseDeadLetter, type DeadLetterRecord } from '../core/bus/dead-letters.js';
import { deadLetterLabel, redriveMessage } from '../core/bus/dead-letter-redrive.js';
import { errorMessage } from '../core/errors.js';
import { TOPICS } from '../core/topics.js';

const USAGE = `usage: npm run dlq -- list [--topic <topic>]
       npm run dlq -- inspect --topic <topic> [--reason <text>] [--group <id>] [--partition <p> --offset <o>] [--since <ISO>] [--limit <n>] [--json]
       npm run dlq -- redrive --topic <topic> [--reason <text>] [--group <id>] [--partition <p> --offset <o>] [--since <ISO>] [--dry-run]`;

function fail(message: string): never {
  console.error(`dlq: ${message}\n${USAGE}`);
  process.exit(2);
}

interface DeadLetter {
  message: BusMessage;
  record: DeadLetterRecord;
}

interface Filters {
  reason?: string;
  group?: string;
  partition?: number;
  offset?: string;
  since?: number;
}

/** The namespace is the bus's business: show origins as the operator names them. */
const plain = (name: string, namespace: string) =>
  namespace && name.startsWith(namespace) ? name.slice(namespace.length) : name;

function matches(d: DeadLetter, f: Filters, namespace: string): boolean {
  if (f.reason !== undefined && !d.record.reason.toLowerCase().includes(f.reason.toLowerCase())) return false;
  if (f.group !== undefined && plain(d.record.group, namespace) !== f.group) return false;
  if (f.partition !== undefined && d.record.partition !== f.partition) return false;
  if (f.offset !== undefined && d.record.offset !== f.offset) return false;
  if (f.since !== undefined && !(Date.parse(d.record.failedAt) >= f.since)) return false;
  return true;
}

/** Every dead letter of `<topic>.dlq` (a progress bar while reading a large one). */
async function readDeadLetters(bus: Bus, topic: string): Promise<DeadLetter[]> {
  const total = Object.values(await bus.endOffsets(dlqTopic(topic))).reduce((n, o) => n + Number(o), 0);
  const bar = total >= 5000 ? progressBar(`reading ${dlqTopic(topic)}`) : undefined;
  bar?.start(total, 0);
  const out: DeadLetter[] = [];
  await bus.readTopic(dlqTopic(topic), (message) => {
    const record = parseDeadLetter(message.headers);
    if (record) out.push({ message, record });
    bar?.increment();
  });
  bar?.stop();
  return out;
}

function progressBar(label: string) {
  // Also prints in logs (no TTY), every second: re-drives run in CI and over ssh.
  return new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {duration}s`,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 1000,
    },
    cliProgress.Presets.shades_classic,
  );
}

function countBy<T>(items: T[], key: (t: T) => string): [string, number][] {
  const m = new Map<string, number>();
  for (const it of items) m.set(key(it), (m.get(key(it)) ?? 0) + 1);
  return [...m].sort((a, b) => b[1] - a[1]);
}

async function list(bus: Bus, topics: string[], namespace: string): Promise<void> {
  for (const topic of topics) {
    const letters = await readDeadLetters(bus, topic).catch((err: unknown) => {
      if (/does not exist/.test(errorMessage(err))) return [];
      throw err;
    });
    console.log(`${dlqTopic(topic)}: ${letters.length} dead letter(s)`);
    if (!letters.length) continue;
    const times = letters.map((d) => d.record.failedAt).sort();
    console.log(`  oldest ${times[0]}, newest ${times[times.length - 1]}`);
    for (const [group, n] of countBy(letters, (d) => plain(d.record.group, namespace)))
      console.log(`  group ${group}: ${n}`);
    const reasons = countBy(letters, (d) => d.record.reason.slice(0, 160));
    console.log(`  reasons (${reasons.length}${reasons.length > 10 ? ', top 10' : ''}):`);
    for (const [reason, n] of reasons.slice(0, 10)) console.log(`    ${String(n).padStart(6)}  ${reason}`);
  }
}

function view(d: DeadLetter, namespace: string) {
  const { record, message } = d;
  const headers = Object.fromEntries(
    Object.entries(message.headers).filter(([k]) => !k.startsWith('dlq-') || k === 'dlq-redriven-from'),
  );
  return {
    dead_letter: deadLetterLabel(message),
    origin: `${plain(record.topic, namespace)}[${record.partition}]@${record.offset}`,
    group: plain(record.group, namespace),
    failed_at: record.failedAt,
    attempts: record.attempts,
    reason: record.reason,
    key: message.key,
    headers,
    value: message.value,
  };
}

async function inspect(
  bus: Bus,
  topic: string,
  f: Filters,
  limit: number,
  json: boolean,
  namespace: string,
): Promise<void> {
  const found = (await readDeadLetters(bus, topic)).filter((d) => matches(d, f, namespace));
  const shown = found.slice(0, limit);
  for (const d of shown) {
    const v = view(d, namespace);
    if (json) {
      console.log(JSON.stringify(v));
      continue;
    }
    console.log(
      `${v.dead_letter}  origin ${v.origin}  group ${v.group}  failed ${v.failed_at}  attempts ${v.attempts}`,
    );
    console.log(`  reason:  ${v.reason}`);
    console.log(`  key:     ${v.key}`);
    if (Object.keys(v.headers).length) console.log(`  headers: ${JSON.stringify(v.headers)}`);
    console.log(
      `  value:   ${v.value.length > 2000 ? `${v.value.slice(0, 2000)}... (${v.value.length} characters)` : v.value}`,
    );
  }
  if (!json)
    console.log(
      `${found.length} matching dead letter(s) in ${dlqTopic(topic)}${found.length > shown.length ? `, ${shown.length} shown (--limit)` : ''}`,
    );
}

async function redrive(bus: Bus, topic: string, f: Filters, dryRun: boolean, namespace: string): Promise<void> {
  const found = (await readDeadLetters(bus, topic)).filter((d) => matches(d, f, namespace));
  if (dryRun) {
    for (const d of found.slice(0, 20))
      console.log(
        `  would re-drive ${deadLetterLabel(d.message)} (origin ${plain(d.record.topic, namespace)}[${d.record.partition}]@${d.record.offset}): ${d.record.reason}`,
      );
    console.log(`dry run: ${found.length} dead letter(s) would be re-driven to ${topic}`);
    return;
  }
  const bar = progressBar(`re-drive to ${topic}`);
  bar.start(found.length, 0);
  const t0 = Date.now();
  for (let i = 0; i < found.length; i += 500) {
    const slice = found.slice(i, i + 500);
    await bus.publish(
      topic,
      slice.map((d) => redriveMessage(d.message)),
    );
    bar.increment(slice.length);
  }
  bar.stop();
  console.log(
    `re-drove ${found.length} dead letter(s) from ${dlqTopic(topic)} to ${topic} in ${((Date.now() - t0) / 1000).toFixed(1)} s; the DLQ keeps them (a DLQ is append-only)`,
  );
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      topic: { type: 'string' },
      reason: { type: 'string' },
      group: { type: 'string' },
      partition: { type: 'string' },
      offset: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (!command || !['list', 'inspect', 'redrive'].includes(command) || rest.length)
    fail(command ? `unknown command ${positionals.join(' ')}` : 'give a command');
  if (command !== 'list' && !values.topic) fail(`${command} needs --topic`);
  if (values.partition !== undefined && !/^\d+$/.test(values.partition))
    fail(`--partition must be a non-negative integer, got ${values.partition}`);
  if (values.offset !== undefined && !/^\d+$/.test(values.offset))
    fail(`--offset must be a non-negative integer, got ${values.offset}`);
  if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit))
    fail(`--limit must be a positive integer, got ${values.limit}`);
  const since = values.since === undefined ? undefined : Date.parse(values.since);
  if (since !== undefined && Number.isNaN(since)) fail(`--since must be an ISO 8601 time, got ${values.since}`);
  const filters: Filters = {
    ...(values.reason !== undefined ? { reason: values.reason } : {}),
    ...(values.group !== undefined ? { group: values.group } : {}),
    ...(values.partition !== undefined ? { partition: Number(values.partition) } : {}),
    ...(values.offset !== undefined ? { offset: values.offset } : {}),
    ...(since !== undefined ? { since } : {}),
  };

  const config = operatorConfig(fail, 'the in-process bus lives inside the running app');
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', { command: 'dlq' });
  const bus = await createBus(config, logger);
  try {
    const ns = config.BUS_NAMESPACE;
    if (command === 'list') await list(bus, values.topic ? [values.topic] : Object.values(TOPICS), ns);
    else if (command === 'inspect')
      await inspect(bus, values.topic!, filters, Number(values.limit ?? 20), values.json, ns);
    else await redrive(bus, values.topic!, filters, values['dry-run'], ns);
  } finally {
    await bus.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`dlq failed: ${errorMessage(err)}`);
    process.exit(1);
  },
);
