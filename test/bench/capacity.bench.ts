/**
 * `npm run bench:capacity`: the per-role figures of the capacity model
 * (docs/scaling.md) that the other benches do not print, on the real engines:
 *
 *  - worker: jobs/s of one worker process per SKU, and worker CPU per job ->
 *    jobs/s per core (test/bench/capacity/worker-capacity.ts);
 *  - settlement: settlements/s of one settler key on the dev chain, 1 and
 *    CAPACITY_SETTLE_IN_FLIGHT in flight (test/bench/capacity/settlement-capacity.ts).
 *
 * The aggregate's quotes/s per process come from `bench:pipeline`
 * (BENCH_AGGREGATE_PROCESSES=1 and 2) and the API's paid requests/s per
 * process from `bench:api`; docs/scaling.md gives the commands.
 *
 * Knobs: CAPACITY_PARTS (worker,settlement), CAPACITY_SECONDS (5, per SKU),
 * CAPACITY_SKUS (ids), CAPACITY_CALLERS (JOB_CONCURRENCY), CAPACITY_SETTLEMENTS
 * (60 per run), CAPACITY_SETTLE_IN_FLIGHT (8).
 */
import { cpus, loadavg } from 'node:os';
import { measureSettlement } from './capacity/settlement-capacity.js';
import { measureWorker } from './capacity/worker-capacity.js';
import { envNum } from './bench-app.js';

const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const parts = (process.env.CAPACITY_PARTS ?? 'worker,settlement').split(',');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
log(`capacity bench, ${cpus().length} cores, load average ${load()}`);

if (parts.includes('worker')) {
  const seconds = envNum('CAPACITY_SECONDS', 5);
  const skus = process.env.CAPACITY_SKUS ? process.env.CAPACITY_SKUS.split(',') : undefined;
  const callers = process.env.CAPACITY_CALLERS ? envNum('CAPACITY_CALLERS', 4) : undefined;
  const { rows, concurrency } = await measureWorker({
    seconds,
    ...(skus ? { skus } : {}),
    ...(callers ? { callers } : {}),
    log,
  });
  console.log(
    `\nWorker capacity: one worker process (ROLE=worker, BullMQ on Redis), ${concurrency} jobs in flight, ${seconds} s per SKU, load average ${load()}`,
  );
  console.log(
    '| SKU | jobs/s per worker process | worker CPU ms per job | jobs/s per core (1000 / CPU ms) | Redis CPU ms per job | p50 ms |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| \`${r.sku}\` | ${f1(r.jobsPerS)} | ${f1(r.workerCpuMsPerJob)} | ${f1(1000 / r.workerCpuMsPerJob)} | ${f1(r.redisCpuMsPerJob)} | ${f1(r.p50Ms)}${r.errors ? ` (${r.errors} errors)` : ''} |`,
    );
  }
}

if (parts.includes('settlement')) {
  const count = envNum('CAPACITY_SETTLEMENTS', 60);
  const inFlight = envNum('CAPACITY_SETTLE_IN_FLIGHT', 8);
  const rows = await measureSettlement({ count, inFlight: [1, inFlight], log });
  console.log(
    `\nSettlement capacity: one settler key, dev chain (hardhat, automine), ${count} settlements per run, load average ${load()}`,
  );
  console.log('| in flight | settlements/s | p50 ms | gateway CPU ms each | chain CPU ms each | failed |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.inFlight} | ${f1(r.perS)} | ${f1(r.p50Ms)} | ${f1(r.appCpuMsEach)} | ${f1(r.chainCpuMsEach)} | ${r.failures}${r.failure ? ` (${r.failure})` : ''} |`,
    );
}
process.exit(0);
