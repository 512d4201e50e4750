/**
 * Bulk history (api/telemetry/history/), through the real api role (DuckDB store, the dev chain, x402 paid by the
 * real client over HTTP on loopback):
 *  - each dataset's CSV holds one row per candle / dislocation item / slice answer, and every row equals the
 *    per-slice answer of its window field by field (rounding included), flattened by the documented rule;
 *  - the Parquet file, read back by DuckDB's node API (an independent reader of the file: the Python venv is minutes
 *    to build on this machine), holds the same columns, types and values as the CSV;
 *  - the manifest (X-Manifest) gives the row count, the columns, the price paid, and the sha-256 of the body (also
 *    in Content-Digest); the challenge asks the dataset-day price and the payer is charged exactly that;
 *  - a day outside coverage, not yet complete, or without data is 404, and bad input 400 with its field: before any
 *    challenge, never charged;
 *  - discovery states the bulk price per dataset-day; the MCP door (one JSON per call) refuses the file unpaid.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, paymentRequiredOf } from '../../scripts/mcp-payment-client.js';
import type { Store } from '../../core/store/store.js';
import { insertDislocations } from '../../core/store/tables/dislocations.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { testLogger } from '../helpers/config.js';
import { openDislocation } from '../helpers/dislocation-record.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { payingFetch } from '../helpers/x402-client.js';
import { cexLatencySample } from '../helpers/latency-sample.js';

const logger = testLogger();
const Q = 900_000;
const DAY = 86_400_000;
/** The day sold: four slices observed from 09:00 (the last one for 5 minutes), two dislocations. */
const D0 = Date.UTC(2025, 2, 11);
const S0 = D0 + 9 * 3_600_000;
const ZERO = '0 USDC (pre-flight rejection, no charge)';
const iso = (ms: number) => new Date(ms).toISOString();
const day = (ms: number) => iso(ms).slice(0, 10);

let dataDir: string;
let api: PaidApi;
let store: Store;
let seq = 0;

const latency = (tsMs: number, i: number) => cexLatencySample(`bulk-lat-${i}`, tsMs, 80 + (i % 7) * 3.3);

async function observe(times: number[]): Promise<void> {
  await insertSpreadSamples(
    store,
    times.map((t) => spreadSample(seq++, t)),
  );
  await insertLatencySamples(
    store,
    times.map((t, i) => latency(t, seq + i)),
  );
}

const every5s = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + 5000 * i + 700);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bulk-history-'));
  api = await startPaidApi(dataDir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', MARKET_SOURCE: 'simulated' }, logger);
  store = api.proc.ctx.store!;
  api.api.payments.core.useExampleInputs(() => undefined);
  // D0: 09:00-09:50 observed; D0 + 1: nothing (inside coverage); D0 + 2 08:00: data resumes (D0 + 1 complete).
  await observe([...every5s(S0, 3 * 180 + 60), D0 + 2 * DAY + 8 * 3_600_000]);
  await insertDislocations(store, [
    { ...openDislocation('bulk-a', S0 + 3 * 60_000, 12.34), id: 7001 },
    { ...openDislocation('bulk-b', S0 + 20 * 60_000, 8.5), id: 7002, buy_price: 2001.5 },
  ]);
});

afterAll(async () => {
  await api?.proc.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const balance = () => api.api.payments.settlement.devChain!.balanceOf(api.payer.address);
const client = () => payingFetch(api.payer, { network: 'eip155:8453', asset: api.api.payments.settlement.asset });

async function challengeAmount(path: string): Promise<string> {
  const res = await fetch(`${api.url}${path}`);
  expect(res.status, path).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[0]!.amount;
}

interface Manifest {
  rows: number;
  sha256: string;
  bytes: number;
  columns: { name: string; type: string }[];
  price_atomic: string;
  dataset: string;
  date: string;
  methodology: string;
  slices: number;
  missing_slices: string[];
  file_name: string;
}

/** A paid file: its bytes, headers and manifest; the payer charged exactly `amount`, once. */
async function paidFile(path: string, amount: string): Promise<{ body: Buffer; res: Response; manifest: Manifest }> {
  expect(await challengeAmount(path)).toBe(amount);
  const before = await balance();
  const { fetch: pay, sent } = client();
  const res = await pay(`${api.url}${path}`);
  const body = Buffer.from(await res.arrayBuffer());
  expect(res.status, `${path}: ${body.toString().slice(0, 300)}`).toBe(200);
  expect(sent).toHaveLength(1);
  expect(before - (await balance())).toBe(BigInt(amount));
  const manifest = JSON.parse(Buffer.from(res.headers.get('x-manifest')!, 'base64').toString()) as Manifest;
  const sha = createHash('sha256').update(body).digest();
  expect(manifest.sha256).toBe(sha.toString('hex'));
  expect(res.headers.get('content-digest')).toBe(`sha-256=:${sha.toString('base64')}:`);
  expect(manifest.bytes).toBe(body.length);
  expect(manifest.price_atomic).toBe(amount);
  expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${manifest.file_name}"`);
  return { body, res, manifest };
}

/** The per-slice answers of the day's observed hour (a range answer's slices are the single answers). */
async function sliceAnswers(route: string, query: string): Promise<Record<string, unknown>[]> {
  const { fetch: pay } = client();
  const res = await pay(`${api.url}/api/v1/crypto/${route}?${query}&from=${iso(S0)}&to=${iso(S0 + 4 * Q)}`);
  const body = (await res.json()) as { slices: Record<string, unknown>[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.slices;
}

/** The documented flattening, written again here: nested objects joined with `_`, arrays as JSON text. */
function flat(value: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}_${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flat(v as Record<string, unknown>, name, out);
    else out[name] = Array.isArray(v) ? JSON.stringify(v) : v;
  }
  return out;
}

/** RFC 4180 reader (quoted fields, doubled quotes, CRLF), for the test's own reading of the file. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field, 'the file ends with CRLF').toBe('');
  return rows;
}

const cellOf = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** The CSV's rows equal `expected` (flattened served objects) field by field, every served field a column. */
function expectRows(csv: string[][], expected: Record<string, unknown>[]) {
  const [header, ...rows] = csv;
  expect(rows).toHaveLength(expected.length);
  expected.forEach((item, r) => {
    const want = flat(item);
    for (const name of Object.keys(want)) expect(header, name).toContain(name);
    header!.forEach((name, c) => expect(rows[r]![c], `row ${r} ${name}`).toBe(cellOf(want[name])));
  });
}

async function readParquet(bytes: Buffer): Promise<{ columns: { name: string; type: string }[]; rows: string[][] }> {
  const file = join(dataDir, `read-${seq++}.parquet`);
  await writeFile(file, bytes);
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    const described = (await db.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).getRowObjectsJS();
    const reader = await db.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
    const names = reader.columnNames();
    return {
      columns: described.map((d) => ({ name: String(d.column_name), type: String(d.column_type) })),
      rows: reader.getRowObjectsJS().map((o) => names.map((n) => cellOf(o[n]))),
    };
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

const DATASETS = [
  { dataset: 'candles', query: 'pair=ETH/USD', route: 'spread-candles', amount: '50000' },
  { dataset: 'dislocations', query: 'pair=ETH/USD', route: 'dislocations', amount: '100000' },
  { dataset: 'execution-latency', query: 'venue=coinbase', route: 'execution-latency', amount: '150000' },
  { dataset: 'shadow-capacity', query: 'pair=ETH/USD', route: 'shadow-capacity', amount: '200000' },
];

describe('bulk history', () => {
  for (const d of DATASETS) {
    it(`${d.dataset}: the CSV rows are the per-slice answers, the Parquet the same file`, async () => {
      const path = `/api/v1/crypto/history?dataset=${d.dataset}&date=${day(D0)}&${d.query}`;
      const csvFile = await paidFile(path, d.amount);
      expect(csvFile.res.headers.get('content-type')).toMatch(/^text\/csv/);
      const csv = parseCsv(csvFile.body.toString('utf8'));
      const answers = await sliceAnswers(d.route, d.query);
      expect(answers).toHaveLength(4);
      const expected =
        d.dataset === 'dislocations' ? answers.flatMap((a) => a.dislocations as Record<string, unknown>[]) : answers;
      expect(expected.length).toBeGreaterThan(d.dataset === 'dislocations' ? 1 : 3);
      expectRows(csv, expected);
      const m = csvFile.manifest;
      expect(m).toMatchObject({
        dataset: d.dataset,
        date: day(D0),
        rows: expected.length,
        slices: 4,
        methodology: '2',
      });
      expect(m.missing_slices).toHaveLength(92);
      expect(m.columns.map((c) => c.name)).toEqual(csv[0]);

      const pq = await paidFile(`${path}&format=parquet`, d.amount);
      expect(pq.body.subarray(0, 4).toString()).toBe('PAR1');
      const read = await readParquet(pq.body);
      expect(read.columns).toEqual(m.columns);
      expect(pq.manifest.columns).toEqual(m.columns);
      expect(pq.manifest.rows).toBe(m.rows);
      expect(read.rows).toEqual(csv.slice(1));
    });
  }

  it('candles at 1h: one row per hourly candle, at the 1h price', async () => {
    const { body, manifest } = await paidFile(
      `/api/v1/crypto/history?dataset=candles&date=${day(D0)}&pair=ETH-USD&interval=1h`,
      '20000',
    );
    const [, ...rows] = parseCsv(body.toString('utf8'));
    expect(rows).toHaveLength(1);
    expect(manifest.rows).toBe(1);
  });

  it('refuses before any challenge, never charged', async () => {
    const cases: { query: string; status: number; code: string; field: string }[] = [
      {
        query: `dataset=candles&date=${day(D0 - DAY)}&pair=ETH/USD`,
        status: 404,
        code: 'outside_coverage',
        field: 'date',
      },
      {
        query: `dataset=candles&date=${day(D0 + DAY)}&pair=ETH/USD`,
        status: 404,
        code: 'no_data_in_window',
        field: 'date',
      },
      {
        query: `dataset=candles&date=${day(D0 + 2 * DAY)}&pair=ETH/USD`,
        status: 404,
        code: 'day_incomplete',
        field: 'date',
      },
      { query: `dataset=trades&date=${day(D0)}`, status: 400, code: 'invalid_parameter', field: 'dataset' },
      { query: `dataset=candles&date=2025-02-30&pair=ETH/USD`, status: 400, code: 'invalid_parameter', field: 'date' },
      { query: `dataset=candles&date=${day(D0)}`, status: 400, code: 'missing_parameter', field: 'pair' },
      {
        query: `dataset=dislocations&date=${day(D0)}&pair=ETH/USD&interval=1h`,
        status: 400,
        code: 'invalid_parameter',
        field: 'interval',
      },
      {
        query: `dataset=candles&date=${day(D0)}&pair=ETH/USD&format=xlsx`,
        status: 400,
        code: 'invalid_parameter',
        field: 'format',
      },
      {
        query: `dataset=execution-latency&date=${day(D0)}&venue=kraken`,
        status: 400,
        code: 'invalid_parameter',
        field: 'venue',
      },
      {
        // the input is checked before the day: a bad venue on a day outside coverage is still its 400
        query: `dataset=execution-latency&date=${day(D0 - DAY)}&venue=kraken`,
        status: 400,
        code: 'invalid_parameter',
        field: 'venue',
      },
    ];
    for (const c of cases) {
      const path = `/api/v1/crypto/history?${c.query}`;
      const before = await balance();
      const plain = await fetch(`${api.url}${path}`);
      expect(plain.status, path).toBe(c.status);
      expect(plain.headers.get('payment-required'), path).toBeNull();
      const body = (await plain.json()) as Record<string, unknown>;
      expect(body, path).toMatchObject({ code: c.code, field: c.field });
      if (c.status === 404) expect(body.charged, path).toBe(ZERO);
      const { fetch: pay, sent } = client();
      expect((await pay(`${api.url}${path}`)).status, path).toBe(c.status);
      expect(sent, path).toHaveLength(0);
      expect(await balance(), path).toBe(before);
    }
  });

  it('discovery states the dataset-day prices; the MCP door refuses the file before payment', async () => {
    const discovery = (await (await fetch(`${api.url}/api/v1/discovery`)).json()) as {
      endpoints: { id: string; description: string; pricing: { bulk?: { unit: string; text: string } } }[];
    };
    const history = discovery.endpoints.find((e) => e.id === 'history')!;
    expect(history.description).toContain('bulk discount');
    expect(history.pricing.bulk?.unit).toBe('dataset-day');
    expect(history.pricing.bulk?.text).toContain('dislocations 0.1 USDC');

    const mcp = new Client({ name: 'bulk-history-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`)));
    try {
      const before = await balance();
      const result = await callTool(mcp, 'history', { dataset: 'candles', date: day(D0), pair: 'ETH/USD' });
      expect(result.isError).toBe(true);
      expect(paymentRequiredOf(result)).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ status: 400, code: 'stream_http_only', charged: ZERO });
      expect(await balance()).toBe(before);
    } finally {
      await mcp.close();
    }
  });
});
