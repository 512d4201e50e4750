/**
 * `npm run export` (scripts/export.ts) as a user runs it: a child process paying the real api role (DuckDB, the
 * dev chain) with a payer key from the environment, splitting a 30-slice range into two range queries (24 + 6
 * slices), and writing Parquet that DuckDB reads back: one row per slice, each equal to the route's range answer
 * for that slice, and the payer charged exactly the two calls' prices.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Store } from '../../core/store/store.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { testLogger } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';

const logger = testLogger();
const Q = 900_000;
const START = Date.UTC(2025, 4, 6, 0, 0);
const SLICES = 30;
const iso = (ms: number) => new Date(ms).toISOString();

let dataDir: string;
let api: PaidApi;
let store: Store;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'export-script-'));
  api = await startPaidApi(dataDir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', MARKET_SOURCE: 'simulated' }, logger);
  store = api.proc.ctx.store!;
  // A sample a minute through the 30 slices, and one long after (they are final).
  const times = [...Array.from({ length: SLICES * 15 }, (_, i) => START + i * 60_000 + 500), START + 86_400_000];
  await insertSpreadSamples(
    store,
    times.map((t, i) => spreadSample(i, t)),
  );
});

afterAll(async () => {
  await api?.proc.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function runExport(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/export.ts', ...args], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      PAY_SERVER_URL: api.url,
      PAYER_KEY: api.api.payments.settlement.devChain!.payerKey,
      PAY_ASSET: api.api.payments.settlement.asset,
      PAY_NETWORK: 'eip155:8453',
      DATA_DIR: dataDir, // no dev chain info file there: the payer comes from PAYER_KEY
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stderr })));
}

const balance = () => api.api.payments.settlement.devChain!.balanceOf(api.payer.address);

describe('npm run export', () => {
  it('downloads a range in range-query calls, pays for them, and writes Parquet DuckDB reads back', async () => {
    const out = join(dataDir, 'candles.parquet');
    const before = await balance();
    const run = await runExport([
      '--route',
      'spread-candles',
      '--pair',
      'ETH/USD',
      '--from',
      iso(START),
      '--to',
      iso(START + SLICES * Q),
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`wrote ${SLICES} slice(s)`);
    expect((await stat(out)).size).toBeGreaterThan(0);
    // 24 slices capped at 0.2 USDC, then 6 x 0.015.
    expect(before - (await balance())).toBe(200_000n + 6n * 15_000n);

    const instance = await DuckDBInstance.create(':memory:');
    const duck = await instance.connect();
    let rows: Record<string, unknown>[];
    try {
      const reader = await duck.runAndReadAll(
        `SELECT CAST(slice_start AS VARCHAR) AS slice_start, close_raw_spread_bps, coverage_pct, complete, pair FROM read_parquet('${out}') ORDER BY slice_start`,
      );
      rows = reader.getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
    expect(rows).toHaveLength(SLICES);
    // The same numbers the route answers over HTTP for the last six slices.
    const { fetch: pay } = payingFetch(api.payer, {
      network: 'eip155:8453',
      asset: api.api.payments.settlement.asset,
    });
    const res = await pay(
      `${api.url}/api/v1/crypto/spread-candles?pair=ETH/USD&from=${iso(START + 24 * Q)}&to=${iso(START + SLICES * Q)}`,
    );
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { slices: Record<string, unknown>[] };
    expect(
      rows.slice(24).map((r) => ({
        start: Date.parse(`${String(r.slice_start).replace(' ', 'T')}Z`),
        close: Number(r.close_raw_spread_bps), // DuckDB reads whole numbers as BIGINT (JSON text for 64-bit)
        pair: r.pair,
      })),
    ).toEqual(
      answer.slices.map((s) => ({
        start: Date.parse(String(s.slice_start)),
        close: s.close_raw_spread_bps,
        pair: s.pair,
      })),
    );
    expect(rows.every((r) => r.complete === true && Number(r.coverage_pct) === 25)).toBe(true);
  });

  it('a range without data writes nothing and charges nothing', async () => {
    const out = join(dataDir, 'nothing.parquet');
    const before = await balance();
    const run = await runExport([
      '--route',
      'spread-candles',
      '--pair',
      'ETH/USD',
      '--from',
      iso(START - 10 * Q),
      '--to',
      iso(START),
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('nothing written');
    expect(await balance()).toBe(before);
    await expect(stat(out)).rejects.toThrow();
  });
});
