/**
 * `npm run bench:pipeline`: the market-data pipeline end to end on the real
 * engines (`npm run engines:up`): Kafka -> aggregate -> ClickHouse, the
 * aggregate being the real role (`ROLE=aggregate node roles/main.ts`: quote
 * consumer, raw sinks, heartbeat sink, paper executor) in
 * BENCH_AGGREGATE_PROCESSES child processes (default 2, one per core; Kafka
 * splits the topic's BENCH_PARTITIONS partitions (default BUS_PARTITIONS, 3) between them, as it
 * would between the replicas of a deployment). Quotes are keyed by pair: the
 * 13 pairs of the catalogue fall 5/6/2 on the default 3 partitions, which two
 * processes share 7/6 (4 partitions would give 4/2/0/7, shared 4/9).
 *
 *  1. Pre-generates BENCH_QUOTES (default 1,000,000) seeded simulator quotes
 *     (every pair of the catalogue, CEX ticks and DEX blocks) and publishes
 *     them in large batches into a topic of a unique BUS_NAMESPACE.
 *  2. Pipeline: the quote consumer group is held by a gate first (a member
 *     of the group in this process that the group's leader assigns every
 *     partition to, and that consumes nothing); the aggregate processes start
 *     on that namespace and a fresh ClickHouse database and join the group
 *     with nothing to do; once all of them are in (DescribeGroups), the gate
 *     leaves, the group rebalances onto them, and the timing runs from there
 *     until the group committed the whole topic (it commits only what the
 *     store acknowledged; the stored count is checked after). Nobody consumes
 *     before every process is in, so a small BENCH_QUOTES gives a real figure
 *     too. The CPU split counts the aggregate processes as "node".
 *  3. Baseline A: a bare kafkajs consumer reading the same topic fully
 *     (eachBatch, no work). Baseline B: a bare @clickhouse/client inserting
 *     the same rows (JSONEachRow, BUS_BATCH_SIZE-row batches like the
 *     pipeline's, conversion outside the timing) into the quotes table schema
 *     in a scratch database.
 *  4. Ratio: pipeline / the slower baseline (target >= 0.5).
 *  5. Latency: BENCH_LATENCY_RATE quotes/s (default 5,000) for BENCH_LATENCY_S
 *     seconds (default 30), event_time = send time, through aggregate
 *     processes on another fresh database; every 25th quote is a marker whose
 *     arrival in ClickHouse is polled every BENCH_POLL_MS (default 100) ms:
 *     event-to-queryable latency p50/p99 (target p99 <= 2 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { AssignerProtocol, Kafka, logLevel, type PartitionAssigner } from 'kafkajs';
import { QUOTES_GROUP } from '../../aggregate/quote-consumer.js';
import type { Bus } from '../../core/bus/bus.js';
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
import { measureDepthSearch } from './depth-search.js';

const config = testConfig();
const logger = testLogger();
const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const N = int('BENCH_QUOTES', 1_000_000);
const LATENCY_RATE = int('BENCH_LATENCY_RATE', 5_000);
const LATENCY_S = int('BENCH_LATENCY_S', 30);
const POLL_MS = int('BENCH_POLL_MS', 100);
/** After the last send, how long markers are still awaited (a pipeline slower than the offered rate drains its backlog). */
const DRAIN_S = int('BENCH_DRAIN_S', 120);
/** Rows per bare insert: the pipeline's own batch size (BUS_BATCH_SIZE), so both sides write parts of the same size. */
const INSERT_BATCH = int('BENCH_INSERT_BATCH', config.BUS_BATCH_SIZE);
/** Messages per produce request (the broker's 1 MB record-batch limit per partition), several requests in flight. */
const PUBLISH_BATCH = 1_000;
const PUBLISH_IN_FLIGHT = 8;
/** Partitions of the benchmark's topics (default BUS_PARTITIONS, as the role creates them). */
const PARTITIONS = int('BENCH_PARTITIONS', config.BUS_PARTITIONS);
const AGGREGATE_PROCESSES = int('BENCH_AGGREGATE_PROCESSES', 2);
const MARKER_EVERY = 25;
/** BENCH_CHILD_LOG=1: print the aggregate processes' log lines (start-up, rebalances). */
const CHILD_LOG = process.env.BENCH_CHILD_LOG === '1';

const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const seconds = (t0: number) => (performance.now() - t0) / 1000;
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- CPU split

/** User + system CPU time (ms) of a process so far (all threads), or 0. */
function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ = 100
  } catch {
    return 0;
  }
}

/** Busy CPU time (ms) of the whole machine so far (every core). */
function machineBusyMs(): number {
  try {
    const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return ((v.slice(0, 8).reduce((a, b) => a + b, 0) - idle) * 1000) / 100;
  } catch {
    return 0;
  }
}

function pidsMatching(re: RegExp): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (re.test(readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' '))) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface CpuSplit {
  wallS: number;
  /** CPU seconds of the pipeline's processes (or of this one, for the bare clients), ClickHouse, the Kafka broker, everything else. */
  app: number;
  clickhouse: number;
  kafka: number;
  other: number;
  load1: number;
}

/** CPU time per process over an interval (as api.bench.ts's CpuMeter): the measured processes, ClickHouse, Kafka, the rest of the machine. */
const cpuPids = { clickhouse: pidsMatching(/clickhouse(-server| server)/), kafka: pidsMatching(/kafka\.Kafka/) };
function cpuMeter(appPids: number[] = [process.pid]): () => CpuSplit {
  const sample = () => ({
    app: appPids.reduce((a, p) => a + cpuMsOf(p), 0),
    clickhouse: cpuPids.clickhouse.reduce((a, p) => a + cpuMsOf(p), 0),
    kafka: cpuPids.kafka.reduce((a, p) => a + cpuMsOf(p), 0),
    machine: machineBusyMs(),
    t: performance.now(),
  });
  const a = sample();
  return () => {
    const b = sample();
    const d = (k: 'app' | 'clickhouse' | 'kafka' | 'machine') => (b[k] - a[k]) / 1000;
    return {
      wallS: (b.t - a.t) / 1000,
      app: d('app'),
      clickhouse: d('clickhouse'),
      kafka: d('kafka'),
      other: Math.max(0, d('machine') - d('app') - d('clickhouse') - d('kafka')),
      load1: loadavg()[0]!,
    };
  };
}
const fmtCpu = (c: CpuSplit) =>
  `CPU s over ${c.wallS.toFixed(1)} s: node ${c.app.toFixed(1)}, clickhouse ${c.clickhouse.toFixed(1)}, kafka ${c.kafka.toFixed(1)}, other ${c.other.toFixed(1)} (load1 ${c.load1.toFixed(2)})`;

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
  const store = await createClickHouseStore({
    url: config.CLICKHOUSE_URL,
    database,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    connectTimeoutMs: 10000,
    logger,
  });
  await store.migrate();
  return store;
}
const raw = createClient({
  url: config.CLICKHOUSE_URL,
  username: config.CLICKHOUSE_USER,
  password: config.CLICKHOUSE_PASSWORD,
});

// ---------------------------------------------------------------- aggregate processes

const MAIN = fileURLToPath(new URL('../../roles/main.ts', import.meta.url));

interface AggregateProcesses {
  pids: number[];
  /** performance.now() when the first process said it is ready (it may consume from then on). */
  firstReadyAt: number;
  stop(): Promise<void>;
}

/**
 * Starts `count` processes of the real aggregate role on the benchmark's
 * namespace and `database`, and resolves once each one said it is ready
 * (after its consumers started: nothing is consumed before the first of these).
 * BENCH_CPU_PROFILE=<dir>: V8 CPU profiles of these processes (node --cpu-prof).
 */
async function startAggregate(database: string, count: number, ns = namespace): Promise<AggregateProcesses> {
  const profileDir = process.env.BENCH_CPU_PROFILE;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const children: ChildProcess[] = [];
  const ready: Promise<number>[] = [];
  for (let i = 0; i < count; i++) {
    // --max-semi-space-size as docker-compose.yml runs the aggregate role.
    const child = spawn(
      process.execPath,
      [
        ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
        `--max-semi-space-size=${int('BENCH_SEMI_SPACE_MB', 64)}`,
        '--import',
        'tsx',
        MAIN,
      ],
      {
        env: {
          ...process.env,
          ROLE: 'aggregate',
          BUS: 'kafka',
          STORE: 'clickhouse',
          KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
          CLICKHOUSE_URL: config.CLICKHOUSE_URL,
          CLICKHOUSE_DATABASE: database,
          BUS_NAMESPACE: ns,
          BUS_PARTITIONS: String(PARTITIONS),
          // As a scaled deployment runs it: one paper executor, in the first process.
          AGGREGATE_PAPER_EXECUTOR: i === 0 ? 'true' : 'false',
          HTTP_PORT: '0',
          LOG_LEVEL: 'info', // start-up lines only: nothing is logged per batch at info
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let output = '';
    ready.push(
      new Promise<number>((resolve, reject) => {
        const onData = (d: Buffer) => {
          if (CHILD_LOG)
            for (const line of d.toString().split('\n')) if (line) log(`  [aggregate ${i}] ${line.slice(0, 300)}`);
          output = (output + d.toString()).slice(-8000);
          if (/"msg":"ready: /.test(output)) resolve(performance.now());
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        child.once('exit', (code) =>
          reject(new Error(`aggregate process exited (${code}) before it was ready:\n${output.slice(-2000)}`)),
        );
      }),
    );
  }
  const readyAt = await Promise.all(ready);
  return {
    pids: children.map((c) => c.pid!),
    firstReadyAt: Math.min(...readyAt),
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

const benchAdmin = new Kafka({
  clientId: uniqueName('bench-admin'),
  brokers: config.KAFKA_BROKERS,
  logLevel: logLevel.NOTHING,
}).admin();
await benchAdmin.connect();

/** Members of the namespace's quote consumer group once it is stable with `count` of them. */
async function groupOf(count: number, timeoutMs = 120_000) {
  const t0 = performance.now();
  const group = `${namespace}${QUOTES_GROUP}`;
  for (;;) {
    const { groups } = await benchAdmin.describeGroups([group]);
    const g = groups[0];
    if (g?.state === 'Stable' && g.members.length === count) return g.members;
    if (performance.now() - t0 > timeoutMs)
      throw new Error(
        `${group} did not reach ${count} members within ${timeoutMs / 1000} s (state ${g?.state}, ${g?.members.length ?? 0} members)`,
      );
    await sleep(100);
  }
}

const GATE_MARK = Buffer.from('bench-gate');
/**
 * The gate's assigner: it has the aggregate's assigner name (a group's members must share one), and,
 * as the group's leader (the first to join), gives every partition to the gate and none to the others.
 */
const gateAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'OrderedRoundRobinAssigner',
  version: 0,
  async assign({ members, topics }) {
    const isGate = (m: { memberMetadata: Buffer }) =>
      AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData.equals(GATE_MARK) ?? false;
    const all = Object.fromEntries(
      topics.map((t) => [t, cluster.findTopicPartitionMetadata(t).map((p) => p.partitionId)]),
    );
    return members.map((m) => ({
      memberId: m.memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: isGate(m) ? all : {},
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol: ({ topics }) => ({
    name: 'OrderedRoundRobinAssigner',
    metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: GATE_MARK }),
  }),
});

/** Joins the quote consumer group first and holds every partition without consuming; `open()` leaves. */
async function closeGate(): Promise<{ open(): Promise<void> }> {
  const kafka = new Kafka({
    clientId: uniqueName('bench-gate'),
    brokers: config.KAFKA_BROKERS,
    logLevel: logLevel.NOTHING,
  });
  const gate = kafka.consumer({
    groupId: `${namespace}${QUOTES_GROUP}`,
    partitionAssigners: [gateAssigner],
    heartbeatInterval: 500,
    sessionTimeout: 10_000,
    maxWaitTimeInMs: 500,
  });
  await gate.connect();
  await gate.subscribe({ topics: [topic], fromBeginning: true });
  await gate.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });
  gate.pause([{ topic }]);
  await groupOf(1);
  return { open: () => gate.disconnect() };
}

/** Publishes the generated quotes: PUBLISH_BATCH-message requests, PUBLISH_IN_FLIGHT at once. */
async function publishAll(target: Bus): Promise<void> {
  for (let i = 0; i < N; i += PUBLISH_BATCH * PUBLISH_IN_FLIGHT) {
    const sends = [];
    for (let k = i; k < Math.min(N, i + PUBLISH_BATCH * PUBLISH_IN_FLIGHT); k += PUBLISH_BATCH) {
      const batch = [];
      for (let j = k; j < Math.min(N, k + PUBLISH_BATCH); j++) batch.push({ key: keys[j]!, value: values[j]! });
      sends.push(target.publish(TOPICS.quotes, batch));
    }
    await Promise.all(sends);
  }
}

// ---------------------------------------------------------------- 1. generate + publish

log(`generating ${N.toLocaleString('en-US')} simulator quotes`);
let t = performance.now();
const catalogue = loadPairs();
const startMs = Math.floor(Date.now() / 900_000) * 900_000 - 86_400_000;
const sim = new MarketSimulator(catalogue, {
  seed: 2026,
  startMs,
  cexVenue: 'coinbase',
  ladderUsd: [1000, 10000, 50000, 100000],
  cexTickMs: 1000,
  blockMs: 2000,
  bookEveryTicks: 1_000_000,
  probeMs: 3_600_000,
});
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
const meanBytes = values.reduce((a, v) => a + v.length, 0) / N;
log(
  `generated in ${seconds(t).toFixed(1)} s (${pairsUsed} pairs, CEX ticks + DEX blocks; the simulator with a pulse, measured depth on every quote: ${Math.round(meanBytes)} bytes a quote)`,
);

t = performance.now();
await publishAll(bus);
const publishRate = N / seconds(t);
log(`published to ${topic} at ${fmt(publishRate)} msg/s`);

// ---------------------------------------------------------------- 2-4. pipeline and baselines, in rounds

const total = (offsets: Record<number, string>) =>
  Object.values(offsets).reduce((a, o) => a + Math.max(0, Number(o)), 0);

async function committedAll(group: string): Promise<boolean> {
  const [committed, end] = await Promise.all([
    bus.committedOffsets(group, TOPICS.quotes),
    bus.endOffsets(TOPICS.quotes),
  ]);
  return Object.entries(end).every(([p, high]) => high === '0' || committed[Number(p)] === high);
}

const dropper = createClient({
  url: config.CLICKHOUSE_URL,
  username: config.CLICKHOUSE_USER,
  password: config.CLICKHOUSE_PASSWORD,
  request_timeout: 300_000,
  log: { level: ClickHouseLogLevel.OFF },
});
async function dropDatabase(db: string): Promise<void> {
  // Dropping a database of a million freshly inserted rows can take longer than the client's default 30 s.
  await dropper
    .command({ query: `DROP DATABASE IF EXISTS ${ident(db).render('clickhouse')}` })
    .catch((err: unknown) => log(`could not drop ${db}: ${String(err)}`));
  databases.splice(databases.indexOf(db), 1);
}

/** The benchmark's topics (a million quotes is about 1 GB on the broker's disk). */
async function deleteBenchTopics(): Promise<void> {
  const topics = (await benchAdmin.listTopics()).filter((t) => t.startsWith(namespace));
  await benchAdmin
    .deleteTopics({ topics, timeout: 30_000 })
    .catch((err: unknown) => log(`could not delete the bench topics: ${String(err)}`));
}

/**
 * Same machine state for every measurement: the previous phase's databases are
 * dropped, ClickHouse has no merge running (up to 30 s) and one quiet second passed.
 */
async function settle(): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const [m] = await (
      await raw.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' })
    ).json<{ n: string }>();
    if (Number(m?.n) === 0) break;
    await sleep(250);
  }
  await sleep(1000);
}

interface Measure {
  rate: number;
  cpu: CpuSplit;
  /** Pipeline only: N over the time from the first process's start to the end (start-up included). */
  wholeRunRate?: number;
}

let pipeStore: Store | undefined;
async function runPipeline(round: number): Promise<Measure> {
  pipeStore = await newStore('bench_pipeline');
  if (round > 1) await bus.resetOffsets(QUOTES_GROUP, TOPICS.quotes, { kind: 'earliest' });
  await settle();
  log(
    `round ${round} pipeline: ${AGGREGATE_PROCESSES} aggregate process(es) (the real role), ${PARTITIONS} partitions -> ClickHouse`,
  );
  const gate = await closeGate();
  const aggregate = await startAggregate(databases[databases.length - 1]!, AGGREGATE_PROCESSES);
  await groupOf(AGGREGATE_PROCESSES + 1);
  if (total(await bus.committedOffsets(QUOTES_GROUP, TOPICS.quotes)) > 0)
    throw new Error('the gate let quotes through');
  // Timed from the moment every process is in the group: the gate leaves and the group rebalances onto them.
  const t0 = performance.now();
  const cpu = cpuMeter(aggregate.pids);
  await gate.open();
  let stored = 0;
  let lastReport = 0;
  // Done when the group committed the whole topic: it commits only what the store acknowledged. (Offsets
  // rather than count() polls, which would cost ClickHouse a scan of the table every time.)
  for (;;) {
    if (await committedAll(QUOTES_GROUP)) break;
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      log(
        `  ${total(await bus.committedOffsets(QUOTES_GROUP, TOPICS.quotes)).toLocaleString('en-US')} quotes committed after ${seconds(t0).toFixed(0)} s`,
      );
    }
    await sleep(100);
  }
  const pipelineS = seconds(t0);
  const wholeRunS = seconds(aggregate.firstReadyAt);
  const split = cpu();
  stored = num((await pipeStore.query(sql`SELECT count() AS n FROM quotes`))[0]?.n);
  if (stored < N) throw new Error(`the group committed the whole topic but only ${stored} of ${N} quotes are stored`);
  const rate = N / pipelineS;
  const wholeRunRate = N / wholeRunS;
  const [derived] = await pipeStore.query(
    sql`SELECT (SELECT count() FROM spread_samples) AS samples, (SELECT count() FROM dislocations) AS revisions`,
  );
  log(
    `round ${round} pipeline: ${N} quotes stored + derived in ${pipelineS.toFixed(1)} s = ${fmt(rate)} quotes/s (${num(derived?.samples)} spread samples, ${num(derived?.revisions)} dislocation revisions)`,
  );
  log(`  ${fmtCpu(split)}`);
  await aggregate.stop();
  await pipeStore.close();
  await dropDatabase(databases[databases.length - 1]!);
  return { rate, cpu: split, wholeRunRate };
}

async function runKafkaBaseline(round: number): Promise<Measure> {
  await settle();
  log(`round ${round} baseline A: bare kafkajs consumer (eachBatch, no work)`);
  const kafka = new Kafka({
    clientId: uniqueName('bench-raw'),
    brokers: config.KAFKA_BROKERS,
    logLevel: logLevel.NOTHING,
  });
  const rawConsumer = kafka.consumer({ groupId: uniqueName('bench-raw-group'), maxWaitTimeInMs: 1000 });
  await rawConsumer.connect();
  await rawConsumer.subscribe({ topics: [topic], fromBeginning: true });
  let consumed = 0;
  let done!: () => void;
  const allRead = new Promise<void>((r) => (done = r));
  const cpu = cpuMeter();
  const t0 = performance.now();
  await rawConsumer.run({
    eachBatch: async ({ batch }) => {
      consumed += batch.messages.length;
      if (consumed >= N) done();
    },
  });
  await allRead;
  const rate = N / seconds(t0);
  const split = cpu();
  await rawConsumer.disconnect();
  log(`round ${round} baseline A: ${fmt(rate)} msg/s`);
  log(`  ${fmtCpu(split)}`);
  return { rate, cpu: split };
}

async function runInsertBaseline(round: number): Promise<Measure> {
  const scratch = await newStore('bench_scratch');
  const scratchDb = databases[databases.length - 1]!;
  await scratch.close();
  await settle();
  log(`round ${round} baseline B: bare @clickhouse/client inserts of the same rows into the quotes schema`);
  let insertS = 0;
  const cpu = cpuMeter();
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
  const split = cpu(); // includes the row conversion, which is outside the timing
  const [check] = await (
    await raw.query({ query: `SELECT count() AS n FROM ${scratchDb}.quotes`, format: 'JSONEachRow' })
  ).json<{ n: string }>();
  if (Number(check?.n) !== N) throw new Error(`baseline B stored ${check?.n} rows, expected ${N}`);
  const rate = N / insertS;
  log(`round ${round} baseline B: ${fmt(rate)} rows/s`);
  log(`  ${fmtCpu(split)} (conversion outside the timing included)`);
  await dropDatabase(scratchDb);
  return { rate, cpu: split };
}

/** Rounds alternate the order (pipeline first, then baselines first), so drift in the machine's load hits both sides. */
const ROUNDS = int('BENCH_ROUNDS', 3);
const results = { pipeline: [] as Measure[], kafka: [] as Measure[], insert: [] as Measure[] };
for (let round = 1; round <= ROUNDS; round++) {
  log(
    `round ${round}/${ROUNDS}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (process.env.BENCH_PIPELINE_ONLY) results.pipeline.push(await runPipeline(round));
  else if (round % 2 === 1) {
    results.pipeline.push(await runPipeline(round));
    results.kafka.push(await runKafkaBaseline(round));
    results.insert.push(await runInsertBaseline(round));
  } else {
    results.insert.push(await runInsertBaseline(round));
    results.kafka.push(await runKafkaBaseline(round));
    results.pipeline.push(await runPipeline(round));
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pipelineRate = median(results.pipeline.map((m) => m.rate));
const kafkaRate = median(results.kafka.map((m) => m.rate));
const insertRate = median(results.insert.map((m) => m.rate));
if (process.env.BENCH_PIPELINE_ONLY) {
  // Profiling aid (node --cpu-prof): only the pipeline rounds.
  for (const db of [...databases]) await dropDatabase(db);
  await deleteBenchTopics();
  await benchAdmin.disconnect();
  await bus.close();
  process.exit(0);
}
const roundRatios = results.pipeline.map((p, i) => p.rate / Math.min(results.kafka[i]!.rate, results.insert[i]!.rate));

// ---------------------------------------------------------------- 5. latency at a steady rate

const latStore = await newStore('bench_latency');
await settle();
log(`latency: ${LATENCY_RATE} quotes/s for ${LATENCY_S} s, event_time = send time, markers polled every ${POLL_MS} ms`);
// The role's group continues from the end of the topic (the throughput rounds consumed it all).
await bus.resetOffsets(QUOTES_GROUP, TOPICS.quotes, { kind: 'latest' });
const latAggregate = await startAggregate(databases[databases.length - 1]!, AGGREGATE_PROCESSES);
// Until every process holds its partitions (the second member's join rebalances the group).
await groupOf(AGGREGATE_PROCESSES);
const runId = uniqueName('lat');
const sentAt = new Map<string, number>();
const latencies: number[] = [];
let sent = 0;
let publishing = true;
let publishedAt = 0;
const tStart = Date.now();
const latCpu = cpuMeter(latAggregate.pids);
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
        batch.push({
          key: tpl.pair,
          value: JSON.stringify({ ...tpl, event_id: id, event_time_ms: now, ingest_time_ms: now, sequence: sent }),
        });
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
    // A marker's ts is its send time (seconds): parts older than the oldest pending marker are skipped, so the
    // probe does not scan the whole table ten times a second (the instrument's own ClickHouse load).
    let oldest = Infinity;
    for (const at of sentAt.values()) oldest = Math.min(oldest, at);
    const since = Math.floor(oldest / 1000) - 1;
    const rs = await raw.query({
      query: `SELECT event_id FROM ${latDb}.quotes WHERE ts >= toDateTime(${since}) AND event_id IN (${list})`,
      format: 'JSONEachRow',
    });
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
const latSplit = latCpu();
const lost = sentAt.size;
await latAggregate.stop();
const achieved = sent / ((publishedAt - tStart) / 1000);
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
const p50 = pct(0.5);
const p99 = pct(0.99);
log(
  `latency: ${latencies.length} markers, p50 ${p50} ms, p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms${lost ? `, ${lost} never seen` : ''}`,
);

// ---------------------------------------------------------------- 6. the DEX depth search's quoter calls

log('depth search: the real DEX ingestor on hardhat, one Uniswap v3 pool per catalogue pair');
const depth = await measureDepthSearch();

// ---------------------------------------------------------------- report

const slower = Math.min(kafkaRate, insertRate);
const ratio = pipelineRate / slower;
console.log(
  `\nPipeline benchmark (${new Date().toISOString()}, ${N.toLocaleString('en-US')} quotes, ${pairsUsed} pairs, ${PARTITIONS} partitions, 2-core machine, load average now ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
console.log(
  `Rates are medians of ${ROUNDS} round(s); rounds alternate the order of pipeline and baselines. The pipeline rate counts from the moment all ${AGGREGATE_PROCESSES} aggregate processes are in the consumer group (nothing is consumed before); the rate from the first process's start is in the rounds table.`,
);
console.log('| measure | rate | ratio pipeline / this |');
console.log('|---|---|---|');
console.log(
  `| publish (bus producer, ${PUBLISH_BATCH}-message requests x ${PUBLISH_IN_FLIGHT} in flight) | ${fmt(publishRate)} msg/s | |`,
);
console.log(
  `| pipeline end to end (Kafka -> ${AGGREGATE_PROCESSES} aggregate role processes -> ClickHouse) | ${fmt(pipelineRate)} quotes/s | 1.00 |`,
);
console.log(
  `| baseline A: bare kafkajs consume (eachBatch, no work) | ${fmt(kafkaRate)} msg/s | ${(pipelineRate / kafkaRate).toFixed(2)} |`,
);
console.log(
  `| baseline B: bare @clickhouse/client insert (quotes schema, ${INSERT_BATCH / 1000}k batches) | ${fmt(insertRate)} rows/s | ${(pipelineRate / insertRate).toFixed(2)} |`,
);
console.log(
  `| **pipeline / slower baseline** | | **${ratio.toFixed(2)}** (target >= 0.5: ${ratio >= 0.5 ? 'met' : 'NOT met'}) |`,
);
console.log(
  `\n| round | pipeline quotes/s (all processes up) | from the first process's start | baseline A msg/s | baseline B rows/s | ratio | pipeline CPU s: node / clickhouse / kafka / other (load1) |`,
);
console.log('|---|---|---|---|---|---|---|');
results.pipeline.forEach((p, i) => {
  const c = p.cpu;
  console.log(
    `| ${i + 1} | ${fmt(p.rate)} | ${fmt(p.wholeRunRate ?? NaN)} (ratio ${((p.wholeRunRate ?? NaN) / Math.min(results.kafka[i]!.rate, results.insert[i]!.rate)).toFixed(2)}) | ${fmt(results.kafka[i]!.rate)} | ${fmt(results.insert[i]!.rate)} | ${roundRatios[i]!.toFixed(2)} | ${c.app.toFixed(1)} / ${c.clickhouse.toFixed(1)} / ${c.kafka.toFixed(1)} / ${c.other.toFixed(1)} over ${c.wallS.toFixed(1)} s (${c.load1.toFixed(2)}) |`,
  );
});
console.log(`\n| latency at a steady rate | value |`);
console.log('|---|---|');
console.log(`| offered / achieved rate | ${LATENCY_RATE} / ${fmt(achieved)} quotes/s for ${LATENCY_S} s |`);
console.log(
  `| markers (every ${MARKER_EVERY}th quote, polled every ${POLL_MS} ms) | ${latencies.length}${lost ? ` (${lost} not seen)` : ''} |`,
);
console.log(`| event-to-queryable p50 | ${p50} ms |`);
console.log(`| event-to-queryable p99 | ${p99} ms (target <= 2000: ${p99 <= 2000 ? 'met' : 'NOT met'}) |`);
console.log(`| ${fmtCpu(latSplit)} | |`);
console.log(
  `\n| DEX depth search (${depth.pools} Uniswap v3 pools on hardhat, ${depth.blocks} blocks, Multicall3 batches; half the pools with a CEX reference) | per block |`,
);
console.log('|---|---|');
console.log(
  `| quoter calls per pool: ladder (4 sizes x 2 sides) + search | ${depth.ladderCallsPerBlockPerPool.toFixed(1)} + ${depth.searchCallsPerBlockPerPool.toFixed(1)} = ${(depth.ladderCallsPerBlockPerPool + depth.searchCallsPerBlockPerPool).toFixed(1)} |`,
);
console.log(`| search rounds (sequential round trips, all pools batched) | ${depth.roundsPerBlock.toFixed(2)} |`);
console.log(`| search time, all pools | ${depth.searchMsPerBlock.toFixed(0)} ms |`);
console.log(`| whole block (state, ladder, search, publish) | ${depth.processMsPerBlock.toFixed(0)} ms |`);

// ---------------------------------------------------------------- cleanup

for (const db of [...databases]) await dropDatabase(db);
await dropper.close();
await deleteBenchTopics();
await benchAdmin.disconnect();
await latStore.close();
await raw.close();
await bus.close();
process.exit(0);
