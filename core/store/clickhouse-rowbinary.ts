/**
 * RowBinary encoding of plain rows, the ClickHouse store's first-choice insert
 * format (the text formats are in clickhouse-formats.ts). Text formats cost
 * most of an insert on both sides: every Float64 formatted in JavaScript and
 * parsed again by the server. Here a number is 8 bytes written as they are.
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
 * with a TypeError, as in the text path. Hand-written because
 * @clickhouse/client encodes only the JSON formats.
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
  const inner = (prefix: string) =>
    type.startsWith(`${prefix}(`) && type.endsWith(')') ? type.slice(prefix.length + 1, -1) : undefined;
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
export function encodeRowBinary(
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
  writers: readonly Writer[],
): Buffer {
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
