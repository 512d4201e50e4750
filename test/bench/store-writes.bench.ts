/**
 * `npm run bench:store-writes`: what the aggregate's writes cost ClickHouse at
 * the idle simulated feed (issue 28, item 4: ~19 inserts/s of ~5 rows, merges
 * ~450x the rows inserted, 22-28 % of a core), with the table batcher off (the
 * baseline of the same run: STORE_BATCH_MAX_WAIT_MS=0, one insert per table per
 * Kafka batch) and on (this run's settings, or the defaults of core/config.ts).
 *
 * A private ClickHouse 18.16 (test/helpers/private-clickhouse.ts, free loopback
 * ports) so that its CPU and its merges are this bench's alone; the shared Kafka
 * under a fresh BUS_NAMESPACE per run. Per run: `ROLE=ingest` (simulated market)
 * and `ROLE=aggregate` (STORE=clickhouse, a fresh database) as processes, as
 * deployed. The simulated market first publishes BENCH_STORE_WRITES_BACKFILL_MIN
 * (default 10) minutes of history at once (SIM_BACKFILL_MINUTES): ClickHouse's
 * merge work grows with the size of the parts the small new ones are merged
 * into (18.16 merges parts under ~5 MB by their count, not their size), so an
 * empty table understates a running deployment's (the issue's figures are from
 * an hour of running; a 60-minute backfill keeps a loaded 2-core machine busy
 * past the warm-up). Then BENCH_STORE_WRITES_WARMUP_S (default 45) to settle,
 * and BENCH_STORE_WRITES_S (default 150) sampled:
 * - inserts/s and rows/insert: ClickHouse's `InsertQuery` / `InsertedRows`
 *   (system.events), per table from the aggregate's /metrics;
 * - merge ratio: rows merged / rows inserted (`MergedRows` / `InsertedRows`),
 *   merge time per second (`MergesTimeMilliseconds`; 18.16 counts no merges),
 *   parts written per second (`MergeTreeDataWriterBlocks`), the highest part
 *   level at the end (system.parts);
 * - ClickHouse CPU: user + system time of the server process (/proc) over the
 *   interval, as a fraction of one core.
 * The run's database is dropped after it, so its merges stop before the next.
 * Figures vary with the machine's load: read the ratios between the two runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRun } from '../helpers/free-ports.js';
import { startPrivateClickHouse, type PrivateClickHouse } from '../helpers/private-clickhouse.js';
import { cleanupOnSignal, envNum } from './bench-app.js';
import { cpuMsOf } from './cpu.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const warmupSeconds = envNum('BENCH_STORE_WRITES_WARMUP_S', 45);
/** History published at start (SIM_BACKFILL_MINUTES): tables the size of a run of that long, whose parts the new ones merge into. */
const backfillMinutes = envNum('BENCH_STORE_WRITES_BACKFILL_MIN', 10);
const sampleSeconds = envNum('BENCH_STORE_WRITES_S', 150);
/** Issue 28's targets at the idle feed. */
const TARGET_MERGE_RATIO = 20;
const TARGET_CH_CORES = 0.05;
/** ClickHouse 18.16's counters read (system.events). */
const EVENTS = [
  'InsertQuery',
  'InsertedRows',
  'MergedRows',
  'MergesTimeMilliseconds',
  'MergeTreeDataWriterBlocks',
] as const;

interface Run {
  label: string;
  env: Record<string, string>;
}

const RUNS: Run[] = [
  { label: 'batching off (baseline)', env: { STORE_BATCH_MAX_WAIT_MS: '0' } },
  {
    label: 'batching on',
    env: {
      STORE_BATCH_MAX_WAIT_MS: process.env.STORE_BATCH_MAX_WAIT_MS || '5000',
      STORE_BATCH_MAX_ROWS: process.env.STORE_BATCH_MAX_ROWS || '10000',
    },
  },
];

interface Figures {
  seconds: number;
  inserts: number;
  insertedRows: number;
  mergedRows: number;
  mergeMs: number;
  partsWritten: number;
  chCpuMs: number;
  maxLevel: number;
  perTable: Map<string, { inserts: number; rows: number }>;
}

const scratch = await mkdtemp(join(tmpdir(), 'bench-store-writes-'));
let clickhouse: PrivateClickHouse | undefined;
const children = new Set<ChildProcess>();
const cleanup = cleanupOnSignal(async () => {
  await Promise.all([...children].map(stopChild));
  await clickhouse?.stop();
  if (process.env.BENCH_STORE_WRITES_KEEP !== '1') await rm(scratch, { recursive: true, force: true });
  else console.log(`kept ${scratch}`);
});

try {
  console.log('starting a private ClickHouse 18.16 on loopback');
  clickhouse = await startPrivateClickHouse();
  const chPid = Number((await readFile(join(clickhouse.dir, 'clickhouse.pid'), 'utf8')).trim());
  const results: { run: Run; figures: Figures }[] = [];
  for (const [i, run] of RUNS.entries()) {
    console.log(`\n${run.label}: ${JSON.stringify(run.env)}; settling ${warmupSeconds} s, sampling ${sampleSeconds} s`);
    results.push({ run, figures: await measure(clickhouse, chPid, run, i) });
    report(results[results.length - 1]!.figures);
  }
  summary(results);
} finally {
  await cleanup();
}

async function measure(ch: PrivateClickHouse, chPid: number, run: Run, index: number): Promise<Figures> {
  const tag = `bsw${Date.now().toString(36)}${index}`;
  const env = {
    BUS: 'kafka',
    STORE: 'clickhouse',
    QUEUE: 'inprocess',
    MARKET_SOURCE: 'simulated',
    SIM_BACKFILL_MINUTES: String(backfillMinutes),
    CLICKHOUSE_URL: ch.url,
    CLICKHOUSE_DATABASE: tag,
    BUS_NAMESPACE: `${tag}.`,
    LOG_FORMAT: 'json',
    NODE_ENV: 'development',
    DATA_DIR: join(scratch, tag),
    ...run.env,
  };
  const ingest = await startRole('ingest', env, join(scratch, `${tag}-ingest.log`));
  const aggregate = await startRole('aggregate', env, join(scratch, `${tag}-aggregate.log`));
  try {
    await sleep(warmupSeconds * 1000);
    const a = await sample(ch, chPid, aggregate.url);
    await sleep(sampleSeconds * 1000);
    const b = await sample(ch, chPid, aggregate.url);
    const level = await chQuery(ch, `SELECT max(level) FROM system.parts WHERE active AND database = '${tag}'`);
    const perTable = new Map<string, { inserts: number; rows: number }>();
    for (const [table, n] of b.tableInserts) {
      const inserts = n - (a.tableInserts.get(table) ?? 0);
      const rows = (b.tableRows.get(table) ?? 0) - (a.tableRows.get(table) ?? 0);
      if (inserts > 0) perTable.set(table, { inserts, rows });
    }
    return {
      seconds: (b.wall - a.wall) / 1000,
      inserts: b.events.InsertQuery - a.events.InsertQuery,
      insertedRows: b.events.InsertedRows - a.events.InsertedRows,
      mergedRows: b.events.MergedRows - a.events.MergedRows,
      mergeMs: b.events.MergesTimeMilliseconds - a.events.MergesTimeMilliseconds,
      partsWritten: b.events.MergeTreeDataWriterBlocks - a.events.MergeTreeDataWriterBlocks,
      chCpuMs: b.chCpuMs - a.chCpuMs,
      maxLevel: Number(level.trim() || 0),
      perTable,
    };
  } finally {
    await Promise.all([stopChild(ingest.child), stopChild(aggregate.child)]);
    await chQuery(ch, `DROP DATABASE IF EXISTS ${tag}`);
  }
}

interface Sample {
  wall: number;
  events: Record<(typeof EVENTS)[number], number>;
  chCpuMs: number;
  tableInserts: Map<string, number>;
  tableRows: Map<string, number>;
}

async function sample(ch: PrivateClickHouse, chPid: number, appUrl: string): Promise<Sample> {
  const [text, metrics] = await Promise.all([
    chQuery(ch, `SELECT event, value FROM system.events WHERE event IN (${EVENTS.map((e) => `'${e}'`).join(',')})`),
    fetch(`${appUrl}/metrics`).then((r) => r.text()),
  ]);
  const events = Object.fromEntries(EVENTS.map((e) => [e, 0])) as Sample['events'];
  for (const line of text.trim().split('\n')) {
    const [name, value] = line.split('\t');
    if (name && name in events) events[name as keyof Sample['events']] = Number(value);
  }
  return {
    wall: performance.now(),
    events,
    chCpuMs: cpuMsOf(chPid) ?? 0,
    tableInserts: counters(metrics, 'store_insert_duration_seconds_count'),
    tableRows: counters(metrics, 'store_rows_inserted_total'),
  };
}

/** The values of a Prometheus counter by its `table` label. */
function counters(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const table = /table="([^"]+)"/.exec(line)?.[1];
    if (table) out.set(table, (out.get(table) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

async function chQuery(ch: PrivateClickHouse, query: string): Promise<string> {
  const res = await fetch(ch.url, { method: 'POST', body: query });
  const body = await res.text();
  if (!res.ok) throw new Error(`ClickHouse: ${body}`);
  return body;
}

async function startRole(
  role: string,
  env: Record<string, string>,
  logFile: string,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePortRun(1);
  const child = spawn(process.execPath, ['--import', 'tsx', 'roles/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, ROLE: role, HTTP_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const log = createWriteStream(logFile);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode} (see ${logFile})`);
    try {
      const res = await fetch(`${url}/health`);
      const body = (await res.json()) as { status?: string };
      if (body.status === 'ok' || body.status === 'degraded') return { child, url };
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${role} /health did not answer within 180 s (see ${logFile})`);
    await sleep(500);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

function fmt(x: number, digits = 2): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

function derived(f: Figures) {
  return {
    insertsPerS: f.inserts / f.seconds,
    rowsPerInsert: f.insertedRows / f.inserts,
    mergeRatio: f.mergedRows / f.insertedRows,
    mergeMsPerS: f.mergeMs / f.seconds,
    partsPerS: f.partsWritten / f.seconds,
    chCores: f.chCpuMs / 1000 / f.seconds,
  };
}

function report(f: Figures): void {
  const d = derived(f);
  console.log(
    `  ${fmt(f.seconds, 1)} s: ${fmt(d.insertsPerS)} inserts/s, ${fmt(d.rowsPerInsert, 1)} rows/insert, ` +
      `merge ratio ${fmt(d.mergeRatio, 1)}x (${f.mergedRows} rows merged / ${f.insertedRows} inserted, ` +
      `${fmt(d.mergeMsPerS, 0)} ms merging per s, ${fmt(d.partsPerS)} parts written/s, max part level ${f.maxLevel}), ClickHouse ${fmt(d.chCores * 100, 1)} % of a core`,
  );
  console.log('  | table | inserts/s | rows/insert |');
  console.log('  |---|---|---|');
  for (const [table, t] of [...f.perTable].sort((x, y) => y[1].inserts - x[1].inserts)) {
    console.log(`  | ${table} | ${fmt(t.inserts / f.seconds)} | ${fmt(t.rows / t.inserts, 1)} |`);
  }
}

function summary(results: { run: Run; figures: Figures }[]): void {
  const [off, on] = results.map((r) => derived(r.figures)) as [ReturnType<typeof derived>, ReturnType<typeof derived>];
  const ratio = (a: number, b: number) => `${fmt(b / a)}x`;
  console.log(`\nClickHouse cost of the aggregate's writes at the idle simulated feed (${sampleSeconds} s per run)`);
  console.log('| figure | batching off (baseline) | batching on | on / off | target |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| inserts/s | ${fmt(off.insertsPerS)} | ${fmt(on.insertsPerS)} | ${ratio(off.insertsPerS, on.insertsPerS)} | |`,
  );
  console.log(
    `| rows/insert | ${fmt(off.rowsPerInsert, 1)} | ${fmt(on.rowsPerInsert, 1)} | ${ratio(off.rowsPerInsert, on.rowsPerInsert)} | |`,
  );
  console.log(
    `| merge ratio (rows merged / inserted) | ${fmt(off.mergeRatio, 1)} | ${fmt(on.mergeRatio, 1)} | ${ratio(off.mergeRatio, on.mergeRatio)} | <= ${TARGET_MERGE_RATIO} ${on.mergeRatio <= TARGET_MERGE_RATIO ? 'met' : 'MISSED'} |`,
  );
  console.log(
    `| parts written/s | ${fmt(off.partsPerS)} | ${fmt(on.partsPerS)} | ${ratio(off.partsPerS, on.partsPerS)} | |`,
  );
  console.log(
    `| merge time, ms per s | ${fmt(off.mergeMsPerS, 0)} | ${fmt(on.mergeMsPerS, 0)} | ${ratio(off.mergeMsPerS, on.mergeMsPerS)} | |`,
  );
  console.log(
    `| ClickHouse CPU, % of a core | ${fmt(off.chCores * 100, 1)} | ${fmt(on.chCores * 100, 1)} | ${ratio(off.chCores, on.chCores)} | < ${TARGET_CH_CORES * 100} ${on.chCores < TARGET_CH_CORES ? 'met' : 'MISSED'} |`,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
