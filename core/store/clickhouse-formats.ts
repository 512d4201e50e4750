/**
 * How rows travel to ClickHouse: RowBinary (the insert path when every column
 * type has a writer; clickhouse-rowbinary.ts), TabSeparated
 * (the fallback), JSONEachRow (rows whose keys differ). One value mapping for
 * all three: string, finite number (non-finite refused), null/undefined,
 * boolean, bigint, Date as UTC, arrays. This file holds the two text formats.
 * Hand-written because @clickhouse/client encodes only the JSON formats and
 * leaves binary and TabSeparated bodies to the caller.
 */
import { ident, toSqlDateTime } from './sql.js';
import type { Row } from './store.js';

/**
 * Rows -> a TabSeparated body and its column list, or undefined when the rows
 * do not all have the keys of the first row in the same order (then the
 * caller sends JSONEachRow, where a missing key means the column default).
 * TabSeparated is cheaper on both sides than JSONEachRow: no per-row
 * JSON.stringify and no copies of rows here, no key matching in ClickHouse.
 * Same values as toJsonRows: string (escaped: backslash, tab, newline,
 * carriage return, NUL), finite number (non-finite ones are refused), null /
 * undefined -> \N, boolean -> 0/1, bigint -> decimal, Date -> UTC
 * 'YYYY-MM-DD hh:mm:ss', arrays as ClickHouse array literals ([1,NULL,'a']).
 */
export function toTabSeparated(rows: Row[]): { columns: string[]; body: string } | undefined {
  const columns = Object.keys(rows[0]!);
  if (!columns.length) return undefined;
  for (const key of columns) ident(key); // column names pass `ident` like everywhere else
  const width = columns.length;
  // join() makes flat strings: `+=` would keep a rope of every field alive until the body is sent,
  // hundreds of thousands of small objects each young-generation GC has to copy.
  const fields = new Array<string>(width);
  const lines = new Array<string>(rows.length + 1);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let k = 0;
    for (const key in row) {
      if (k >= width || key !== columns[k]) return undefined;
      fields[k] = tsvField(row[key], key);
      k++;
    }
    if (k !== width) return undefined;
    lines[i] = fields.join('\t');
  }
  lines[rows.length] = '';
  return { columns, body: lines.join('\n') };
}

const TSV_SPECIAL = /[\\\t\n\r\0]/;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const escapeTsv = (s: string) => (TSV_SPECIAL.test(s) ? s.replace(/[\\\t\n\r\0]/g, (c) => TSV_ESCAPES[c]!) : s);

function tsvField(value: unknown, key: string): string {
  switch (typeof value) {
    case 'string':
      return escapeTsv(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`non-finite number in column ${key}: ${value}`);
      return String(value);
    case 'boolean':
      return value ? '1' : '0';
    case 'bigint':
      return value.toString();
    case 'undefined':
      return '\\N';
    case 'object':
      if (value === null) return '\\N';
      if (value instanceof Date) return formatDateTime(value);
      // ClickHouse reads an array inside a TabSeparated field as a literal in place (its strings quoted and escaped).
      if (Array.isArray(value)) return arrayLiteral(value, key);
  }
  throw new TypeError(`unsupported value in column ${key}: ${typeof value}`);
}

/** A ClickHouse array literal (the text form arrays take inside TabSeparated fields). */
function arrayLiteral(values: unknown[], key: string): string {
  let out = '[';
  for (let i = 0; i < values.length; i++) {
    if (i) out += ',';
    const v = values[i];
    switch (typeof v) {
      case 'number':
        if (!Number.isFinite(v)) throw new TypeError(`non-finite number in column ${key}: ${v}`);
        out += String(v);
        break;
      case 'string':
        out += quoteLiteral(v);
        break;
      case 'boolean':
        out += v ? '1' : '0';
        break;
      case 'bigint':
        out += v.toString();
        break;
      case 'undefined':
        out += 'NULL';
        break;
      case 'object':
        if (v === null) out += 'NULL';
        else if (v instanceof Date) out += quoteLiteral(formatDateTime(v));
        else if (Array.isArray(v)) out += arrayLiteral(v, key);
        else throw new TypeError(`unsupported value in column ${key}: object`);
        break;
      default:
        throw new TypeError(`unsupported value in column ${key}: ${typeof v}`);
    }
  }
  return `${out}]`;
}

const LITERAL_ESCAPES: Record<string, string> = { ...TSV_ESCAPES, "'": "\\'" };
const quoteLiteral = (s: string) => `'${s.replace(/[\\'\t\n\r\0]/g, (c) => LITERAL_ESCAPES[c]!)}'`;

/** Plain rows -> what ClickHouse 18.16 parses in JSONEachRow. Copies only rows that need a change. */
export function toJsonRows(rows: Row[]): Row[] {
  const out: Row[] = new Array(rows.length);
  const columns = new Set<string>(); // column names pass `ident` like everywhere else
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let copy: Row | undefined;
    for (const key in row) {
      if (!columns.has(key)) {
        ident(key);
        columns.add(key);
      }
      const value = row[key];
      if (typeof value === 'string' || value === null) continue;
      if (typeof value === 'number') {
        if (!Number.isFinite(value)) throw new TypeError(`non-finite number in column ${key}: ${value}`);
        continue;
      }
      copy ??= { ...row };
      copy[key] = toJsonValue(value, key);
    }
    out[i] = copy ?? row;
  }
  return out;
}

function toJsonValue(value: unknown, key: string): unknown {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`non-finite number in column ${key}: ${value}`);
      return value;
    case 'boolean':
      return value ? 1 : 0;
    case 'bigint':
      return value.toString();
    case 'undefined':
      return null;
    case 'object':
      if (value === null) return null;
      if (value instanceof Date) return formatDateTime(value);
      if (Array.isArray(value)) return value.map((v) => toJsonValue(v, key));
  }
  throw new TypeError(`unsupported value in column ${key}: ${typeof value}`);
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
let cachedSecond = NaN;
let cachedText = '';

/**
 * `toSqlDateTime` (UTC, second precision) without `toISOString`, remembering
 * the last second formatted: rows of a batch are clustered in time, and this
 * conversion was most of the adapter's cost over the bare client.
 */
function formatDateTime(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second === cachedSecond) return cachedText;
  const d = new Date(second * 1000);
  const year = d.getUTCFullYear();
  if (!Number.isFinite(ms) || year < 1000 || year > 9999) return toSqlDateTime(date); // validates, or formats odd years
  cachedText = `${year}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  cachedSecond = second;
  return cachedText;
}
