/**
 * The operator replay command (scripts/replay.ts), run as the operator runs it:
 * a child process `node --import tsx scripts/replay.ts ...` with BUS=kafka,
 * STORE=clickhouse, its own BUS_NAMESPACE and CLICKHOUSE_DATABASE, against
 * REAL Kafka + ClickHouse (`npm run engines:up`).
 *
 * The aggregation (raw sinks + quote consumer, the role's own groups)
 * first consumes simulator quotes published into the namespace, with record
 * timestamps that increase with the publish order, so "messages at or after
 * --from" is known exactly. Then:
 *  1. `--from <ISO>`: exit 0; the summary names the group, every partition
 *     (from->to) and the message count; no query result changes;
 *  2. `--from-offset <n> --partition <p>`: only that partition is replayed;
 *  3. a bad `--from`: exit 2 with the usage line;
 *  4. the group running elsewhere: exit 1 with a clear error.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTES_GROUP, startQuoteConsumer } from '../../aggregate/quote-consumer.js';
import { RAW_GROUP, RAW_TOPICS, startRawSinks } from '../../aggregate/raw-sinks.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { openClickHouseTestStore, type ClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { final, ident, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { dislocationsInSlice } from '../../core/store/tables/dislocations.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { spreadCandles, type CandleInterval } from '../../core/store/tables/spread-samples.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const config = testConfig();
const logger = testLogger();
const PAIRS = ['ETH/USD', 'cbBTC/USD'];
const START = Date.UTC(2025, 0, 1, 0, 30);
const END = START + 20 * 60_000;
const WINDOW_END = END + 3_600_000;
const PARTITIONS = 3;

const full = loadPairs();
const catalogue: PairsCatalogue = { ...full, pairs: full.pairs.filter((p) => PAIRS.includes(p.pair)) };
const quotes = [
  ...new MarketSimulator(catalogue, {
    seed: 7,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: [1000, 10000, 50000],
    bookDepth: 5,
  }).generate(END),
]
  .filter((e) => e.topic === TOPICS.quotes)
  .map((e) => ({ key: e.key, event: e.event as QuoteEvent }));

const namespace = `${uniqueName('replay')}.`;
const database = uniqueName('replay_it');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real operator command in a child process (killed after a ceiling that leaves a busy machine room). */
function replay(args: string[], timeoutMs = 300_000): Promise<Result> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/replay.ts', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      BUS: 'kafka',
      KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
      BUS_NAMESPACE: namespace,
      BUS_PARTITIONS: String(PARTITIONS),
      STORE: 'clickhouse',
      CLICKHOUSE_URL: config.CLICKHOUSE_URL,
      CLICKHOUSE_DATABASE: database,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function count(store: Store, table: string): Promise<number> {
  const [row] = await store.query(sql`SELECT count(*) AS n FROM ${ident(table)} ${final}`);
  return num(row?.n);
}

const normalise = (value: unknown): unknown => {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12));
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v)]));
  return value;
};

/** Row counts through FINAL, candles and dislocations: what a replay must not change. */
async function snapshot(store: Store) {
  const out: Record<string, unknown> = {};
  for (const table of ['quotes', 'spread_samples', 'dislocations']) out[`rows:${table}`] = await count(store, table);
  for (const pair of PAIRS) {
    for (const interval of ['15m', '1h'] as CandleInterval[])
      out[`candles:${pair}:${interval}`] = await spreadCandles(store, pair, START, WINDOW_END, interval);
    out[`dislocations:${pair}`] = await dislocationsInSlice(store, pair, START, WINDOW_END);
  }
  return normalise(out);
}

const total = (o: Record<number, string>) => Object.values(o).reduce((a, x) => a + Number(x), 0);

/** The consumer group's state on the broker (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead). */
async function groupState(groupId: string): Promise<string> {
  const admin = new Kafka({
    brokers: config.KAFKA_BROKERS,
    clientId: uniqueName('replay-it-admin'),
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return groups.find((g) => g.groupId === groupId)?.state ?? 'Dead';
  } finally {
    await admin.disconnect();
  }
}

describe('replay command (child process, Kafka + ClickHouse)', () => {
  let bus: Bus;
  let store: Store;
  let clickhouse: ClickHouseTestStore | undefined;
  let before: unknown;
  /** The Kafka record timestamp of each published quote, in publish order (strictly increasing). */
  const stamps: number[] = [];

  async function caughtUp(group: string, topics: readonly string[]): Promise<boolean> {
    for (const topic of topics) {
      const [committed, end] = await Promise.all([bus.committedOffsets(group, topic), bus.endOffsets(topic)]);
      for (const [p, high] of Object.entries(end)) if (high !== '0' && committed[Number(p)] !== high) return false;
    }
    return true;
  }

  beforeAll(async () => {
    bus = namespaced(
      await createKafkaBus({
        partitions: PARTITIONS,
        batchSize: 500,
        maxAttempts: 2,
        retryBackoffMs: 20,
        logger,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('replay-it'),
        connectTimeoutMs: 15000,
      }),
      namespace,
    );
    await bus.ensureTopics(Object.values(TOPICS));
    clickhouse = await openClickHouseTestStore(config, { database }, logger);
    store = clickhouse.store;
    await store.migrate();

    // Record timestamps: 10 ms apart in publish order, ending a few seconds ago (recent: retention keeps them).
    const base = Date.now() - quotes.length * 10 - 5000;
    for (let i = 0; i < quotes.length; i += 2000) {
      const slice = quotes.slice(i, i + 2000).map((q, j) => {
        const timestamp = base + (i + j) * 10;
        stamps.push(timestamp);
        return { key: q.key, value: JSON.stringify(q.event), timestamp };
      });
      await bus.publish(TOPICS.quotes, slice);
    }
    // One malformed quote last: dead-lettered by the quote consumer, and not again by the replays that cover it.
    stamps.push(base + quotes.length * 10);
    await bus.publish(TOPICS.quotes, [{ key: 'ETH/USD', value: '{not json', timestamp: base + quotes.length * 10 }]);

    // The aggregation under the role's own group names (the ones the command replays).
    const consumers: Consumer[] = [await startRawSinks(bus, store), await startQuoteConsumer(bus, store, { logger })];
    await eventually(
      async () => (await caughtUp(RAW_GROUP, RAW_TOPICS)) && (await caughtUp(QUOTES_GROUP, [TOPICS.quotes])),
      Boolean,
      120_000,
      250,
    );
    await Promise.all(consumers.map((c) => c.stop()));
    before = await snapshot(store);
    expect((before as Record<string, number>)['rows:quotes']).toBe(quotes.length);
    expect((before as Record<string, number>)['rows:dislocations']).toBeGreaterThan(0);
  }, 300_000);

  afterAll(async () => {
    await bus?.close();
    await clickhouse?.close();
  }, 60_000);

  it('replays from an ISO time: exit 0, summary with group, partitions and count; no query result changes', async () => {
    const k = Math.floor(quotes.length * 0.6);
    const from = new Date(stamps[k]!).toISOString();
    const expected = stamps.length - k; // every message at or after --from (timestamps increase with the index)
    const end = await bus.endOffsets(TOPICS.quotes);
    const rowsBefore = num((await store.query(sql`SELECT count(*) AS n FROM quotes`))[0]?.n);

    const r = await replay(['--topic', TOPICS.quotes, '--group', QUOTES_GROUP, '--from', from]);
    console.log(`replay --from ${from}:\n${r.stdout.trim()}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/replay summary/);
    const line = r.stdout.split('\n').find((l) => l.includes(`replayed ${QUOTES_GROUP} on ${TOPICS.quotes}`));
    expect(line, r.stdout).toBeDefined();
    expect(line).toContain(`${expected} message(s)`);
    // Every partition, from its rewound offset to the end offset seen at the start.
    const parts = [...line!.matchAll(/(\d+):(\d+)->(\d+)/g)].map((m) => ({
      p: Number(m[1]),
      from: Number(m[2]),
      to: Number(m[3]),
    }));
    expect(parts.map((x) => x.p).sort()).toEqual(Object.keys(end).map(Number).sort());
    for (const x of parts) expect(String(x.to)).toBe(end[x.p]);
    expect(parts.reduce((a, x) => a + x.to - x.from, 0)).toBe(expected);
    expect(line).toMatch(/, 0 dead-lettered, 1 already in the DLQ \(not repeated\)/); // the malformed quote
    expect(total(await bus.endOffsets(`${TOPICS.quotes}.dlq`))).toBe(1);
    expect(await caughtUp(QUOTES_GROUP, [TOPICS.quotes])).toBe(true);

    // The rows were written again (physically, until a merge) and collapse: no result changed.
    const rowsAfter = num((await store.query(sql`SELECT count(*) AS n FROM quotes`))[0]?.n);
    console.log(`quotes rows without FINAL: ${rowsBefore} before, ${rowsAfter} after (${expected} replayed)`);
    expect(await snapshot(store)).toEqual(before);
  }, 360_000);

  it('replays one partition from an offset (--from-offset, --partition)', async () => {
    const end = await bus.endOffsets(TOPICS.quotes);
    const partition = Number(Object.entries(end).sort((a, b) => Number(b[1]) - Number(a[1]))[0]![0]);
    const offset = 7;
    const expected = Number(end[partition]) - offset;
    const r = await replay([
      '--topic',
      TOPICS.quotes,
      '--group',
      QUOTES_GROUP,
      '--from-offset',
      String(offset),
      '--partition',
      String(partition),
    ]);
    console.log(`replay --from-offset ${offset} --partition ${partition}:\n${r.stdout.trim()}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`replayed ${QUOTES_GROUP} on ${TOPICS.quotes}`);
    expect(r.stdout).toContain(`${partition}:${offset}->${end[partition]}`);
    expect(r.stdout).toContain(`${expected} message(s)`);
    // A second replay over the malformed quote: the DLQ still holds it once.
    expect(r.stdout).toContain('0 dead-lettered, 1 already in the DLQ (not repeated)');
    expect(total(await bus.endOffsets(`${TOPICS.quotes}.dlq`))).toBe(1);
    expect(await caughtUp(QUOTES_GROUP, [TOPICS.quotes])).toBe(true);
    expect(await snapshot(store)).toEqual(before);
  }, 360_000);

  it('refuses a bad --from with the usage line (exit 2)', async () => {
    const r = await replay(['--topic', TOPICS.quotes, '--group', QUOTES_GROUP, '--from', 'yesterday']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--from must be an ISO 8601 time/);
    expect(r.stderr).toMatch(/^usage: npm run replay -- --topic/m);
    const none = await replay(['--topic', TOPICS.quotes]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give --from or --from-offset/);
    expect(none.stderr).toMatch(/^usage:/m);
  }, 240_000);

  it('fails clearly (exit 1) while the group is running elsewhere, and changes nothing', async () => {
    const committed = await bus.committedOffsets(QUOTES_GROUP, TOPICS.quotes);
    const running = await startQuoteConsumer(bus, store, { logger });
    try {
      // Joined: the broker holds the group with its member (no longer empty), as the command will see it. Polled:
      // how long the join takes depends on the machine.
      await eventually(async () => running.status.running, Boolean, 60_000);
      await eventually(
        () => groupState(`${namespace}${QUOTES_GROUP}`),
        (state) => state === 'Stable',
        60_000,
        250,
      );
      const r = await replay(['--topic', TOPICS.quotes, '--group', QUOTES_GROUP, '--from', 'earliest']);
      console.log(`replay while running: exit ${r.code}: ${r.stderr.trim()}`);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /replay failed: cannot rewind aggregate\.quotes \(is the aggregate role still running\? stop it first\)/,
      );
      expect(r.stderr).toMatch(/running/);
      expect(r.stdout).not.toMatch(/replayed/);
    } finally {
      await running.stop();
    }
    expect(await bus.committedOffsets(QUOTES_GROUP, TOPICS.quotes)).toEqual(committed);
    expect(total(committed)).toBe(stamps.length);
    expect(await snapshot(store)).toEqual(before);
  }, 360_000);
});
