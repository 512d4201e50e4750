/**
 * The SQL blocks of docs/metrics.md marked `<!-- reproduce: <name> [(engine)] -->`,
 * as written, with their `:name` placeholders filled: the tests run the
 * documentation itself, so a formula that drifts from the code fails them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SqlDialect } from '../../core/store/sql.js';

const DOC = fileURLToPath(new URL('../../docs/metrics.md', import.meta.url));

export interface DocSql {
  name: string;
  engine: SqlDialect | undefined;
  text: string;
}

export function docSqlBlocks(): DocSql[] {
  const doc = readFileSync(DOC, 'utf8');
  const out: DocSql[] = [];
  for (const m of doc.matchAll(
    /<!-- reproduce: ([a-z0-9-]+)(?: \((clickhouse|duckdb)\))? -->\n```sql\n([\s\S]*?)```/g,
  )) {
    out.push({ name: m[1]!, engine: m[2] as SqlDialect | undefined, text: m[3]! });
  }
  return out;
}

/** The block `name` for `engine` (the engine's own variant, else the shared one), placeholders filled, FINAL dropped on DuckDB. */
export function docSql(name: string, engine: SqlDialect, params: Record<string, string | number>): string {
  const blocks = docSqlBlocks().filter((b) => b.name === name);
  const block = blocks.find((b) => b.engine === engine) ?? blocks.find((b) => b.engine === undefined);
  if (!block) throw new Error(`docs/metrics.md has no reproduce block ${name} for ${engine}`);
  let text = block.text.replace(/:([a-z_]+)\b/g, (whole, key: string) => {
    if (!(key in params)) return whole;
    const v = params[key]!;
    return typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`;
  });
  if (engine === 'duckdb') text = text.replace(/ FINAL\b/g, '');
  const missing = /:[a-z_]+\b/.exec(text.replace(/'[^']*'/g, ''));
  if (missing) throw new Error(`docs/metrics.md block ${name}: no value for ${missing[0]}`);
  return text.replace(/;\s*(--[^\n]*\n?)*\s*$/, '');
}
