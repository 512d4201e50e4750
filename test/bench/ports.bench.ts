/**
 * `npm run bench:ports`: throughput of each port's adapters, each next to the
 * raw client doing the same work in the same run (kafkajs produce+consume,
 * a bare @clickhouse/client insert, a bare BullMQ add+process). Needs the
 * engines (`npm run engines:up`). Sizes: BENCH_BUS_MESSAGES, BENCH_STORE_ROWS,
 * BENCH_QUEUE_JOBS.
 */
import { testConfig } from '../helpers/config.js';
import { printTable, type BenchRow } from './report.js';
import { benchBus } from './ports/bus.js';
import { benchStore } from './ports/store.js';
import { benchQueue } from './ports/queue.js';

const config = testConfig();
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const rows: BenchRow[] = [];
const t0 = Date.now();
rows.push(...(await benchBus(config, n('BENCH_BUS_MESSAGES', 200_000))));
rows.push(...(await benchStore(config, n('BENCH_STORE_ROWS', 500_000))));
rows.push(...(await benchQueue(config, n('BENCH_QUEUE_JOBS', 10_000))));
printTable(
  `Port adapters vs raw clients (${new Date().toISOString()}, ${Math.round((Date.now() - t0) / 1000)} s)`,
  rows,
);

const over = rows.filter((r) => r.baseline && r.throughput / r.baseline < 1 / 1.2);
if (over.length)
  console.log(`\nabove the 20% overhead target: ${over.map((r) => `${r.port}/${r.adapter}`).join(', ')}`);
process.exit(0);
