/**
 * How values cross into and out of DuckDB for the DuckDB store. In: one
 * encoder per column type (DOUBLE/INTEGER... take finite numbers, booleans;
 * BIGINT/HUGEINT take integers, integer strings, bigints; TIMESTAMP and DATE
 * take a Date, epoch ms or a date string and keep second / day precision, like
 * ClickHouse's DateTime; VARCHAR refuses NUL bytes); a value an encoder cannot
 * take is a TypeError naming the column. Out: the plain shapes ClickHouse's
 * JSONEachRow gives (TIMESTAMP -> 'YYYY-MM-DD hh:mm:ss' UTC, BOOLEAN -> 1/0,
 * BIGINT -> number when safe, else string), so one query reads the same
 * through both adapters.
 */
import {
  dateValue,
  DuckDBTypeId,
  JSDuckDBValueConverter,
  jsToDuckDBValue,
  timestampValue,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
} from '@duckdb/node-api';
import { errorMessage } from '../errors.js';
import { toSqlDateTime } from './sql.js';
import type { Row } from './store.js';

export type Encoder = (value: unknown, column: string) => DuckDBValue;

const MS_PER_DAY = 86_400_000;

/** `jsToDuckDBValue` for a type known only at run time. */
const toDuckDb = jsToDuckDBValue as unknown as (value: unknown, type: DuckDBType) => DuckDBValue;

function toEpochMs(value: unknown, column: string): number {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (typeof value === 'string')
    ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  else throw new TypeError(`column ${column}: expected a Date, got ${typeof value}`);
  if (!Number.isFinite(ms)) throw new TypeError(`column ${column}: invalid date ${String(value)}`);
  return ms;
}

function toNumber(value: unknown, column: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`column ${column}: non-finite number ${value}`);
    return value;
  }
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new TypeError(`column ${column}: expected a number, got ${typeof value}`);
}

function toBigInt(value: unknown, column: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError(`column ${column}: expected an integer, got ${value}`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  if (typeof value === 'boolean') return value ? 1n : 0n;
  throw new TypeError(`column ${column}: expected an integer, got ${typeof value}`);
}

export function encoderFor(type: DuckDBType): Encoder {
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR:
      return (v, column) => {
        if (typeof v === 'string') {
          if (v.includes('\0')) throw new TypeError(`column ${column}: NUL byte cannot be stored in DuckDB VARCHAR`);
          return v;
        }
        if (v instanceof Date) return toSqlDateTime(v);
        if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
        throw new TypeError(`column ${column}: expected a string, got ${typeof v}`);
      };
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
      return toNumber;
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return toBigInt;
    case DuckDBTypeId.BOOLEAN:
      return (v, column) => {
        if (typeof v === 'boolean') return v;
        if (v === 0 || v === 1) return v === 1;
        throw new TypeError(`column ${column}: expected a boolean, got ${String(v)}`);
      };
    case DuckDBTypeId.TIMESTAMP:
      // Second precision, like ClickHouse DateTime.
      return (v, column) => timestampValue(BigInt(Math.floor(toEpochMs(v, column) / 1000)) * 1_000_000n);
    case DuckDBTypeId.DATE:
      return (v, column) => dateValue(Math.floor(toEpochMs(v, column) / MS_PER_DAY));
    default:
      return (v, column) => {
        try {
          return toDuckDb(v, type);
        } catch (err) {
          throw new TypeError(`column ${column} (${type.toString()}): ${errorMessage(err)}`);
        }
      };
  }
}

const bigintOut = (value: bigint): number | string =>
  value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();

/** DuckDB values -> the plain shapes ClickHouse's JSONEachRow returns. */
export const plainValueConverter: DuckDBValueConverter<unknown> = (value, type, converter) => {
  if (value === null || value === undefined) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return typeof value === 'bigint' ? bigintOut(value) : String(value);
    case DuckDBTypeId.BOOLEAN:
      return value === true ? 1 : 0;
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
    case DuckDBTypeId.TIMESTAMP_TZ: {
      let date: unknown;
      try {
        date = JSDuckDBValueConverter(value, type, JSDuckDBValueConverter);
      } catch {
        return String(value); // outside the JS Date range (infinity and the like)
      }
      return date instanceof Date ? toSqlDateTime(date) : String(value);
    }
    case DuckDBTypeId.DATE:
      return String(value);
    default:
      return JSDuckDBValueConverter(value, type, converter as unknown as typeof JSDuckDBValueConverter);
  }
};

/** Runs a query and reads every row in the plain shapes. */
export async function readRows(connection: DuckDBConnection, text: string): Promise<Row[]> {
  const reader = await connection.runAndReadAll(text);
  return reader.convertRowObjects(plainValueConverter) as Row[];
}
