/**
 * The one helper through which every value enters SQL.
 *
 * Written by hand because neither engine's client covers this for us:
 * ClickHouse 18.16 has no server-side query parameters (`{name:Type}`), and
 * one query text must render for two dialects (ClickHouse and DuckDB) whose
 * string literals escape differently (backslash escapes vs doubled quotes).
 *
 *   sql`SELECT count() FROM ${ident('quotes')} ${final} WHERE pair = ${pair}`
 *
 * Interpolated values become literals escaped for the target dialect;
 * identifiers must pass `ident` (a closed character set); `raw` is for
 * trusted constant fragments only and never takes user input.
 */

export type SqlDialect = 'clickhouse' | 'duckdb';

export type SqlValue = string | number | bigint | boolean | null | undefined | Date | readonly SqlValue[];

type Part =
  | { kind: 'text'; text: string }
  | { kind: 'value'; value: SqlValue }
  | { kind: 'dialect'; pick: Partial<Record<SqlDialect, Sql>> };

export class Sql {
  /** @internal */
  constructor(readonly parts: readonly (Part | Sql)[]) {}

  render(dialect: SqlDialect): string {
    let out = '';
    for (const part of this.parts) {
      if (part instanceof Sql) out += part.render(dialect);
      else if (part.kind === 'text') out += part.text;
      else if (part.kind === 'value') out += literal(part.value, dialect);
      else out += part.pick[dialect]?.render(dialect) ?? '';
    }
    return out;
  }
}

export function sql(strings: TemplateStringsArray, ...values: (SqlValue | Sql)[]): Sql {
  const parts: (Part | Sql)[] = [];
  strings.forEach((text: string | undefined, i) => {
    // An invalid escape in the template (e.g. `\d`) leaves the cooked text undefined: refuse instead of dropping it.
    if (text === undefined)
      throw new TypeError(`invalid escape sequence in SQL template: ${JSON.stringify(strings.raw[i])}`);
    if (text) parts.push({ kind: 'text', text });
    if (i < values.length) {
      const v = values[i];
      parts.push(v instanceof Sql ? v : { kind: 'value', value: v as SqlValue });
    }
  });
  return new Sql(parts);
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/** A table or column name (optionally `db.table`) from a closed character set. */
export function ident(name: string): Sql {
  if (!IDENT.test(name)) throw new TypeError(`invalid SQL identifier: ${JSON.stringify(name)}`);
  return new Sql([{ kind: 'text', text: name }]);
}

/** Trusted constant SQL text. Never pass input here. */
export function raw(text: string): Sql {
  return new Sql([{ kind: 'text', text }]);
}

/** A fragment that differs per dialect. */
export function dialect(pick: Partial<Record<SqlDialect, Sql>>): Sql {
  return new Sql([{ kind: 'dialect', pick }]);
}

/** `FINAL` on ClickHouse (collapse ReplacingMergeTree duplicates at read time); nothing on DuckDB (primary keys dedupe on insert). */
export const final = dialect({ clickhouse: raw('FINAL') });

export function join(fragments: Sql[], separator = ', '): Sql {
  const parts: (Part | Sql)[] = [];
  fragments.forEach((f, i) => {
    if (i) parts.push({ kind: 'text', text: separator });
    parts.push(f);
  });
  return new Sql(parts);
}

export function literal(value: SqlValue, dialect: SqlDialect): string {
  if (value === null || value === undefined) return 'NULL';
  switch (typeof value) {
    case 'string':
      return quoteString(value, dialect);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`non-finite number cannot enter SQL: ${value}`);
      // Negative numbers are parenthesised: `a-${-1}` must not render `a--1` (a comment).
      return value < 0 ? `(${String(value)})` : String(value);
    case 'bigint':
      return value < 0n ? `(${value.toString()})` : value.toString();
    case 'boolean':
      return dialect === 'clickhouse' ? (value ? '1' : '0') : value ? 'true' : 'false';
    case 'object':
      if (value instanceof Date) return dateTimeLiteral(value, dialect);
      if (Array.isArray(value)) return `[${value.map((v) => literal(v, dialect)).join(', ')}]`;
  }
  throw new TypeError(`unsupported SQL value of type ${typeof value}`);
}

function quoteString(value: string, dialect: SqlDialect): string {
  if (dialect === 'clickhouse') {
    // ClickHouse string literals interpret backslash escapes: escape the
    // backslash first, then the quote. NUL is written as \0.
    return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0')}'`;
  }
  // DuckDB follows the SQL standard: backslashes are literal, quotes double.
  if (value.includes('\0')) throw new TypeError('NUL byte cannot enter a DuckDB string literal');
  return `'${value.replace(/'/g, "''")}'`;
}

function dateTimeLiteral(value: Date, dialect: SqlDialect): string {
  // Second precision in both dialects (the store's DateTime contract): a DuckDB
  // literal with milliseconds would compare differently than ClickHouse's.
  const text = toSqlDateTime(value);
  if (dialect === 'clickhouse') return `toDateTime('${text}', 'UTC')`;
  return `TIMESTAMP '${text}'`;
}

/**
 * `YYYY-MM-DD hh:mm:ss` in UTC (milliseconds dropped): the text both engines
 * parse into a DateTime/TIMESTAMP column. Refuses invalid dates and years
 * outside 0000-9999 (which `toISOString` would render with a sign).
 */
export function toSqlDateTime(value: Date | number): string {
  const date = new Date(value);
  const time = date.getTime();
  if (Number.isNaN(time)) throw new TypeError('invalid Date cannot enter SQL');
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new TypeError(`Date out of range for SQL: year ${year}`);
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
