/**
 * `npm run bench:pipeline`: the market-data pipeline end to end on the real
 * engines (`npm run engines:up`): Kafka -> aggregate (raw sinks + dislocation
 * consumer, as the role runs them) -> ClickHouse.
 *
 *  1. Pre-generates BENCH_QUOTES (default 1,000,000) seeded simulator quotes
 *     (every pair of the catalogue, CEX ticks and DEX blocks) and publishes
 *     them in large batches into a topic of a unique BUS_NAMESPACE.
 *  2. Pipeline: starts the real aggregate consumers on that namespace and a
 *     fresh ClickHouse database; times until every quote is stored (count via
 *     the store) and the dislocation consumer has committed the whole topic.
 *  3. Baseline A: a bare kafkajs consumer reading the same topic fully
 *     (eachBatch, no work). Baseline B: a bare @clickhouse/client inserting
 *     the same rows (JSONEachRow, 10k-row batches, conversion outside the
 *     timing) into the quotes table schema in a scratch database.
 *  4. Ratio: pipeline / the slower baseline (target >= 0.5).
 *  5. Latency: BENCH_LATENCY_RATE quotes/s (default 5,000) for BENCH_LATENCY_S
 *     seconds (default 30), event_time = send time, through the running
 *     pipeline into another fresh database; every 25th quote is a marker whose
 *     arrival in ClickHouse is polled every BENCH_POLL_MS (default 100) ms:
 *     event-to-queryable latency p50/p99 (target p99 <= 2 s).
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import { startDislocationConsumer, DISLOCATION_GROUP } from '../../aggregate/dislocation-consumer.js';
import { RAW_GROUP, startRawSinks } from '../../aggregate/raw-sinks.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { ident, sql, toSqlDateTime } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { quoteRow } from '../../core/store/tables/quotes.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';

const config = testConfig();
const logger = testLogger();
const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const N = int('BENCH_QUOTES', 1_000_000);
const LATENCY_RATE = int('BENCH_LATENCY_RATE', 5_000);
const LATENCY_S = int('BENCH_LATENCY_S', 30);
const POLL_MS = int('BENCH_POLL_MS', 100);
/** After the last send, how long markers are still awaited (a pipeline slower than the offered rate drains its backlog). */
const DRAIN_S = int('BENCH_DRAIN_S', 120);
const INSERT_BATCH = int('BENCH_INSERT_BATCH', 10_000);
/** Messages per produce request (the broker's 1 MB record-batch limit per partition), several requests in flight. */
const PUBLISH_BATCH = 1_000;
const PUBLISH_IN_FLIGHT = 8;
const PARTITIONS = config.BUS_PARTITIONS;
const MARKER_EVERY = 25;

const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const seconds = (t0: number) => (performance.now() - t0) / 1000;
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- engines

const namespace = `${uniqueName('benchpipe')}.`;
const databases: string[] = [];
const kafkaBus = await createKafkaBus({
  partitions: PARTITIONS,
  batchSize: config.BUS_BATCH_SIZE,
  maxAttempts: config.BUS_MAX_ATTEMPTS,
  retryBackoffMs: config.BUS_RETRY_BACKOFF_MS,
  brokers: config.KAFKA_BROKERS,
  clientId: uniqueName('bench-pipeline'),
  connectTimeoutMs: 15000,
  fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
  fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
  fetchMaxBytesPerPartition: config.KAFKA_FETCH_MAX_BYTES_PER_PARTITION,
  logger,
});
const bus: Bus = namespaced(kafkaBus, namespace);
await bus.ensureTopics(Object.values(TOPICS));
const topic = `${namespace}${TOPICS.quotes}`;

async function newStore(prefix: string): Promise<Store> {
  const database = uniqueName(prefix);
  databases.push(database);
  const store = await createClickHouseStore({ url: config.CLICKHOUSE_URL, database, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD, connectTimeoutMs: 10000, logger });
  await store.migrate();
  return store;
}
const raw = createClient({ url: config.CLICKHOUSE_URL, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD });

// ---------------------------------------------------------------- 1. generate + publish

log(`generating ${N.toLocaleString('en-US')} simulator quotes`);
let t = performance.now();
const catalogue = loadPairs();
const startMs = Math.floor(Date.now() / 900_000) * 900_000 - 86_400_000;
const sim = new MarketSimulator(catalogue, { seed: 2026, startMs, cexVenue: 'coinbase', ladderUsd: [1000, 10000, 50000, 100000], cexTickMs: 1000, blockMs: 2000, bookEveryTicks: 1_000_000, probeMs: 3_600_000 });
const keys: string[] = new Array(N);
const values: string[] = new Array(N);
const templates: QuoteEvent[] = [];
let generated = 0;
for (const e of sim.generate(Number.MAX_SAFE_INTEGER)) {
  if (e.topic !== TOPICS.quotes) continue;
  keys[generated] = e.key;
  values[generated] = JSON.stringify(e.event);
  if (templates.length < 2000) templates.push(e.event);
  if (++generated === N) break;
}
const pairsUsed = new Set(templates.map((q) => q.pair)).size;
log(`generated in ${seconds(t).toFixed(1)} s (${pairsUsed} pairs, CEX ticks + DEX blocks)`);

t = performance.now();
for (let i = 0; i < N; i += PUBLISH_BATCH * PUBLISH_IN_FLIGHT) {
  const sends = [];
  for (let k = i; k < Math.min(N, i + PUBLISH_BATCH * PUBLISH_IN_FLIGHT); k += PUBLISH_BATCH) {
    const batch = [];
    for (let j = k; j < Math.min(N, k + PUBLISH_BATCH); j++) batch.push({ key: keys[j]!, value: values[j]! });
    sends.push(bus.publish(TOPICS.quotes, batch));
  }
  await Promise.all(sends);
}
const publishRate = N / seconds(t);
log(`published to ${topic} at ${fmt(publishRate)} msg/s`);

// ---------------------------------------------------------------- 2. pipeline

async function committedAll(group: string): Promise<boolean> {
  const [committed, end] = await Promise.all([bus.committedOffsets(group, TOPICS.quotes), bus.endOffsets(TOPICS.quotes)]);
  return Object.entries(end).every(([p, high]) => high === '0' || committed[Number(p)] === high);
}

const pipeStore = await newStore('bench_pipeline');
log('pipeline: raw sinks + dislocation consumer -> ClickHouse');
t = performance.now();
const consumers: Consumer[] = [await startRawSinks(bus, pipeStore, { groupId: RAW_GROUP }), await startDislocationConsumer(bus, pipeStore, { groupId: DISLOCATION_GROUP, logger })];
let stored = 0;
let lastReport = 0;
for (;;) {
  stored = num((await pipeStore.query(sql`SELECT count() AS n FROM quotes`))[0]?.n);
  if (stored >= N && (await committedAll(DISLOCATION_GROUP))) break;
  if (performance.now() - lastReport > 10_000) {
    lastReport = performance.now();
    log(`  ${stored.toLocaleString('en-US')} quotes stored after ${seconds(t).toFixed(0)} s`);
  }
  await sleep(200);
}
const pipelineS = seconds(t);
const pipelineRate = N / pipelineS;
const [derived] = await pipeStore.query(sql`SELECT (SELECT count() FROM spread_samples) AS samples, (SELECT count() FROM dislocations) AS revisions`);
log(`pipeline: ${N} quotes stored + derived in ${pipelineS.toFixed(1)} s = ${fmt(pipelineRate)} quotes/s (${num(derived?.samples)} spread samples, ${num(derived?.revisions)} dislocation revisions)`);
await Promise.all(consumers.map((c) => c.stop()));

// ---------------------------------------------------------------- 3a. bare kafkajs

log('baseline A: bare kafkajs consumer (eachBatch, no work)');
const kafka = new Kafka({ clientId: uniqueName('bench-raw'), brokers: config.KAFKA_BROKERS, logLevel: logLevel.NOTHING });
const rawConsumer = kafka.consumer({ groupId: uniqueName('bench-raw-group'), maxWaitTimeInMs: 1000 });
await rawConsumer.connect();
await rawConsumer.subscribe({ topics: [topic], fromBeginning: true });
let consumed = 0;
let done!: () => void;
const allRead = new Promise<void>((r) => (done = r));
t = performance.now();
await rawConsumer.run({
  eachBatch: async ({ batch }) => {
    consumed += batch.messages.length;
    if (consumed >= N) done();
  },
});
await allRead;
const kafkaRate = N / seconds(t);
await rawConsumer.disconnect();
log(`baseline A: ${fmt(kafkaRate)} msg/s`);

// ---------------------------------------------------------------- 3b. bare ClickHouse insert

log('baseline B: bare @clickhouse/client inserts of the same rows into the quotes schema');
const scratch = await newStore('bench_scratch');
const scratchDb = databases[databases.length - 1]!;
await scratch.close();
let insertS = 0;
for (let i = 0; i < N; i += INSERT_BATCH) {
  const rows = [];
  for (let j = i; j < Math.min(N, i + INSERT_BATCH); j++) {
    const r = quoteRow(JSON.parse(values[j]!) as QuoteEvent) as unknown as Record<string, unknown>;
    rows.push({ ...r, ts: toSqlDateTime(r.ts as Date), fee_included: r.fee_included ? 1 : 0 });
  }
  const t0 = performance.now();
  await raw.insert({ table: `${scratchDb}.quotes`, values: rows, format: 'JSONEachRow' });
  insertS += seconds(t0);
}
const [check] = await (await raw.query({ query: `SELECT count() AS n FROM ${scratchDb}.quotes`, format: 'JSONEachRow' })).json<{ n: string }>();
if (Number(check?.n) !== N) throw new Error(`baseline B stored ${check?.n} rows, expected ${N}`);
const insertRate = N / insertS;
log(`baseline B: ${fmt(insertRate)} rows/s`);

// ---------------------------------------------------------------- 5. latency at a steady rate

log(`latency: ${LATENCY_RATE} quotes/s for ${LATENCY_S} s, event_time = send time, markers polled every ${POLL_MS} ms`);
const latStore = await newStore('bench_latency');
const latConsumers: Consumer[] = [
  await startRawSinks(bus, latStore, { groupId: `${RAW_GROUP}.latency`, fromBeginning: false }),
  await startDislocationConsumer(bus, latStore, { groupId: `${DISLOCATION_GROUP}.latency`, fromBeginning: false, logger }),
];
// New groups start at the end of the topic: wait until they hold their partitions (committed or assigned).
await sleep(5000);
const runId = uniqueName('lat');
const sentAt = new Map<string, number>();
const latencies: number[] = [];
let sent = 0;
let publishing = true;
let publishedAt = 0;
const tStart = Date.now();
const publisher = (async () => {
  const total = LATENCY_RATE * LATENCY_S;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - tStart) / 1000) * LATENCY_RATE));
    if (due > sent) {
      const now = Date.now();
      const batch = [];
      for (; sent < due; sent++) {
        const tpl = templates[sent % templates.length]!;
        const id = `${runId}:${sent}`;
        batch.push({ key: tpl.pair, value: JSON.stringify({ ...tpl, event_id: id, event_time_ms: now, ingest_time_ms: now, sequence: sent }) });
        if (sent % MARKER_EVERY === 0) sentAt.set(id, now);
      }
      await bus.publish(TOPICS.quotes, batch);
    }
    await sleep(10);
  }
  publishedAt = Date.now();
  publishing = false;
})();
const latDb = databases[databases.length - 1]!;
while (publishing || sentAt.size) {
  if (!publishing && Date.now() - publishedAt > DRAIN_S * 1000) break;
  const pending = [...sentAt.keys()];
  if (pending.length) {
    const list = pending.map((id) => `'${id}'`).join(',');
    const rs = await raw.query({ query: `SELECT event_id FROM ${latDb}.quotes WHERE event_id IN (${list})`, format: 'JSONEachRow' });
    const seen = Date.now();
    for (const { event_id } of await rs.json<{ event_id: string }>()) {
      const at = sentAt.get(event_id);
      if (at === undefined) continue;
      latencies.push(seen - at);
      sentAt.delete(event_id);
    }
  }
  await sleep(POLL_MS);
}
await publisher;
const lost = sentAt.size;
await Promise.all(latConsumers.map((c) => c.stop()));
const achieved = sent / ((publishedAt - tStart) / 1000);
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
const p50 = pct(0.5);
const p99 = pct(0.99);
log(`latency: ${latencies.length} markers, p50 ${p50} ms, p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms${lost ? `, ${lost} never seen` : ''}`);

// ---------------------------------------------------------------- report

const slower = Math.min(kafkaRate, insertRate);
const ratio = pipelineRate / slower;
console.log(`\nPipeline benchmark (${new Date().toISOString()}, ${N.toLocaleString('en-US')} quotes, ${pairsUsed} pairs, ${PARTITIONS} partitions, 2-core machine)`);
console.log('| measure | rate | ratio pipeline / this |');
console.log('|---|---|---|');
console.log(`| publish (bus producer, ${PUBLISH_BATCH}-message requests x ${PUBLISH_IN_FLIGHT} in flight) | ${fmt(publishRate)} msg/s | |`);
console.log(`| pipeline end to end (Kafka -> raw sinks + dislocation consumer -> ClickHouse) | ${fmt(pipelineRate)} quotes/s | 1.00 |`);
console.log(`| baseline A: bare kafkajs consume (eachBatch, no work) | ${fmt(kafkaRate)} msg/s | ${(pipelineRate / kafkaRate).toFixed(2)} |`);
console.log(`| baseline B: bare @clickhouse/client insert (quotes schema, ${INSERT_BATCH / 1000}k batches) | ${fmt(insertRate)} rows/s | ${(pipelineRate / insertRate).toFixed(2)} |`);
console.log(`| **pipeline / slower baseline** | | **${ratio.toFixed(2)}** (target >= 0.5: ${ratio >= 0.5 ? 'met' : 'NOT met'}) |`);
console.log(`\n| latency at a steady rate | value |`);
console.log('|---|---|');
console.log(`| offered / achieved rate | ${LATENCY_RATE} / ${fmt(achieved)} quotes/s for ${LATENCY_S} s |`);
console.log(`| markers (every ${MARKER_EVERY}th quote, polled every ${POLL_MS} ms) | ${latencies.length}${lost ? ` (${lost} not seen)` : ''} |`);
console.log(`| event-to-queryable p50 | ${p50} ms |`);
console.log(`| event-to-queryable p99 | ${p99} ms (target <= 2000: ${p99 <= 2000 ? 'met' : 'NOT met'}) |`);

// ---------------------------------------------------------------- cleanup

// Dropping a database of a million freshly inserted rows can take longer than the client's default 30 s.
const dropper = createClient({ url: config.CLICKHOUSE_URL, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD, request_timeout: 300_000, log: { level: ClickHouseLogLevel.OFF } });
for (const db of databases) {
  await dropper.command({ query: `DROP DATABASE IF EXISTS ${ident(db).render('clickhouse')}` }).catch((err: unknown) => log(`could not drop ${db}: ${String(err)}`));
}
await dropper.close();
await pipeStore.close();
await latStore.close();
await raw.close();
await bus.close();
process.exit(0);
