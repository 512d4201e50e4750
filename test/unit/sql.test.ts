import { describe, expect, it } from 'vitest';
import { dialect, final, ident, join, literal, raw, sql, toSqlDateTime, type SqlValue } from '../../core/store/sql.js';

const both = (s: ReturnType<typeof sql>) => ({ clickhouse: s.render('clickhouse'), duckdb: s.render('duckdb') });

describe('sql rendering', () => {
  it('renders the documented example in both dialects', () => {
    const q = sql`SELECT count() FROM ${ident('quotes')} ${final} WHERE pair = ${'BTC-USD'}`;
    expect(both(q)).toEqual({
      clickhouse: "SELECT count() FROM quotes FINAL WHERE pair = 'BTC-USD'",
      duckdb: "SELECT count() FROM quotes  WHERE pair = 'BTC-USD'",
    });
  });

  it('escapes quotes and backslashes per dialect', () => {
    const cases: [string, string, string][] = [
      ["it's", "'it\\'s'", "'it''s'"],
      ['a\\b', "'a\\\\b'", "'a\\b'"],
      ["\\'", "'\\\\\\''", "'\\'''"],
      [
        "'; DROP TABLE contract_events; --",
        "'\\'; DROP TABLE contract_events; --'",
        "'''; DROP TABLE contract_events; --'",
      ],
      ['line1\nline2\r\n\ttab', "'line1\nline2\r\n\ttab'", "'line1\nline2\r\n\ttab'"],
      ['ünïcødé 🦆 “q”', "'ünïcødé 🦆 “q”'", "'ünïcødé 🦆 “q”'"],
      ['', "''", "''"],
      ['\\', "'\\\\'", "'\\'"],
    ];
    for (const [value, clickhouse, duckdb] of cases) {
      expect(literal(value, 'clickhouse'), JSON.stringify(value)).toBe(clickhouse);
      expect(literal(value, 'duckdb'), JSON.stringify(value)).toBe(duckdb);
    }
  });

  it('writes NUL as \\0 for ClickHouse and refuses it for DuckDB', () => {
    expect(literal('a\0b', 'clickhouse')).toBe("'a\\0b'");
    expect(() => literal('a\0b', 'duckdb')).toThrow(/NUL/);
  });

  it('renders numbers, refuses non-finite ones, and parenthesises negatives', () => {
    expect(literal(1.5, 'clickhouse')).toBe('1.5');
    expect(literal(0, 'duckdb')).toBe('0');
    expect(literal(-0, 'duckdb')).toBe('0');
    expect(literal(1e21, 'clickhouse')).toBe('1e+21');
    expect(literal(-2, 'clickhouse')).toBe('(-2)');
    expect(literal(-2.5, 'duckdb')).toBe('(-2.5)');
    expect(literal(123n, 'clickhouse')).toBe('123');
    expect(literal(-18446744073709551615n, 'duckdb')).toBe('(-18446744073709551615)');
    for (const bad of [NaN, Infinity, -Infinity]) {
      expect(() => literal(bad, 'clickhouse')).toThrow(/non-finite/);
      expect(() => literal(bad, 'duckdb')).toThrow(/non-finite/);
    }
    // `a-${-1}` must not become the comment `a--1`
    expect(both(sql`SELECT 1-${-1}`)).toEqual({ clickhouse: 'SELECT 1-(-1)', duckdb: 'SELECT 1-(-1)' });
  });

  it('renders booleans, nulls and arrays per dialect', () => {
    expect(both(sql`${true}, ${false}, ${null}, ${undefined}`)).toEqual({
      clickhouse: '1, 0, NULL, NULL',
      duckdb: 'true, false, NULL, NULL',
    });
    const arr: SqlValue = [1, "a'b", null, [2, -3]];
    expect(literal(arr, 'clickhouse')).toBe("[1, 'a\\'b', NULL, [2, (-3)]]");
    expect(literal(arr, 'duckdb')).toBe("[1, 'a''b', NULL, [2, (-3)]]");
    expect(literal([], 'clickhouse')).toBe('[]');
  });

  it('renders dates at second precision in UTC and refuses invalid ones', () => {
    const d = new Date('2024-03-04T05:06:07.891Z');
    expect(literal(d, 'clickhouse')).toBe("toDateTime('2024-03-04 05:06:07', 'UTC')");
    expect(literal(d, 'duckdb')).toBe("TIMESTAMP '2024-03-04 05:06:07'");
    expect(toSqlDateTime(d)).toBe('2024-03-04 05:06:07');
    expect(toSqlDateTime(0)).toBe('1970-01-01 00:00:00');
    expect(() => literal(new Date('nope'), 'clickhouse')).toThrow(/invalid Date/);
    expect(() => toSqlDateTime(Date.UTC(10000, 0, 1))).toThrow(/out of range/);
    expect(() => toSqlDateTime(-62198755200000 - 86400000)).toThrow(/out of range/); // year -1
  });

  it('refuses values that are not SQL values', () => {
    expect(() => literal({} as unknown as SqlValue, 'clickhouse')).toThrow(TypeError);
    expect(() => literal(Symbol('x') as unknown as SqlValue, 'duckdb')).toThrow(TypeError);
    expect(() => literal((() => 1) as unknown as SqlValue, 'duckdb')).toThrow(TypeError);
    expect(() => literal(Buffer.from('x') as unknown as SqlValue, 'clickhouse')).toThrow(TypeError);
  });

  it('accepts identifiers from a closed set only', () => {
    expect(ident('quotes').render('clickhouse')).toBe('quotes');
    expect(ident('gateway.quotes').render('duckdb')).toBe('gateway.quotes');
    expect(ident('_x1').render('duckdb')).toBe('_x1');
    for (const bad of ['x; DROP', 'a-b', '"a"', "'a'", '`a`', '', '1a', 'a.b.c', 'a b', 'a\nb', 'a--', 'é']) {
      expect(() => ident(bad), JSON.stringify(bad)).toThrow(/invalid SQL identifier/);
    }
  });

  it('composes fragments: raw, dialect, join, nested sql', () => {
    const cols = join([ident('a'), ident('b')]);
    const where = sql`pair IN (${join(['x', "y'z"].map((p) => sql`${p}`))})`;
    const q = sql`SELECT ${cols}, ${dialect({ clickhouse: raw('toStartOfFifteenMinutes(ts)'), duckdb: raw("time_bucket(INTERVAL '15 minutes', ts)") })} FROM t ${final} WHERE ${where} LIMIT ${10}`;
    expect(both(q)).toEqual({
      clickhouse: "SELECT a, b, toStartOfFifteenMinutes(ts) FROM t FINAL WHERE pair IN ('x', 'y\\'z') LIMIT 10",
      duckdb: "SELECT a, b, time_bucket(INTERVAL '15 minutes', ts) FROM t  WHERE pair IN ('x', 'y''z') LIMIT 10",
    });
    expect(join([ident('a'), ident('b')], ' AND ').render('duckdb')).toBe('a AND b');
    expect(dialect({ duckdb: raw('X') }).render('clickhouse')).toBe('');
  });

  it('refuses a template whose cooked text is undefined (invalid escape)', () => {
    const strings = Object.assign([undefined, ''], { raw: ['\\d', ''] }) as unknown as TemplateStringsArray;
    expect(() => sql(strings, 1)).toThrow(/invalid escape/);
  });
});
