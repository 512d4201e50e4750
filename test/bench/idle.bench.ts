/**
 * `npm run bench:idle`: what `npm start` costs while nobody calls it (issue 26,
 * item 5: at most 0.2 of a core for the simulated market, the aggregation and
 * DuckDB). Starts `npm start`'s entry (roles/main.ts, embedded defaults,
 * MARKET_SOURCE=simulated) as a child process on a scratch DATA_DIR and a free
 * port, waits for /health, lets it settle for BENCH_IDLE_WARMUP_S (default 15),
 * then samples the CPU time of the process tree from /proc over BENCH_IDLE_S
 * (default 60) seconds:
 * - app: the node process of roles/main.ts, all its threads (event loop,
 *   libuv pool where DuckDB's queries run, DuckDB's own threads, the CPU pool);
 * - dev chain: its hardhat node (a child process; its block interval is the
 *   payment side's, not this figure's);
 * - floor, the baseline of the same run: a bare `node` process with one timer,
 *   sampled over the same interval (what any idle Node process costs here);
 * - other: the rest of the machine's busy time (work competing for the cores).
 * It also reads /metrics before and after: the rows the store took meanwhile
 * (the market keeps flowing; a low figure with nothing stored would mean
 * nothing). BENCH_IDLE_KEEP=1 keeps the scratch folder (app.log) for reading.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWriteStream } from 'node:fs';
import { cpuMsOf, descendantsMatching, machineBusyMs } from './cpu.js';
import { cleanupOnSignal, envNum } from './bench-app.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const TARGET_CORES = 0.2;
/** Measured on 2026-11-27 before issue 26 item 5 (same bench method, load average 4-10): docs/scaling.md "Idle cost". */
const BEFORE_CORES = 0.56;

const idleSeconds = envNum('BENCH_IDLE_S', 60);
const warmupSeconds = envNum('BENCH_IDLE_WARMUP_S', 15);

const dataDir = await mkdtemp(join(tmpdir(), 'bench-idle-'));
let app: ChildProcess | undefined;
let floor: ChildProcess | undefined;
const cleanup = cleanupOnSignal(async () => {
  for (const child of [app, floor]) if (child?.exitCode === null) child.kill('SIGTERM');
  if (app?.exitCode === null) await new Promise((r) => app!.once('exit', r));
  if (process.env.BENCH_IDLE_KEEP !== '1') await rm(dataDir, { recursive: true, force: true });
  else console.log(`kept ${dataDir}`);
});

try {
  console.log(`npm start's entry on ${dataDir} (MARKET_SOURCE=simulated, embedded defaults)`);
  const { url, child } = await startApp();
  app = child;
  await waitForHealth(url);
  console.log(`healthy at ${url}; settling ${warmupSeconds} s, then sampling ${idleSeconds} s`);
  await sleep(warmupSeconds * 1000);

  // Descendants of this bench: the app's hardhat node.
  const devchain = descendantsMatching(/hardhat/);
  floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(1000);
  const before = await sampleAll(url, child.pid!, devchain, floor.pid!);
  await sleep(idleSeconds * 1000);
  const after = await sampleAll(url, child.pid!, devchain, floor.pid!);
  report(before, after, child.pid!, devchain.length > 0);
} finally {
  await cleanup();
}

interface Sample {
  wall: number;
  app: number;
  threads: Map<string, number>;
  devchain: number;
  floor: number;
  machine: number;
  rows: Map<string, number>;
  statements: number;
}

async function startApp(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'roles/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      MARKET_SOURCE: 'simulated',
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      LOG_FORMAT: 'json',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(join(dataDir, 'app.log'));
  child.stderr!.pipe(log);
  let buffered = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the app did not log "ready" within 300 s')), 300_000);
    child.once('exit', (code) => reject(new Error(`the app exited with ${code} before it was ready (see app.log)`)));
    child.stdout!.on('data', (data: Buffer) => {
      log.write(data);
      buffered += data.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const ready = /"msg":"ready: (http:\/\/[^/"]+)\/health"/.exec(line);
        if (ready) {
          clearTimeout(timer);
          resolveUrl(ready[1]!);
        }
      }
    });
  });
  child.stdout!.removeAllListeners('data');
  child.stdout!.pipe(log);
  return { url, child };
}

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/health`);
      const body = (await res.json()) as { status?: string };
      if (body.status === 'ok' || body.status === 'degraded') return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/health did not answer within 120 s`);
    await sleep(500);
  }
}

async function sampleAll(url: string, appPid: number, devchain: number[], floorPid: number): Promise<Sample> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return {
    wall: performance.now(),
    app: cpuMsOf(appPid) ?? 0,
    threads: await threadCpu(appPid),
    devchain: devchain.reduce((a, pid) => a + (cpuMsOf(pid) ?? 0), 0),
    floor: cpuMsOf(floorPid) ?? 0,
    machine: machineBusyMs() ?? 0,
    rows: counters(metrics, 'store_rows_inserted_total'),
    statements: [...counters(metrics, 'store_insert_duration_seconds_count').values()].reduce((a, b) => a + b, 0),
  };
}

/** CPU ms of every thread of a process, by thread id. */
async function threadCpu(pid: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    try {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The values of a Prometheus counter by its `table` label (or the whole label set). */
function counters(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = line.slice(name.length, line.lastIndexOf('}') + 1);
    const table = /table="([^"]+)"/.exec(labels)?.[1] ?? labels;
    out.set(table, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

function report(a: Sample, b: Sample, appPid: number, hasDevchain: boolean): void {
  const seconds = (b.wall - a.wall) / 1000;
  const cores = (ms: number) => ms / 1000 / seconds;
  const appCores = cores(b.app - a.app);
  const devCores = cores(b.devchain - a.devchain);
  const floorCores = cores(b.floor - a.floor);
  const other = cores(Math.max(0, b.machine - a.machine - (b.app - a.app) - (b.devchain - a.devchain)));
  // The event-loop thread's id is the process id.
  const mainThread = cores((b.threads.get(String(appPid)) ?? 0) - (a.threads.get(String(appPid)) ?? 0));
  const rows = [...b.rows].map(([t, n]) => [t, n - (a.rows.get(t) ?? 0)] as const).filter(([, n]) => n > 0);
  const rowTotal = rows.reduce((s, [, n]) => s + n, 0);
  const statements = b.statements - a.statements;
  const fmt = (x: number) => x.toFixed(3);

  console.log(`\nIdle cost of npm start (simulated market, in-memory bus, DuckDB, dev chain), ${seconds.toFixed(1)} s`);
  console.log('| process | CPU s | core fraction | target | baseline |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| app (roles/main.ts, all threads) | ${((b.app - a.app) / 1000).toFixed(2)} | **${fmt(appCores)}** | <= ${TARGET_CORES} ${appCores <= TARGET_CORES ? 'met' : 'MISSED'} | ${BEFORE_CORES} before issue 26 item 5 (${(appCores / BEFORE_CORES).toFixed(2)}x) |`,
  );
  console.log(`| - of which the event-loop thread | | ${fmt(mainThread)} | | |`);
  console.log(
    `| dev chain (hardhat node) | ${((b.devchain - a.devchain) / 1000).toFixed(2)} | ${hasDevchain ? fmt(devCores) : 'not found'} | (payment side) | |`,
  );
  console.log(
    `| floor: bare node, one 1 s timer | ${((b.floor - a.floor) / 1000).toFixed(2)} | ${fmt(floorCores)} | | |`,
  );
  console.log(`| other work on the machine | | ${fmt(other)} | | |`);
  console.log(
    `\nStored meanwhile: ${rowTotal} rows (${(rowTotal / seconds).toFixed(1)}/s) in ${statements} insert batches ` +
      `(${(statements / seconds).toFixed(1)}/s): ${rows.map(([t, n]) => `${t} ${n}`).join(', ')}`,
  );
  if (rowTotal) console.log(`App CPU per stored row: ${((b.app - a.app) / rowTotal).toFixed(3)} ms`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
