/**
 * How rows travel to ClickHouse: RowBinary (the insert path when every column
 * type has a writer), TabSeparated (the fallback), JSONEachRow (rows whose keys
 * differ). One value mapping for all three: string, finite number (non-finite
 * refused), null/undefined, boolean, bigint, Date as UTC, arrays. Hand-written
 * because @clickhouse/client encodes only the JSON formats and leaves binary and
 * TabSeparated bodies to the caller.
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

// ---------------------------------------------------------------- RowBinary

/*
 * RowBinary encoding of plain rows. Text formats cost most of an insert on
 * both sides: every Float64 formatted in JavaScript and parsed again by the
 * server. Here a number is 8 bytes written as they are.
 *
 * The encoder is built per (table, column list) from the column types the
 * server reports, and covers the types this project's tables use: String,
 * (U)Int8-64, Float32/64, DateTime (unix seconds, second precision: the
 * milliseconds are cut like in the text path), Nullable(T), Array(T). It is
 * strict: any value it cannot write exactly as the text formats would have
 * been read (a string in a number column, a fraction or an out-of-range
 * number in an integer column, null in a non-Nullable column, a DateTime
 * outside 1970-2106 or, with a server not on UTC, a DateTime column without
 * an explicit UTC zone, an unknown type, ...) throws NotBinary, and the
 * caller sends the batch as text instead. Non-finite numbers are refused
 * with a TypeError, as in the text path.
 */

export class NotBinary extends Error {}

export type Writer = (w: ByteWriter, value: unknown, key: string) => void;

export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(1024, size));
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varUInt(n: number): void {
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  u8(n: number): void {
    this.ensure(1);
    this.buf[this.pos++] = n;
  }

  string(s: string): void {
    // One byte per UTF-16 unit when ASCII: the common case skips Buffer.byteLength.
    const max = s.length * 3;
    this.ensure(max + 10);
    if (s.length <= 16) {
      // Short ASCII (pairs, venues, sources): a plain loop, 10x cheaper than a Buffer#write call at this size.
      const start = this.pos + 1;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        this.buf[start + i] = c;
      }
      if (i === s.length) {
        this.buf[this.pos] = i;
        this.pos = start + i;
        return;
      }
    }
    if (s.length < 128) {
      // Reserve one length byte; a multi-byte string may need more, then the bytes move.
      const start = this.pos + 1;
      const written = this.buf.write(s, start, max, 'utf8');
      if (written < 128) {
        this.buf[this.pos] = written;
        this.pos = start + written;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.varUInt(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, bytes, 'utf8');
  }

  f64(n: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(n, this.pos);
    this.pos += 8;
  }

  f32(n: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(n, this.pos);
    this.pos += 4;
  }

  /** A safe integer (or bigint) as `bytes` little-endian bytes, two's complement. */
  int(n: number | bigint, bytes: number): void {
    this.ensure(bytes);
    if (bytes === 8 && typeof n === 'number' && n >= 0) {
      // A non-negative safe integer: two 32-bit halves, no BigInt allocation.
      this.buf.writeUInt32LE(n % 0x100000000, this.pos);
      this.buf.writeUInt32LE(Math.floor(n / 0x100000000), this.pos + 4);
    } else if (bytes === 8) {
      const b = BigInt(n);
      this.buf.writeBigUInt64LE(b < 0n ? b + (1n << 64n) : b, this.pos);
    } else {
      let v = Number(n);
      if (v < 0) v += 2 ** (8 * bytes);
      this.buf.writeUIntLE(v, this.pos, bytes);
    }
    this.pos += bytes;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

const INT_TYPES: Record<string, { bytes: number; signed: boolean }> = {
  UInt8: { bytes: 1, signed: false },
  UInt16: { bytes: 2, signed: false },
  UInt32: { bytes: 4, signed: false },
  UInt64: { bytes: 8, signed: false },
  Int8: { bytes: 1, signed: true },
  Int16: { bytes: 2, signed: true },
  Int32: { bytes: 4, signed: true },
  Int64: { bytes: 8, signed: true },
};

const finite = (n: number, key: string): number => {
  if (!Number.isFinite(n)) throw new TypeError(`non-finite number in column ${key}: ${n}`);
  return n;
};

/** The writer of one column type, or undefined when the type is not covered. `serverUtc`: the server's own zone is UTC. */
export function writerFor(type: string, serverUtc: boolean): Writer | undefined {
  const inner = (prefix: string) => (type.startsWith(`${prefix}(`) && type.endsWith(')') ? type.slice(prefix.length + 1, -1) : undefined);
  const nullable = inner('Nullable');
  if (nullable !== undefined) {
    const write = writerFor(nullable, serverUtc);
    if (!write) return undefined;
    return (w, v, key) => {
      if (v === null || v === undefined) return w.u8(1);
      w.u8(0);
      write(w, v, key);
    };
  }
  const array = inner('Array');
  if (array !== undefined) {
    const write = writerFor(array, serverUtc);
    if (!write) return undefined;
    return (w, v, key) => {
      if (!Array.isArray(v)) throw new NotBinary();
      w.varUInt(v.length);
      for (let i = 0; i < v.length; i++) write(w, v[i], key);
    };
  }
  if (type === 'String') {
    return (w, v) => {
      if (typeof v !== 'string') throw new NotBinary();
      w.string(v);
    };
  }
  if (type === 'Float64' || type === 'Float32') {
    const f64 = type === 'Float64';
    return (w, v, key) => {
      const n = typeof v === 'number' ? finite(v, key) : typeof v === 'boolean' ? Number(v) : undefined;
      if (n === undefined) throw new NotBinary();
      if (f64) w.f64(n);
      else w.f32(n);
    };
  }
  const int = INT_TYPES[type];
  if (int) {
    const bits = BigInt(8 * int.bytes);
    const lo = int.signed ? -(1n << (bits - 1n)) : 0n;
    const hi = int.signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
    const loN = Number(lo);
    const hiN = Number(hi);
    return (w, v, key) => {
      if (typeof v === 'number') {
        finite(v, key);
        if (!Number.isSafeInteger(v) || v < loN || v > hiN) throw new NotBinary();
        w.int(v, int.bytes);
      } else if (typeof v === 'bigint') {
        if (v < lo || v > hi) throw new NotBinary();
        w.int(v, int.bytes);
      } else if (typeof v === 'boolean') {
        w.int(v ? 1 : 0, int.bytes);
      } else throw new NotBinary();
    };
  }
  // Text DateTime is read in the column's zone, else the server's: binary seconds match it only when that zone is UTC.
  const zone = /^DateTime(?:\('([^']*)'\))?$/.exec(type);
  if (zone && (zone[1] === undefined ? serverUtc : zone[1] === 'UTC' || zone[1] === 'Etc/UTC')) {
    return (w, v) => {
      if (!(v instanceof Date)) throw new NotBinary();
      const s = Math.floor(v.getTime() / 1000);
      if (!(s >= 0 && s <= 0xffffffff)) throw new NotBinary();
      w.int(s, 4);
    };
  }
  return undefined;
}

/**
 * Rows -> a RowBinary body for `columns` (the keys of every row, in this
 * order, checked). Throws NotBinary when a row has other keys or a value the
 * column's writer does not take.
 */
export function encodeRowBinary(rows: readonly Record<string, unknown>[], columns: readonly string[], writers: readonly Writer[]): Buffer {
  const encoder = new RowBinaryEncoder(columns, writers, rows.length * 512);
  for (let i = 0; i < rows.length; i++) if (!encoder.tryAdd(rows[i]!)) throw new NotBinary();
  return encoder.body();
}

/** A RowBinary body built one row at a time (Store.beginInsert). */
export class RowBinaryEncoder {
  private readonly w: ByteWriter;
  rows = 0;

  constructor(
    readonly columns: readonly string[],
    private readonly writers: readonly Writer[],
    initialBytes = 64 * 1024,
  ) {
    this.w = new ByteWriter(initialBytes);
  }

  /**
   * Appends the row, or returns false and writes nothing when it does not fit
   * (other keys, a value a column's writer does not take). A non-finite
   * number throws, as everywhere.
   */
  tryAdd(row: Record<string, unknown>): boolean {
    const { w, columns, writers } = this;
    const start = w.pos;
    const width = columns.length;
    let k = 0;
    try {
      for (const key in row) {
        if (k >= width || key !== columns[k]) throw new NotBinary();
        writers[k]!(w, row[key], key);
        k++;
      }
      if (k !== width) throw new NotBinary();
    } catch (err) {
      w.pos = start;
      if (err instanceof NotBinary) return false;
      throw err;
    }
    this.rows++;
    return true;
  }

  body(): Buffer {
    return this.w.result();
  }
}
