/**
 * ClickHouse's read-only "analyst" user (scripts/engines/clickhouse/users.d/analyst.xml,
 * docs/querying-the-store.md) on a PRIVATE ClickHouse 18.16 started by scripts/engines.sh from the current
 * templates, with small limits so that a test reaches them: at most 1,000 result rows and 20,000 rows read per
 * query, 60 queries per hour. The app's user (`default`) migrates a database and writes 1,500 spread samples of
 * ETH/USD and 30,000 of AERO/USD;
 * the analyst then
 *  - reads the views and tables of its database, with the password engines.sh generated into a 0600 file,
 *    and with the one CLICKHOUSE_ANALYST_PASSWORD sets (which replaces it);
 *  - is refused every write (INSERT, ALTER, DROP, CREATE, TRUNCATE, RENAME, OPTIMIZE), changing a setting
 *    (SET, or a setting in the URL: the limits cannot be raised), other databases and a wrong password, each
 *    with ClickHouse's stable error code, and nothing it tried changed the data;
 *  - is refused queries over the row limits (result rows, rows read: a view's too, unless a filter on its pair
 *    reaches the table read);
 *  - is refused every query once its hourly quota is spent, while the app's user is not.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { testLogger, uniqueName } from '../helpers/config.js';
import { startPrivateClickHouse, type PrivateClickHouse } from '../helpers/private-clickhouse.js';
import { spreadSample } from '../helpers/spread-sample.js';

const QUERIES_PER_HOUR = 60;
const MAX_RESULT_ROWS = 1000;
const MAX_ROWS_TO_READ = 20_000;
const SAMPLES = 1500;
/** Samples of another pair: together more than MAX_ROWS_TO_READ. */
const OTHER_SAMPLES = 30_000;
const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);

interface Answer {
  status: number;
  text: string;
  /** ClickHouse's error code (`Code: N`), when it refused. */
  code: number | undefined;
}

/** One query over ClickHouse's HTTP interface, as an analyst would send it (basic auth, JSONEachRow). */
async function httpQuery(url: string, user: string, password: string, query: string, params = ''): Promise<Answer> {
  const res = await fetch(`${url}/?default_format=JSONEachRow${params}`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    body: query,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  const code = res.ok ? undefined : Number(/Code: (\d+)/.exec(text)?.[1]);
  return { status: res.status, text, code };
}

const rows = (a: Answer) =>
  a.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** ClickHouse 18.16 error codes the analyst meets (src/Common/ErrorCodes.cpp). */
const READONLY = 164;
const TOO_MANY_ROWS = 158;
const TOO_MANY_ROWS_OR_BYTES = 396;
const QUOTA_EXPIRED = 201;
const ACCESS_DENIED = 291;
const WRONG_PASSWORD = 193;

describe('ClickHouse analyst user (private ClickHouse from the engines templates)', () => {
  const database = uniqueName('analyst_access');
  let ch: PrivateClickHouse;
  let store: Store;
  let password: string;
  const analyst = (query: string, params = '') =>
    httpQuery(ch.url, 'analyst', password, `${query}`, `&database=${database}${params}`);

  beforeAll(async () => {
    ch = await startPrivateClickHouse({
      CLICKHOUSE_ANALYST_PASSWORD: '',
      CLICKHOUSE_ANALYST_DATABASE: database,
      CLICKHOUSE_ANALYST_MAX_RESULT_ROWS: String(MAX_RESULT_ROWS),
      CLICKHOUSE_ANALYST_MAX_ROWS_TO_READ: String(MAX_ROWS_TO_READ),
      CLICKHOUSE_ANALYST_QUERIES_PER_HOUR: String(QUERIES_PER_HOUR),
    });
    store = await createClickHouseStore({
      url: ch.url,
      database,
      username: 'default',
      password: '',
      connectTimeoutMs: 30_000,
      logger: testLogger(),
    });
    await store.migrate();
    await insertSpreadSamples(
      store,
      Array.from({ length: SAMPLES }, (_, i) => spreadSample(i, T0 + i * 1000)),
    );
    await insertSpreadSamples(
      store,
      Array.from({ length: OTHER_SAMPLES }, (_, i) => ({
        ...spreadSample(i, T0 + i * 1000),
        pair: 'AERO/USD',
        sample_id: `aero-${i}`,
      })),
    );
    password = readFileSync(join(ch.dir, 'analyst.password'), 'utf8').trim();
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await ch?.stop();
  }, 60_000);

  it('logs in with the generated password (a 0600 file) and reads the views of its database', async () => {
    expect(statSync(join(ch.dir, 'analyst.password')).mode & 0o777).toBe(0o600);
    expect(password).toMatch(/^[A-Za-z0-9]{20,}$/);
    const users = readFileSync(join(ch.dir, 'users.d', 'analyst.xml'), 'utf8');
    expect(users).toContain(`<password_sha256_hex>${createHash('sha256').update(password).digest('hex')}<`);
    expect(users).not.toContain(password); // only its SHA-256 is written
    expect(statSync(join(ch.dir, 'users.d', 'analyst.xml')).mode & 0o777).toBe(0o600);
    const status = await ch.engines(['status']);
    expect(status.out).toContain(join(ch.dir, 'analyst.password'));
    expect(status.out).not.toContain(password);

    const candles = await analyst(
      `SELECT count() AS n, sum(sample_count) AS samples FROM spread_candles_15m WHERE pair = 'ETH/USD'`,
    );
    expect(candles.status, candles.text).toBe(200);
    expect(rows(candles)).toEqual([{ n: String(Math.ceil(SAMPLES / 900)), samples: String(SAMPLES) }]);
    // the documented command-line client, over the native port
    const cli = spawnSync(
      'clickhouse-client',
      ['--host', '127.0.0.1', '--port', String(ch.tcpPort), '--user', 'analyst', '--password', password],
      {
        input: `SELECT count() FROM ${database}.spread_samples WHERE pair = 'ETH/USD'`,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout.trim()).toBe(String(SAMPLES));
  });

  it('refuses every write and every setting change (READONLY), and nothing changes', async () => {
    const writes = [
      `INSERT INTO spread_samples (sample_id, pair, seq, ts, ts_ms) VALUES ('x', 'ETH/USD', 1, now(), 1)`,
      'ALTER TABLE spread_samples DELETE WHERE 1 = 1',
      'ALTER TABLE spread_samples ADD COLUMN junk UInt8',
      'ALTER TABLE spread_samples DROP COLUMN source',
      'DROP TABLE spread_samples',
      'DROP TABLE spread_candles_15m',
      'TRUNCATE TABLE spread_samples',
      'RENAME TABLE spread_samples TO gone',
      'OPTIMIZE TABLE spread_samples FINAL',
      'CREATE TABLE mine (a UInt8) ENGINE = Memory',
      'CREATE VIEW mine AS SELECT 1',
      'SET max_result_rows = 0',
    ];
    for (const query of writes) {
      const a = await analyst(query);
      expect(a.status, query).not.toBe(200);
      expect(a.code, `${query}: ${a.text}`).toBe(READONLY);
    }
    // a limit in the URL cannot be raised either
    const raised = await analyst('SELECT 1', '&max_result_rows=0');
    expect(raised.code, raised.text).toBe(READONLY);

    const [after] = await store.query(sql`SELECT count() AS n FROM spread_samples`);
    expect(num(after!.n)).toBe(SAMPLES + OTHER_SAMPLES);
    const tables = await store.query(
      sql`SELECT name FROM system.tables WHERE database = ${database} AND name = 'mine'`,
    );
    expect(tables).toEqual([]);
  });

  it('refuses other databases and a wrong password', async () => {
    const other = await httpQuery(ch.url, 'analyst', password, 'SELECT count() FROM default.schema_migrations');
    expect(other.code, other.text).toBe(ACCESS_DENIED);
    const wrong = await httpQuery(ch.url, 'analyst', `${password}x`, 'SELECT 1', `&database=${database}`);
    expect(wrong.code, wrong.text).toBe(WRONG_PASSWORD);
  });

  it('refuses a query over the row limits: result rows, rows read (a view too, unless its pair filter reaches the table)', async () => {
    const tooManyResults = await analyst(`SELECT * FROM spread_samples WHERE pair = 'ETH/USD'`);
    expect(tooManyResults.code, tooManyResults.text).toBe(TOO_MANY_ROWS_OR_BYTES);
    // an unbounded scan stops at the read limit
    const tooManyRead = await analyst('SELECT count() FROM system.numbers WHERE number < 40000');
    expect(tooManyRead.code, tooManyRead.text).toBe(TOO_MANY_ROWS);
    // a view reads its table within the same limit: every pair is too much, one pair is not
    const wholeView = await analyst('SELECT count() FROM spread_candles_15m');
    expect(wholeView.code, wholeView.text).toBe(TOO_MANY_ROWS);
    const onePair = await analyst(`SELECT sum(sample_count) AS n FROM spread_candles_15m WHERE pair = 'ETH/USD'`);
    expect(rows(onePair), onePair.text).toEqual([{ n: String(SAMPLES) }]);
  });

  it('refuses every query once the hourly quota is spent; the app user is not limited', async () => {
    // The quota counts every query of the hour (the earlier tests' too); an hour boundary during the loop resets
    // it, hence twice the quota as the bound.
    let refused: Answer | undefined;
    for (let i = 0; i < 2 * QUERIES_PER_HOUR + 2 && !refused; i++) {
      const a = await analyst('SELECT 1');
      if (a.status !== 200) refused = a;
    }
    expect(refused?.code, refused?.text).toBe(QUOTA_EXPIRED);
    expect(refused!.text).toMatch(/Quota for user 'analyst' for 1 hour has been exceeded/);
    const again = await analyst('SELECT count() FROM spread_candles_15m');
    expect(again.code, again.text).toBe(QUOTA_EXPIRED);
    const [app] = await store.query(sql`SELECT count() AS n FROM spread_samples`);
    expect(num(app!.n)).toBe(SAMPLES + OTHER_SAMPLES);
  });

  it('takes CLICKHOUSE_ANALYST_PASSWORD when set (the generated one no longer works)', async () => {
    expect((await ch.engines(['down'])).code).toBe(0);
    const up = await ch.engines(['up'], { CLICKHOUSE_ANALYST_PASSWORD: 'an alyst-pässword' });
    expect(up.code, up.out).toBe(0);
    const ok = await httpQuery(ch.url, 'analyst', 'an alyst-pässword', 'SELECT 1 AS one', `&database=${database}`);
    expect(ok.status, ok.text).toBe(200);
    const old = await httpQuery(ch.url, 'analyst', password, 'SELECT 1', `&database=${database}`);
    expect(old.code, old.text).toBe(WRONG_PASSWORD);
  }, 120_000);
});
