/**
 * Numbered SQL migrations shared by both store adapters.
 *
 * Files: `<root>/<dialect>/NNN_name.sql` (root defaults to the repository's
 * `sql/` folder, resolved from this module's location, not the cwd). A file
 * holds one or more statements; a statement ends with `;` at the end of a
 * line, and lines starting with `--` are comments. Each applied migration is
 * recorded in `schema_migrations` (version, name, checksum = sha256 of the
 * file, applied_at); a second run applies nothing, and an applied file whose
 * checksum (or name) changed is refused: write a new migration instead.
 *
 * Migration files are trusted repository content: their statements run as
 * written (no values are interpolated into them).
 *
 * Several processes may start at once on one ClickHouse database (the four
 * roles of `npm run cluster`, replicas behind a balancer), and ClickHouse has
 * neither transactions nor advisory locks. When a statement fails because its
 * object "already exists", a peer is applying the same file: the runner waits
 * for that peer to record the version (same checksum), then counts the file
 * as skipped and goes on; if no peer records it within `peerWaitMs`, the
 * original error is raised. New ClickHouse migrations should still be written
 * with `IF NOT EXISTS`, so a peer that died half way cannot block a restart.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, isRetryable } from '../errors.js';
import { final, sql, type Sql, type SqlDialect } from './sql.js';
import type { MigrationReport, Row } from './store.js';

/** The repository's `sql/` folder (core/store/ -> ../../sql). */
export const DEFAULT_MIGRATIONS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../sql');

/** What an adapter lends the runner. */
export interface MigrationExecutor {
  readonly dialect: SqlDialect;
  /** Runs one trusted statement without a result. */
  exec(statement: string): Promise<void>;
  /** Runs a query built with `sql` and returns plain rows. */
  query(statement: Sql): Promise<Row[]>;
  /**
   * Runs `fn` atomically where the engine can (DuckDB: one transaction per
   * migration, DDL included). ClickHouse has no transactions: omit it.
   */
  transaction?<T>(fn: () => Promise<T>): Promise<T>;
}

export interface MigrationFile {
  version: number;
  name: string;
  /** `NNN_name.sql` */
  file: string;
  checksum: string;
  statements: string[];
}

export interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

const FILE = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/;

const TABLE_DDL: Record<SqlDialect, string> = {
  // ReplacingMergeTree: two processes migrating at once record a version twice; FINAL collapses it.
  clickhouse: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime
) ENGINE = ReplacingMergeTree ORDER BY version`,
  duckdb: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name VARCHAR NOT NULL,
  checksum VARCHAR NOT NULL,
  applied_at TIMESTAMP NOT NULL
)`,
};

/**
 * Splits a migration file into statements: a statement ends at a line whose
 * last non-blank character is `;`; lines starting with `--` are dropped.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const statement = current.join('\n').trim();
    if (statement) statements.push(statement);
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith('--')) continue;
    if (trimmed.endsWith(';')) {
      current.push(line.replace(/;\s*$/, ''));
      flush();
    } else {
      current.push(line);
    }
  }
  flush();
  return statements;
}

export function checksum(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Reads `<root>/<dialect>/*.sql` in version order. */
export async function readMigrations(
  dialect: SqlDialect,
  root: string = DEFAULT_MIGRATIONS_ROOT,
): Promise<MigrationFile[]> {
  const folder = join(root, dialect);
  let entries: string[];
  try {
    entries = await readdir(folder);
  } catch (err) {
    throw new MigrationError(`migrations folder ${folder} cannot be read: ${(err as Error).message}`);
  }
  const files: MigrationFile[] = [];
  for (const file of entries.filter((f) => f.endsWith('.sql')).sort()) {
    const match = FILE.exec(file);
    if (!match) throw new MigrationError(`migration file name must be NNN_name.sql: ${join(folder, file)}`);
    const content = await readFile(join(folder, file));
    files.push({
      version: Number(match[1]),
      name: match[2]!,
      file,
      checksum: checksum(content),
      statements: splitStatements(content.toString('utf8')),
    });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    if (files[i]!.version === files[i - 1]!.version) {
      throw new MigrationError(
        `two migrations share version ${files[i]!.version} in ${folder}: ${files[i - 1]!.file}, ${files[i]!.file}`,
      );
    }
  }
  return files;
}

async function readApplied(executor: MigrationExecutor): Promise<Map<number, AppliedMigration>> {
  const rows = await executor.query(
    sql`SELECT version, name, checksum FROM schema_migrations ${final} ORDER BY version`,
  );
  const applied = new Map<number, AppliedMigration>();
  for (const row of rows) {
    // ClickHouse returns UInt32 as a number; be lenient with strings anyway.
    const version = Number(row.version);
    applied.set(version, { version, name: String(row.name), checksum: String(row.checksum) });
  }
  return applied;
}

function refuseEdited(dialect: SqlDialect, file: MigrationFile, done: AppliedMigration): void {
  if (done.checksum === file.checksum && done.name === file.name) return;
  throw new MigrationError(
    `migration ${file.file} (${dialect}) was applied as ${String(done.version).padStart(3, '0')}_${done.name} with checksum ${done.checksum}, ` +
      `but the file now has checksum ${file.checksum}: applied migrations must not change; add a new migration instead`,
  );
}

/** A statement that failed because its table or column is already there: a peer got to it first. */
const PEER_CONFLICT = /already exists/i;

export interface MigrationOptions {
  /** How long to wait for a peer applying the same file to record it (ms). */
  peerWaitMs?: number;
  /** Poll interval while waiting for the peer (ms). */
  peerPollMs?: number;
}

/**
 * After `err` (a peer conflict), polls `schema_migrations` until a peer records
 * `file`; returns the refreshed applied set, or rethrows `err` at the deadline.
 */
async function awaitPeer(
  executor: MigrationExecutor,
  file: MigrationFile,
  err: MigrationError,
  { peerWaitMs = 60_000, peerPollMs = 200 }: MigrationOptions,
): Promise<Map<number, AppliedMigration>> {
  const deadline = Date.now() + peerWaitMs;
  for (;;) {
    const applied = await readApplied(executor);
    const done = applied.get(file.version);
    if (done) {
      refuseEdited(executor.dialect, file, done);
      return applied;
    }
    if (Date.now() >= deadline) throw err;
    await new Promise((resolve) => setTimeout(resolve, peerPollMs));
  }
}

/** Applies pending migrations in version order; refuses edited applied ones before applying anything. */
export async function runMigrations(
  executor: MigrationExecutor,
  root: string = DEFAULT_MIGRATIONS_ROOT,
  options: MigrationOptions = {},
): Promise<MigrationReport> {
  const files = await readMigrations(executor.dialect, root);
  await executor.exec(TABLE_DDL[executor.dialect]);
  let applied = await readApplied(executor);

  for (const file of files) {
    const done = applied.get(file.version);
    if (done) refuseEdited(executor.dialect, file, done);
  }

  const report: MigrationReport = { applied: [], skipped: [] };
  for (const file of files) {
    if (applied.has(file.version)) {
      report.skipped.push(file.file);
      continue;
    }
    const apply = async () => {
      for (const statement of file.statements) {
        try {
          await executor.exec(statement);
        } catch (err) {
          if (isRetryable(err)) throw err; // engine unavailable: the caller retries the whole run
          throw new MigrationError(
            `migration ${file.file} (${executor.dialect}) failed: ${errorMessage(err)}\n${statement}`,
            { cause: err },
          );
        }
      }
      await executor.exec(
        sql`INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (${file.version}, ${file.name}, ${file.checksum}, ${new Date()})`.render(
          executor.dialect,
        ),
      );
    };
    try {
      if (executor.transaction) await executor.transaction(apply);
      else await apply();
    } catch (err) {
      if (!(err instanceof MigrationError) || !PEER_CONFLICT.test(errorMessage(err.cause))) throw err;
      applied = await awaitPeer(executor, file, err, options);
      report.skipped.push(file.file);
      continue;
    }
    report.applied.push(file.file);
  }
  return report;
}
