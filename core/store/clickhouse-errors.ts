/**
 * How the ClickHouse store reports failures: the server unreachable, a
 * timeout, or a transient server state (too many parts/queries, memory
 * limit, network codes) -> DependencyError (retryable, names CLICKHOUSE_URL);
 * a statement the server rejected -> ClickHouseStatementError with
 * ClickHouse's code and its message without the exception boilerplate.
 */
import { DependencyError, errorMessage } from '../errors.js';
import { MigrationError } from './migrations.js';

/**
 * Server error codes that describe a transient server state, not a bad
 * statement: the work is retried instead of dead-lettered.
 * 159 TIMEOUT_EXCEEDED, 202 TOO_MANY_SIMULTANEOUS_QUERIES, 203 NO_FREE_CONNECTION,
 * 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 241 MEMORY_LIMIT_EXCEEDED,
 * 242 TABLE_IS_READ_ONLY, 252 TOO_MANY_PARTS, 319 UNKNOWN_STATUS_OF_INSERT.
 */
const RETRYABLE_CODES = new Set([159, 202, 203, 209, 210, 241, 242, 252, 319]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/** A statement ClickHouse rejected (not retryable): `code` is ClickHouse's error code. */
export class ClickHouseStatementError extends Error {
  constructor(
    message: string,
    readonly code: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClickHouseStatementError';
  }
}

/** Connection failures and transient server states -> DependencyError; rejected statements -> ClickHouseStatementError. */
export function mapError(err: unknown, operation: string, url: string): Error {
  if (err instanceof DependencyError || err instanceof ClickHouseStatementError || err instanceof MigrationError)
    return err;
  const message = errorMessage(err);
  const code = (err as { code?: unknown })?.code;
  const serverCode = Number(typeof code === 'string' && /^\d+$/.test(code) ? code : /Code: (\d+)/.exec(message)?.[1]);
  if (Number.isFinite(serverCode)) {
    const text = cleanServerMessage(message);
    if (RETRYABLE_CODES.has(serverCode)) {
      return new DependencyError('clickhouse', `${operation} failed (CLICKHOUSE_URL=${url}): ${text}`, { cause: err });
    }
    return new ClickHouseStatementError(`ClickHouse ${operation} failed: ${text}`, serverCode, { cause: err });
  }
  if (
    (typeof code === 'string' && NETWORK_CODES.has(code)) ||
    /socket hang up|Timeout error|ECONNREFUSED|ECONNRESET|aborted|other side closed/i.test(message)
  ) {
    return new DependencyError('clickhouse', `${operation} failed (CLICKHOUSE_URL=${url}): ${message}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(message);
}

/** A message for errors that may carry none (an empty HTTP error body, a bare AggregateError). */
export function describeClickHouseError(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return errorMessage(err) || (typeof code === 'string' ? code : '') || 'an error response without a message';
}

/** "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist., e.what() = DB::Exception" -> "Code: 60. Table x doesn't exist." */
function cleanServerMessage(message: string): string {
  const code = /Code: (\d+)/.exec(message)?.[1];
  let body = message;
  const exception = body.indexOf('DB::Exception: ');
  if (exception >= 0) body = body.slice(exception + 'DB::Exception: '.length);
  const what = body.indexOf(', e.what() = ');
  if (what >= 0) body = body.slice(0, what);
  body = body.trim();
  return code && !body.startsWith('Code:') ? `Code: ${code}. ${body}` : body;
}
