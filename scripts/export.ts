/**
 * Downloads a range of a windowed telemetry route, paying with x402, into a Parquet file:
 *
 *   npm run export -- --route spread-candles --pair ETH/USD --from 2026-03-02T00:00:00Z --to 2026-03-03T00:00:00Z \
 *     --out eth-candles.parquet [--interval 1h] [--venue coinbase]
 *
 * Routes: spread-candles, dislocations, execution-latency, shadow-capacity (`--pair` where the route takes one).
 * The range is widened to whole slices (15 minutes; spread-candles: the `--interval` bucket) and cut into range
 * queries of at most MAX_RANGE_SLICES slices (api/telemetry/range-query.ts), each one paid call: the per-slice
 * price x slices answered, at most 0.2 USDC. A part without data answers 404 before any challenge and costs
 * nothing. Each slice answer is one row of the Parquet file (nested fields stay nested: a dislocations slice's
 * `items` is a list), written by DuckDB (`COPY ... TO ... (FORMAT PARQUET)`) from the answers as NDJSON.
 *
 * Server and payer as `npm run pay` (scripts/pay-target.ts): PAY_SERVER_URL, else HTTP_PORT, else the dev chain's
 * info file; PAYER_KEY from the environment, else the dev chain's demo payer. A progress bar goes to stderr.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { DuckDBInstance } from '@duckdb/node-api';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { CANDLE_INTERVALS, type CandleInterval } from '../core/store/tables/spread-samples.js';
import { BASE_SLICE_MS } from '../core/store/tables/query-helpers.js';
import { MAX_RANGE_SLICES } from '../api/telemetry/range-query.js';
import { payer, payTarget } from './pay-target.js';

const ROUTES = ['spread-candles', 'dislocations', 'execution-latency', 'shadow-capacity'] as const;
type Route = (typeof ROUTES)[number];
const USAGE =
  'usage: npm run export -- --route <spread-candles|dislocations|execution-latency|shadow-capacity> [--pair ETH/USD] --from <ISO> --to <ISO> --out <file.parquet> [--interval 15m|1h|4h|1d] [--venue <venue>]';

class UsageError extends Error {}

interface ExportArgs {
  route: Route;
  params: Record<string, string>;
  fromMs: number;
  toMs: number;
  sliceMs: number;
  out: string;
}

function readArgs(argv: string[]): ExportArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      route: { type: 'string' },
      pair: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      out: { type: 'string' },
      interval: { type: 'string' },
      venue: { type: 'string' },
    },
  });
  const route = values.route as Route | undefined;
  if (!route || !ROUTES.includes(route)) throw new UsageError(`--route must be one of ${ROUTES.join(', ')}`);
  if (!values.out) throw new UsageError('give --out <file.parquet>');
  const fromMs = Date.parse(values.from ?? '');
  const toMs = Date.parse(values.to ?? '');
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) throw new UsageError('--from and --to must be ISO 8601');
  if (toMs <= fromMs) throw new UsageError('--to must be after --from');
  if (values.interval !== undefined && route !== 'spread-candles')
    throw new UsageError('--interval is a spread-candles parameter');
  const interval = values.interval?.toLowerCase() as CandleInterval | undefined;
  if (interval !== undefined && !(interval in CANDLE_INTERVALS))
    throw new UsageError(`--interval must be one of ${Object.keys(CANDLE_INTERVALS).join(', ')}`);
  const sliceMs = interval ? CANDLE_INTERVALS[interval] : BASE_SLICE_MS;
  const params: Record<string, string> = {};
  if (values.pair !== undefined) params.pair = values.pair;
  if (interval !== undefined) params.interval = interval;
  if (values.venue !== undefined) params.venue = values.venue;
  return {
    route,
    params,
    // Whole slices: the range queries take slice boundaries only.
    fromMs: Math.floor(fromMs / sliceMs) * sliceMs,
    toMs: Math.ceil(toMs / sliceMs) * sliceMs,
    sliceMs,
    out: resolve(values.out),
  };
}

/** The range cut into range queries of at most MAX_RANGE_SLICES slices. */
function chunksOf(fromMs: number, toMs: number, sliceMs: number): { fromMs: number; toMs: number }[] {
  const out: { fromMs: number; toMs: number }[] = [];
  for (let t = fromMs; t < toMs; t += MAX_RANGE_SLICES * sliceMs)
    out.push({ fromMs: t, toMs: Math.min(toMs, t + MAX_RANGE_SLICES * sliceMs) });
  return out;
}

const sqlText = (text: string) => `'${text.replace(/'/g, "''")}'`;

async function main(): Promise<number> {
  let args: ExportArgs;
  try {
    args = readArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError)) throw err;
    console.error(`${err.message}\n${USAGE}`);
    return 2;
  }
  const target = await payTarget();
  const who = payer(target);
  if ('error' in who) {
    console.error(who.error);
    return 2;
  }
  const payFetch = wrapFetchWithPayment(fetch, who.client);
  const chunks = chunksOf(args.fromMs, args.toMs, args.sliceMs);
  console.error(
    `export ${args.route} ${new Date(args.fromMs).toISOString()} - ${new Date(args.toMs).toISOString()}: ${chunks.length} call(s) to ${target.server} (payer ${who.address}${who.demo ? ', dev chain demo payer' : ''})`,
  );

  const dir = await mkdtemp(join(tmpdir(), 'export-'));
  const ndjson = join(dir, 'slices.ndjson');
  const lines = createWriteStream(ndjson);
  const bar = new cliProgress.SingleBar(
    { format: 'export [{bar}] {value}/{total} calls | {rows} slices | {missing} without data | {settled} paid' },
    cliProgress.Presets.shades_classic,
  );
  let rows = 0;
  let missing = 0;
  let settled = 0;
  bar.start(chunks.length, 0, { rows, missing, settled });
  try {
    for (const [i, chunk] of chunks.entries()) {
      const query = new URLSearchParams({
        ...args.params,
        from: new Date(chunk.fromMs).toISOString(),
        to: new Date(chunk.toMs).toISOString(),
      });
      const url = `${target.server}/api/v1/crypto/${args.route}?${query}`;
      const res = await payFetch(url);
      const body = (await res.json()) as {
        code?: string;
        detail?: string;
        slices?: unknown[];
        missing?: unknown[];
      };
      if (res.status === 404 && (body.code === 'no_data_in_window' || body.code === 'outside_coverage')) {
        missing += Math.round((chunk.toMs - chunk.fromMs) / args.sliceMs); // refused before any challenge: not charged
      } else if (res.status !== 200 || !Array.isArray(body.slices)) {
        throw new Error(`${url}: ${res.status} ${body.code ?? ''} ${body.detail ?? JSON.stringify(body)}`);
      } else {
        for (const slice of body.slices) lines.write(`${JSON.stringify(slice)}\n`);
        rows += body.slices.length;
        missing += body.missing?.length ?? 0;
        const response = res.headers.get('payment-response');
        if (response && decodePaymentResponseHeader(response).success) settled++;
      }
      bar.update(i + 1, { rows, missing, settled });
    }
  } finally {
    bar.stop();
    await new Promise<void>((done, fail) => lines.end((err?: Error | null) => (err ? fail(err) : done())));
  }
  try {
    if (!rows) {
      console.error('no slice of the range holds data: nothing written, nothing charged');
      return 1;
    }
    const instance = await DuckDBInstance.create(':memory:');
    const duck = await instance.connect();
    try {
      await duck.run(
        `COPY (SELECT * FROM read_json_auto(${sqlText(ndjson)}, format = 'newline_delimited')) TO ${sqlText(args.out)} (FORMAT PARQUET)`,
      );
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
    console.error(`wrote ${rows} slice(s) to ${args.out} (${missing} without data, ${settled} paid call(s))`);
    return 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`export failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
