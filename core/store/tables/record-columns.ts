/**
 * A table's record (a zod object: the field names are the event's and the
 * API's) and its stored columns, in one place per table: the row of a record
 * and the fields read back from a row. A column is named as its field except
 * where the table module declares otherwise (`renamed`): columns named before
 * their fields were keep their names, since ClickHouse 18.16 has no RENAME
 * COLUMN (docs/metrics.md, "Stored columns"). Stored values: a boolean as
 * 0/1; read back as the field's zod type says (ClickHouse returns 64-bit
 * integers as strings and booleans as 0/1, DuckDB numbers).
 */
import type { z } from 'zod';
import { ident, join, sql, type Sql } from '../sql.js';
import type { Row } from '../store.js';
import { num } from './query-helpers.js';

type Reader = (value: unknown) => unknown;

/** The field names of a zod object, in its order. */
export const keysOf = <S extends z.ZodRawShape>(schema: z.ZodObject<S>) =>
  Object.keys(schema.shape) as (keyof S & string)[];

/** How a stored value becomes the field's value, from the field's zod type. */
function readerOf(schema: z.ZodType): Reader {
  const def = schema._zod.def as { type: string; innerType?: z.ZodType };
  switch (def.type) {
    case 'boolean':
      return (v) => num(v) === 1;
    case 'number':
      return num;
    case 'string':
    case 'enum':
      return String;
    case 'nullable': {
      const inner = readerOf(def.innerType!);
      return (v) => (v === null || v === undefined ? null : inner(v));
    }
    case 'optional':
    case 'nonoptional':
      return readerOf(def.innerType!);
    default:
      throw new TypeError(`record-columns: no stored form for a ${def.type} field`);
  }
}

export class RecordColumns<S extends z.ZodRawShape, T = z.output<z.ZodObject<S>>> {
  /** [field, column] of every field of the record, in the record's order (the order of the row's columns). */
  private readonly stored: readonly [keyof S & string, string][];
  private readonly readers = new Map<string, Reader>();

  constructor(
    schema: z.ZodObject<S>,
    /** Field -> column, where the column is named otherwise. */
    private readonly renamed: Partial<Record<keyof S & string, string>>,
  ) {
    this.stored = Object.keys(schema.shape).map((field) => [field, this.column(field)]);
    for (const [field, type] of Object.entries(schema.shape)) this.readers.set(field, readerOf(type as z.ZodType));
  }

  /** The column of a field. */
  column(field: keyof S & string): string {
    return this.renamed[field] ?? field;
  }

  /** The stored row of a record, `extra` columns first. */
  rowOf(record: T, extra: Row = {}): Row {
    const row: Row = { ...extra };
    for (const [field, column] of this.stored) {
      const value = (record as Record<string, unknown>)[field];
      row[column] = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    }
    return row;
  }

  /** `aggregate(<column>, ...) AS <field>_` for each field (an alias named as a column would shadow it in ClickHouse). */
  selectEach(fields: readonly (keyof S & string)[], aggregate: (column: Sql) => Sql): Sql {
    return join(fields.map((f) => sql`${aggregate(ident(this.column(f)))} AS ${ident(`${f}_`)}`));
  }

  /** `<column> AS <field>_` for each field. */
  select(fields: readonly (keyof S & string)[]): Sql {
    return this.selectEach(fields, (column) => column);
  }

  /** The fields of a row selected with selectEach or select. */
  read<K extends keyof S & keyof T & string>(row: Row, fields: readonly K[]): Pick<T, K> {
    const out: Partial<Record<K, unknown>> = {};
    for (const f of fields) out[f] = this.readers.get(f)!(row[`${f}_`]);
    return out as Pick<T, K>;
  }
}
