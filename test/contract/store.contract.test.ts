/**
 * Store port contract: the same assertions against both adapters.
 * ClickHouse: the server of `npm run engines:up` (CLICKHOUSE_URL), a fresh
 * database per run, dropped afterwards. DuckDB: a file in a temp folder.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DependencyError, isRetryable } from '../../core/errors.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { DEFAULT_MIGRATIONS_ROOT, splitStatements } from '../../core/store/migrations.js';
import { dialect, final, ident, raw, sql } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(here, 'fixtures', 'sql');
const config = testConfig();
const T = ident('contract_events');

interface Adapter {
  name: 'duckdb' | 'clickhouse';
  open(): Promise<{ store: Store; cleanup(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'duckdb',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'store-contract-'));
      const store = await createDuckDbStore({ path: join(dir, 'nested', 'contract.duckdb'), logger: testLogger() });
      return {
        store,
        async cleanup() {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'clickhouse',
    async open() {
      const { store, close } = await openClickHouseTestStore(config, 'contract');
      return { store, cleanup: close };
    },
  },
];

const PAIRS = ['BTC-USD', 'ETH-USD', 'SOL-USD'];
const BASE_MS = Date.UTC(2024, 0, 15, 12, 0, 0);

/** Prices are multiples of 1/8: sums are exact in doubles, so equality is exact. */
function event(i: number, note = `n${i}`): Row {
  const ms = BASE_MS + i * 1000 + (i % 1000);
  return { event_id: `e-${i}`, pair: PAIRS[i % 3]!, ts: new Date(ms), ts_ms: ms, price: 100 + (i % 1000) / 8, note };
}
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
const expectedTotals = (ids: number[]) => ({
  n: ids.length,
  total: ids.reduce((s, i) => s + (100 + (i % 1000) / 8), 0),
  min_ms: Math.min(...ids.map((i) => BASE_MS + i * 1000 + (i % 1000))),
  max_ms: Math.max(...ids.map((i) => BASE_MS + i * 1000 + (i % 1000))),
});

async function totals(store: Store) {
  const [row] = await store.query(
    sql`SELECT count() AS n, sum(price) AS total, min(ts_ms) AS min_ms, max(ts_ms) AS max_ms FROM ${T} ${final} WHERE event_id LIKE ${'e-%'}`,
  );
  // 64-bit integers: strings from ClickHouse 18.16, numbers from DuckDB (documented): Number() reads both.
  return { n: Number(row!.n), total: row!.total, min_ms: Number(row!.min_ms), max_ms: Number(row!.max_ms) };
}

/** Rows from the shape query, per adapter, compared at the end. */
const shapes = new Map<string, Row[]>();

describe.each(adapters)('store contract: $name', (adapter) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let root: string;

  beforeAll(async () => {
    ({ store, cleanup } = await adapter.open());
    root = await mkdtemp(join(tmpdir(), 'store-migrations-'));
    await cp(FIXTURES, root, { recursive: true });
  });

  afterAll(async () => {
    await cleanup?.();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('pings', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
    expect(store.adapter).toBe(adapter.name);
  });

  it('applies migrations in order, then none on a second run', async () => {
    const first = await store.migrate(root);
    expect(first).toEqual({ applied: ['001_contract_events.sql', '002_contract_marks.sql'], skipped: [] });
    // 002 read the table 001 created (it would have failed in the other order).
    const marks = await store.query(sql`SELECT mark, events FROM ${ident('contract_marks')}`);
    expect(marks.map((m) => [m.mark, Number(m.events)])).toEqual([['after_001', 0]]);
    const recorded = await store.query(
      sql`SELECT version, name, checksum, applied_at FROM ${ident('schema_migrations')} ${final} ORDER BY version`,
    );
    expect(recorded.map((r) => [Number(r.version), r.name])).toEqual([
      [1, 'contract_events'],
      [2, 'contract_marks'],
    ]);
    for (const r of recorded) {
      expect(r.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(r.applied_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    }

    const second = await store.migrate(root);
    expect(second).toEqual({ applied: [], skipped: ['001_contract_events.sql', '002_contract_marks.sql'] });
    const again = await store.query(sql`SELECT count() AS n FROM ${ident('schema_migrations')} ${final}`);
    expect(Number(again[0]!.n)).toBe(2);
  });

  it('refuses an applied migration whose checksum changed, and applies nothing after it', async () => {
    const altered = await mkdtemp(join(tmpdir(), 'store-migrations-altered-'));
    try {
      await cp(root, altered, { recursive: true });
      const file = join(altered, adapter.name, '001_contract_events.sql');
      await writeFile(file, `${await readFile(file, 'utf8')}\n-- edited after it was applied\n`);
      await writeFile(
        join(altered, adapter.name, '003_never.sql'),
        adapter.name === 'clickhouse'
          ? 'CREATE TABLE contract_never (x String) ENGINE = MergeTree ORDER BY x;\n'
          : 'CREATE TABLE contract_never (x VARCHAR);\n',
      );
      await expect(store.migrate(altered)).rejects.toThrow(/001_contract_events\.sql.*checksum/s);
      const after = await store.query(sql`SELECT count() AS n FROM ${ident('schema_migrations')} ${final}`);
      expect(Number(after[0]!.n)).toBe(2);
      await expect(store.query(sql`SELECT count() AS n FROM ${ident('contract_never')}`)).rejects.toThrow();
    } finally {
      await rm(altered, { recursive: true, force: true });
    }
  });

  it('reports a failing migration by file name and does not record it', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'store-migrations-broken-'));
    try {
      await cp(root, broken, { recursive: true });
      await writeFile(join(broken, adapter.name, '003_broken.sql'), 'SELEC broken_statement;\n');
      const err = await store.migrate(broken).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/003_broken\.sql.*SELEC/s);
      expect(isRetryable(err)).toBe(false);
      const after = await store.query(sql`SELECT count() AS n FROM ${ident('schema_migrations')} ${final}`);
      expect(Number(after[0]!.n)).toBe(2);
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  });

  it('inserts a 10k-row batch: exact count, sum, min, max', async () => {
    const ids = range(0, 10_000);
    await store.insert(
      'contract_events',
      ids.map((i) => event(i)),
    );
    expect(await totals(store)).toEqual(expectedTotals(ids));
  });

  it('is idempotent by key: re-inserting the same events (some fields changed) counts them once', async () => {
    const before = await totals(store);
    // Same keys, note changed: a replay must not double count.
    await store.insert(
      'contract_events',
      range(0, 10_000).map((i) => event(i, `replayed ${i}`)),
    );
    expect(await totals(store)).toEqual(before);
    // Overlapping batch: half old keys, half new ones; and a batch holding one key twice.
    await store.insert(
      'contract_events',
      range(5_000, 12_000).map((i) => event(i, 'overlap')),
    );
    await store.insert('contract_events', [event(12_000), event(12_000, 'twice in one batch')]);
    expect(await totals(store)).toEqual(expectedTotals(range(0, 12_001)));
  });

  it('takes concurrent batches (serialized where the engine has one writer)', async () => {
    const ids = range(20_000, 23_000);
    await Promise.all(
      [0, 1, 2].map((k) =>
        store.insert(
          'contract_events',
          ids.slice(k * 1000, (k + 1) * 1000).map((i) => ({ ...event(i), event_id: `conc-${i}` })),
        ),
      ),
    );
    const [row] = await store.query(sql`SELECT count() AS n FROM ${T} ${final} WHERE event_id LIKE ${'conc-%'}`);
    expect(Number(row!.n)).toBe(3000);
  });

  it('round-trips a Date at second precision in UTC; ts_ms keeps the milliseconds', async () => {
    const at = new Date('2024-02-29T23:59:59.987Z');
    await store.insert('contract_events', [
      { event_id: 'date-1', pair: 'BTC-USD', ts: at, ts_ms: at.getTime(), price: 1, note: '' },
    ]);
    const rows = await store.query(sql`SELECT ts, ts_ms FROM ${T} ${final} WHERE event_id = ${'date-1'}`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.ts).toBe('2024-02-29 23:59:59');
    expect(Number(rows[0]!.ts_ms)).toBe(1709251199987);
    // Date literals render at second precision in both dialects, so comparisons agree.
    const byLiteral = await store.query(
      sql`SELECT event_id FROM ${T} ${final} WHERE ts = ${new Date('2024-02-29T23:59:59Z')} AND ts >= ${new Date('2024-02-29T23:59:59.500Z')}`,
    );
    expect(byLiteral.map((r) => r.event_id)).toEqual(['date-1']);
  });

  it('returns the same row shapes for the same query text', async () => {
    await store.insert('contract_events', [
      {
        event_id: 'shape-1',
        pair: 'ETH-USD',
        ts: new Date('2024-01-02T03:04:05Z'),
        ts_ms: 1704164645123,
        price: 2.5,
        note: 'a',
      },
      {
        event_id: 'shape-2',
        pair: 'ETH-USD',
        ts: new Date('2024-01-02T03:04:06Z'),
        ts_ms: 1704164646000,
        price: -0.125,
        note: 'b',
      },
    ]);
    const rows = await store.query(sql`
      SELECT event_id, pair, ts, price, note,
        ${dialect({ clickhouse: raw('toFloat64(ts_ms)'), duckdb: raw('CAST(ts_ms AS DOUBLE)') })} AS ts_ms_f,
        price * 2 AS doubled
      FROM ${T} ${final}
      WHERE pair = ${'ETH-USD'} AND event_id IN (${'shape-1'}, ${'shape-2'})
      ORDER BY event_id`);
    expect(rows).toEqual([
      {
        event_id: 'shape-1',
        pair: 'ETH-USD',
        ts: '2024-01-02 03:04:05',
        price: 2.5,
        note: 'a',
        ts_ms_f: 1704164645123,
        doubled: 5,
      },
      {
        event_id: 'shape-2',
        pair: 'ETH-USD',
        ts: '2024-01-02 03:04:06',
        price: -0.125,
        note: 'b',
        ts_ms_f: 1704164646000,
        doubled: -0.25,
      },
    ]);
    shapes.set(adapter.name, rows);
  });

  it('documents the one shape difference: 64-bit integers', async () => {
    const [row] = await store.query(
      sql`SELECT count() AS n, max(ts_ms) AS m FROM ${T} ${final} WHERE event_id = ${'shape-1'}`,
    );
    if (adapter.name === 'clickhouse') expect(row).toEqual({ n: '1', m: '1704164645123' });
    else expect(row).toEqual({ n: 1, m: 1704164645123 });
  });

  const hostile = [
    "it's",
    'back\\slash',
    "\\'",
    "'; DROP TABLE contract_events; --",
    "\\'; DROP TABLE contract_events; --",
    "''",
    '\\',
    'trailing backslash \\',
    '\\x41\\n\\t\\0 (escape sequences, not escapes)',
    'ünïcødé 🦆 中文 “quotes” ‘single’',
    'é',
    'naïve 🦆',
    'ascii then ü',
    'line1\nline2\r\nend\t',
    '`backtick` "double" $1 ? {x:String} %s',
  ];
  const values = adapter.name === 'clickhouse' ? [...hostile, 'nul\0byte', '\0'] : hostile;

  it('stores hostile strings byte-for-byte through insert and through SQL literals; the table survives', async () => {
    const before = await totals(store);
    await store.insert(
      'contract_events',
      values.map((note, k) => ({
        event_id: `inj-i-${k}`,
        pair: 'BTC-USD',
        ts: new Date(BASE_MS),
        ts_ms: BASE_MS,
        price: 0,
        note,
      })),
    );
    for (const [k, note] of values.entries()) {
      await store.command(
        sql`INSERT INTO ${T} (event_id, pair, ts, ts_ms, price, note) VALUES (${`inj-l-${k}`}, ${'BTC-USD'}, ${new Date(BASE_MS)}, ${BASE_MS}, ${0}, ${note})`,
      );
    }
    for (const [k, note] of values.entries()) {
      // Read back by key and by the literal itself (the WHERE literal must match the stored bytes).
      const rows = await store.query(
        sql`SELECT event_id, note FROM ${T} ${final} WHERE note = ${note} AND event_id IN (${`inj-i-${k}`}, ${`inj-l-${k}`}) ORDER BY event_id`,
      );
      expect(rows, JSON.stringify(note)).toEqual([
        { event_id: `inj-i-${k}`, note },
        { event_id: `inj-l-${k}`, note },
      ]);
      expect(Buffer.from(rows[0]!.note as string)).toEqual(Buffer.from(note));
    }
    const [count] = await store.query(sql`SELECT count() AS n FROM ${T} ${final} WHERE event_id LIKE ${'inj-%'}`);
    expect(Number(count!.n)).toBe(values.length * 2);
    expect(await totals(store)).toEqual(before); // the rows already there survive (no injected DROP or DELETE ran)
  });

  if (adapter.name === 'duckdb') {
    it('refuses a NUL byte (DuckDB VARCHAR cannot hold it) instead of truncating', async () => {
      await expect(
        store.insert('contract_events', [
          { event_id: 'nul', pair: 'BTC-USD', ts: new Date(), ts_ms: 1, price: 0, note: 'a\0b' },
        ]),
      ).rejects.toThrow(/NUL/);
      expect(() => sql`SELECT ${'a\0b'}`.render('duckdb')).toThrow(/NUL/);
    });
  }

  it('refuses bad identifiers, unknown columns and non-finite numbers', async () => {
    for (const bad of [
      'x; DROP',
      'contract_events; DROP TABLE contract_events',
      'a-b',
      '"contract_events"',
      "'contract_events'",
      '`contract_events`',
    ]) {
      await expect(store.insert(bad, [event(1)]), bad).rejects.toThrow(/invalid SQL identifier/);
    }
    await expect(store.insert('contract_events', [{ ...event(90_000), 'note; DROP': 'x' }])).rejects.toThrow(
      /invalid SQL identifier|no column/,
    );
    await expect(store.insert('contract_events', [{ ...event(90_001), extra: 'x' }])).rejects.toThrow();
    for (const bad of [NaN, Infinity, -Infinity]) {
      await expect(store.insert('contract_events', [{ ...event(90_002), price: bad }])).rejects.toThrow(/non-finite/);
      await expect(store.query(sql`SELECT ${bad} AS x`)).rejects.toThrow(/non-finite/);
    }
    const [row] = await store.query(
      sql`SELECT count() AS n FROM ${T} ${final} WHERE event_id IN (${'e-90000'}, ${'e-90001'}, ${'e-90002'})`,
    );
    expect(Number(row!.n)).toBe(0);
  });

  it('refuses a whole batch when one value is bad, and leaves nothing behind for the next batch', async () => {
    const rows: Row[] = range(0, 3000).map((i) => ({ ...event(i), event_id: `bad-batch-${i}` }));
    rows[2999] = { ...rows[2999]!, price: NaN };
    await expect(store.insert('contract_events', rows)).rejects.toThrow(/non-finite/);
    await store.insert('contract_events', [{ ...event(1), event_id: 'bad-batch-ok' }]);
    const [row] = await store.query(sql`SELECT count() AS n FROM ${T} ${final} WHERE event_id LIKE ${'bad-batch-%'}`);
    expect(Number(row!.n)).toBe(1);
  });

  it('builds an insert row by row (beginInsert): every row stored once, in any key order; sends once', async () => {
    const batch = await store.beginInsert('contract_events');
    const ids = range(30_000, 35_000);
    for (const i of ids) batch.add({ ...event(i), event_id: `rb-${i}` });
    // Keys in another order (ClickHouse: not the first row's columns, so this row travels as text).
    const at = new Date(BASE_MS);
    batch.add({ note: 'reordered', price: 0.5, ts_ms: BASE_MS, ts: at, pair: 'BTC-USD', event_id: 'rb-reordered' });
    batch.add({ ...event(30_000), event_id: 'rb-30000', note: 'same key twice' });
    expect(batch.size).toBe(ids.length + 2);
    await batch.send();
    const [row] = await store.query(
      sql`SELECT count() AS n, sum(price) AS p FROM ${T} ${final} WHERE event_id LIKE ${'rb-%'}`,
    );
    expect(Number(row!.n)).toBe(ids.length + 1);
    expect(Number(row!.p)).toBe(expectedTotals(ids).total + 0.5);
    const [odd] = await store.query(
      sql`SELECT pair, ts, ts_ms, price, note FROM ${T} ${final} WHERE event_id = ${'rb-reordered'}`,
    );
    expect(odd).toMatchObject({ pair: 'BTC-USD', ts: '2024-01-15 12:00:00', price: 0.5, note: 'reordered' });
    expect(Number(odd!.ts_ms)).toBe(BASE_MS);
    await expect(batch.send()).rejects.toThrow(/already sent/);
    expect(() => batch.add(event(1))).toThrow(/already sent/);
  });

  it('stores consecutive row-by-row batches of one table whole, smaller and larger than the one before', async () => {
    // ClickHouse sizes a batch's buffer from the previous batch of the table: both directions must hold.
    const sizes = [3_000, 40, 9_000];
    let from = 40_000;
    for (const n of sizes) {
      const batch = await store.beginInsert('contract_events');
      for (const i of range(from, from + n)) batch.add({ ...event(i), event_id: `rs-${i}` });
      await batch.send();
      from += n;
    }
    const ids = range(40_000, from);
    const [row] = await store.query(
      sql`SELECT count() AS n, sum(price) AS p FROM ${T} ${final} WHERE event_id LIKE ${'rs-%'}`,
    );
    expect(Number(row!.n)).toBe(ids.length);
    expect(Number(row!.p)).toBe(expectedTotals(ids).total);
  });

  it('refuses a row-by-row batch with a bad value (from add or send): nothing of it is stored', async () => {
    const batch = await store.beginInsert('contract_events');
    const failed = await (async () => {
      for (const i of range(0, 100)) batch.add({ ...event(i), event_id: `rb-bad-${i}` });
      batch.add({ ...event(100), event_id: 'rb-bad-100', price: Number.NaN });
      await batch.send();
    })().catch((e: unknown) => e);
    expect((failed as Error).message).toMatch(/non-finite/);
    const [row] = await store.query(sql`SELECT count() AS n FROM ${T} ${final} WHERE event_id LIKE ${'rb-bad-%'}`);
    expect(Number(row!.n)).toBe(0);
    await expect(store.beginInsert('x; DROP')).rejects.toThrow(/invalid SQL identifier/);
  });

  it('reports a rejected statement as a plain (non-retryable) error with the engine message', async () => {
    const err = await store.query(sql`SELECT * FROM ${ident('no_such_table')}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DependencyError);
    expect(isRetryable(err)).toBe(false);
    expect((err as Error).message).toMatch(/no_such_table/);
  });
});

describe('store contract: across adapters', () => {
  it('both adapters returned identical rows for the shape query', () => {
    expect(shapes.get('clickhouse')).toBeDefined();
    expect(shapes.get('duckdb')).toEqual(shapes.get('clickhouse'));
  });
});

describe('store contract: ClickHouse unavailable', () => {
  it('rejects with a DependencyError naming CLICKHOUSE_URL within the connect timeout', async () => {
    const started = Date.now();
    const connectTimeoutMs = 1500;
    const err = await createClickHouseStore({
      url: 'http://127.0.0.1:1',
      database: 'unused',
      username: 'default',
      password: '',
      connectTimeoutMs,
      logger: testLogger(),
    }).catch((e: unknown) => e);
    // The budget and a wide margin for a loaded machine's late timers: a client left to its own request timeout
    // (60 s here) or retrying forever would take longer.
    expect(Date.now() - started).toBeLessThan(connectTimeoutMs + 10_000);
    expect(err).toBeInstanceOf(DependencyError);
    expect(isRetryable(err)).toBe(true);
    expect((err as Error).message).toMatch(/CLICKHOUSE_URL=http:\/\/127\.0\.0\.1:1/);
    expect((err as Error).message).toMatch(/ECONNREFUSED|timed out/);
  });
});

describe('store contract: ClickHouse migrated by several processes at once', () => {
  // The roles of `npm run cluster` start together on one database; ClickHouse has no locks, so two of them
  // once raced on `ALTER TABLE ... ADD COLUMN` and one refused to start ("column ... already exists").
  it('four stores migrating the repository sql/ concurrently all succeed, and each file is recorded once', async () => {
    const first = await openClickHouseTestStore(config, 'migrate_race');
    const peers = await Promise.all(
      [1, 2, 3].map(() =>
        createClickHouseStore({
          url: config.CLICKHOUSE_URL,
          database: first.database,
          username: config.CLICKHOUSE_USER,
          password: config.CLICKHOUSE_PASSWORD,
          connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
          logger: testLogger(),
        }),
      ),
    );
    try {
      const files = (await readdir(join(DEFAULT_MIGRATIONS_ROOT, 'clickhouse'))).filter((f) => f.endsWith('.sql'));
      const reports = await Promise.all([first.store, ...peers].map((s) => s.migrate()));
      for (const report of reports) expect([...report.applied, ...report.skipped].sort()).toEqual(files.sort());
      // Every file was applied by someone (the first to reach it), and all are recorded, once each after FINAL.
      expect(new Set(reports.flatMap((r) => r.applied)).size).toBeGreaterThan(0);
      const recorded = await first.store.query(
        sql`SELECT version FROM ${ident('schema_migrations')} ${final} ORDER BY version`,
      );
      expect(recorded.map((r) => Number(r.version))).toEqual(files.map((f) => Number(f.slice(0, 3))));
      // The last migration's columns are there.
      const columns = await first.store.query(
        sql`SELECT name FROM system.columns WHERE database = ${first.database} AND table = ${'dislocations'}`,
      );
      expect(columns.map((c) => c.name)).toContain('peak_capacity_capped');
    } finally {
      await Promise.all(peers.map((s) => s.close()));
      await first.close();
    }
  });
});

describe('migration files', () => {
  it('resolves the default root to the repository sql/ folder, whatever the cwd', () => {
    expect(DEFAULT_MIGRATIONS_ROOT).toBe(resolve(here, '..', '..', 'sql'));
  });

  it('splits statements on ; at line ends and drops -- comment lines', () => {
    const text = [
      '-- header; not a statement;',
      'CREATE TABLE a (x String);',
      "INSERT INTO a VALUES ('x;y');   ",
      '  -- indented comment;',
      'SELECT 1',
      'FROM a;',
      'SELECT 2',
    ].join('\n');
    expect(splitStatements(text)).toEqual([
      'CREATE TABLE a (x String)',
      "INSERT INTO a VALUES ('x;y')",
      'SELECT 1\nFROM a',
      'SELECT 2',
    ]);
  });
});
