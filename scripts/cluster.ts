/**
 * The production recipe on one machine: the four roles as separate processes
 * on the real engines (`npm run engines:up`), each with its own HTTP port
 * (/health, /metrics; the api also serves the API), data folder and log.
 *
 *   npm run cluster -- up [--api N] [--aggregate N] [--worker N]
 *     (api replicas share api-1's dev chain and settler key: sharedDevChain below)
 *   npm run cluster -- status
 *   npm run cluster -- down
 *
 * Ports: api-1 on CLUSTER_BASE_PORT (4020), then ingest, aggregate and worker
 * replicas on the following ports. State, logs and data under CLUSTER_DIR
 * (default .cluster/). The processes get BUS=kafka, STORE=clickhouse,
 * QUEUE=bullmq unless the environment says otherwise, and every other
 * variable of the environment (KAFKA_BROKERS, CLICKHOUSE_URL, REDIS_URL,
 * MARKET_SOURCE, BUS_NAMESPACE, ...). Only aggregate-1 runs the paper
 * executor. `up` starts what is not running and waits until each process
 * answers /health; `status` says what runs and how healthy it is (exit 1 if
 * something is missing or down); `down` drains them with SIGTERM (api first,
 * worker last) and SIGKILLs only what outlives SHUTDOWN_TIMEOUT_MS.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readDevChainInfo } from '../api/dev-chain/dev-chain.js';
import {
  errorLines,
  health,
  plan,
  portFree,
  readState,
  running,
  shown,
  start,
  stop,
  START_ORDER,
  STOP_ORDER,
  writeState,
  type ClusterProcess,
  type ClusterRole,
} from './cluster/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = 'usage: npm run cluster -- up [--api N] [--aggregate N] [--worker N] | status | down';
const DIR = process.env.CLUSTER_DIR
  ? process.env.CLUSTER_DIR.startsWith('/')
    ? process.env.CLUSTER_DIR
    : `${ROOT}${process.env.CLUSTER_DIR}`
  : `${ROOT}.cluster`;
const HOST = process.env.HTTP_HOST ?? '127.0.0.1';
const START_TIMEOUT_MS = Number(process.env.CLUSTER_START_TIMEOUT_S ?? 90) * 1000;
const STOP_GRACE_MS = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 20000) + 5000;

function fail(message: string, code = 2): never {
  console.error(`cluster: ${message}${code === 2 ? `\n${USAGE}` : ''}`);
  process.exit(code);
}

const count = (v: string | undefined, name: string, max: number) => {
  if (v === undefined) return 1;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) fail(`--${name} must be 1..${max}, got ${v}`);
  return Number(v);
};

function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function table(processes: ClusterProcess[], extra: (p: ClusterProcess) => string): void {
  console.log(`${'process'.padEnd(12)} ${'pid'.padEnd(8)} ${'url'.padEnd(24)} ${'log'.padEnd(34)} state`);
  for (const p of processes) {
    console.log(
      `${p.name.padEnd(12)} ${String(p.pid ?? '-').padEnd(8)} ${`http://${HOST}:${p.port}`.padEnd(24)} ${shown(p.log, ROOT).padEnd(34)} ${extra(p)}`,
    );
  }
}

/**
 * The settler-key rule (docs/payment.md): every api replica settles with one key, its transactions ordered by the
 * nonce lease in Redis. In the dev mode (SETTLEMENT unset or `devchain`) api-1 runs the dev chain, and the other
 * replicas join it as `self` settlers of that chain with its token, pay-to and settler key (api-1's
 * `devchain.json`), so every replica challenges for the same asset and pay-to. api-1 restarted starts a new chain:
 * restart the other api replicas with it (`down`, then `up`).
 */
async function sharedDevChain(processes: ClusterProcess[], env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  if ((env.SETTLEMENT ?? 'devchain') !== 'devchain') return {};
  const first = processes.find((p) => p.name === 'api-1');
  if (!first) return {};
  const t0 = Date.now();
  for (;;) {
    try {
      const info = await readDevChainInfo(first.dataDir);
      if (info.api_url && running(first))
        return {
          SETTLEMENT: 'self',
          PAYMENT_NETWORK: info.network,
          PAYMENT_RPC_URL: info.rpc_url,
          PAYMENT_ASSET: info.asset,
          PAYMENT_PAY_TO: info.pay_to,
          PAYMENT_SETTLER_KEY: info.settler_key,
        };
    } catch {
      // not written yet
    }
    if (!running(first)) fail(`api-1 exited before its dev chain was up:\n${tail(first.log)}`, 1);
    if (Date.now() - t0 > START_TIMEOUT_MS) fail(`api-1's dev chain was not up within ${START_TIMEOUT_MS} ms`, 1);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function up(replicas: Record<ClusterRole, number>, basePort: number): Promise<void> {
  let processes = readState(DIR);
  const wanted = plan({ dir: DIR, basePort, replicas });
  if (processes.some(running)) {
    const same =
      processes.length === wanted.length &&
      processes.every((p, i) => p.name === wanted[i]!.name && p.port === wanted[i]!.port);
    if (!same) fail('a cluster with another layout is running: run `npm run cluster -- down` first', 1);
  } else processes = wanted;

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BUS: process.env.BUS ?? 'kafka',
    STORE: process.env.STORE ?? 'clickhouse',
    QUEUE: process.env.QUEUE ?? 'bullmq',
    HTTP_HOST: HOST,
  };
  const starting: string[] = [];
  for (const role of START_ORDER) {
    for (const [i, p] of processes.entries()) {
      if (p.role !== role || running(p)) continue;
      if (!(await portFree(p.port, HOST)))
        fail(
          `port ${HOST}:${p.port} (HTTP_PORT of ${p.name}) is in use by another process: stop it or set CLUSTER_BASE_PORT`,
          1,
        );
      const paper =
        p.role === 'aggregate'
          ? {
              AGGREGATE_PAPER_EXECUTOR:
                p.name === 'aggregate-1' ? (process.env.AGGREGATE_PAPER_EXECUTOR ?? 'true') : 'false',
            }
          : {};
      const chain = p.role === 'api' && p.name !== 'api-1' ? await sharedDevChain(processes, env) : {};
      processes[i] = start(p, ROOT, { ...env, ...paper, ...chain });
      starting.push(p.name);
    }
  }
  writeState(DIR, processes);
  if (!starting.length) console.log('cluster: everything is running already');
  else
    console.log(
      `cluster: starting ${starting.join(', ')} (BUS=${env.BUS}, STORE=${env.STORE}, QUEUE=${env.QUEUE}${env.BUS_NAMESPACE ? `, BUS_NAMESPACE=${env.BUS_NAMESPACE}` : ''})`,
    );

  // Each new process answers /health (200 or 503: it listens), or exits, or times out.
  const t0 = Date.now();
  const answered = new Map<string, { h: NonNullable<Awaited<ReturnType<typeof health>>>; ms: number }>();
  const failed: ClusterProcess[] = [];
  for (;;) {
    for (const p of processes) {
      if (!starting.includes(p.name) || answered.has(p.name) || failed.includes(p)) continue;
      if (!running(p)) failed.push(p);
      else {
        const h = await health(p, HOST, 1000);
        if (h) answered.set(p.name, { h, ms: Date.now() - t0 });
      }
    }
    if (answered.size + failed.length === starting.length) break;
    if (Date.now() - t0 > START_TIMEOUT_MS) {
      for (const p of processes)
        if (starting.includes(p.name) && !answered.has(p.name) && !failed.includes(p)) failed.push(p);
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  table(processes, (p) => {
    if (failed.includes(p)) return running(p) ? 'NO ANSWER' : 'EXITED';
    const a = answered.get(p.name);
    return a ? `up in ${(a.ms / 1000).toFixed(1)} s, health ${a.h.status}` : 'running';
  });
  for (const p of failed)
    console.error(
      `\n${p.name} ${running(p) ? `did not answer /health within ${START_TIMEOUT_MS / 1000} s` : 'exited during start-up'}; last lines of ${shown(p.log, ROOT)}:\n${tail(p.log)}`,
    );
  const errors = processes.flatMap((p) => errorLines(p).map((l) => `${p.name}: ${l.slice(0, 300)}`));
  if (errors.length) console.warn(`\n${errors.length} error line(s) in the logs:\n${errors.slice(0, 10).join('\n')}`);
  if (failed.length)
    fail(`${failed.length} process(es) did not start; the others keep running (npm run cluster -- down stops them)`, 1);
  console.log(
    `\nAPI: http://${HOST}:${processes.find((p) => p.role === 'api')!.port}  (npm run cluster -- status | down)`,
  );
}

async function status(): Promise<void> {
  const processes = readState(DIR);
  if (!processes.length) fail(`no cluster under ${shown(DIR, ROOT)} (npm run cluster -- up)`, 1);
  let bad = 0;
  const healths = new Map(
    await Promise.all(processes.map(async (p) => [p.name, running(p) ? await health(p, HOST) : undefined] as const)),
  );
  table(processes, (p) => {
    if (!running(p)) return (bad++, 'NOT RUNNING');
    const h = healths.get(p.name);
    if (!h) return (bad++, 'running, /health does not answer');
    if (h.status === 'down') bad++;
    return `health ${h.status}${h.notOk.length ? ` (${h.notOk.join('; ').slice(0, 200)})` : ''}`;
  });
  if (bad) process.exit(1);
}

async function down(): Promise<void> {
  const processes = readState(DIR);
  if (!processes.length) {
    console.log('cluster: nothing to stop');
    return;
  }
  for (const role of STOP_ORDER) {
    const results = await Promise.all(
      processes.filter((p) => p.role === role).map(async (p) => [p, await stop(p, STOP_GRACE_MS)] as const),
    );
    for (const [p, r] of results)
      console.log(
        `${p.name.padEnd(12)} ${r.how === 'not running' ? 'was not running' : `${r.how} in ${(r.ms / 1000).toFixed(1)} s`}`,
      );
  }
  writeState(DIR, []);
  console.log(`cluster: down (logs kept under ${shown(`${DIR}/logs`, ROOT)})`);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { api: { type: 'string' }, aggregate: { type: 'string' }, worker: { type: 'string' } },
  });
  const [command, ...rest] = positionals;
  if (!command || rest.length) fail(command ? `unexpected ${rest.join(' ')}` : 'give a command');
  const basePort = Number(process.env.CLUSTER_BASE_PORT ?? 4020);
  if (!Number.isInteger(basePort) || basePort < 1 || basePort > 65000)
    fail(`CLUSTER_BASE_PORT must be a port, got ${process.env.CLUSTER_BASE_PORT}`);
  if (command === 'up')
    await up(
      {
        api: count(values.api, 'api', 8),
        ingest: 1,
        aggregate: count(values.aggregate, 'aggregate', 8),
        worker: count(values.worker, 'worker', 8),
      },
      basePort,
    );
  else if (command === 'status') await status();
  else if (command === 'down') await down();
  else fail(`unknown command ${command}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => fail(`failed: ${err instanceof Error ? err.message : String(err)}`, 1),
);
