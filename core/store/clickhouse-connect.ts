/**
 * Start-up of the ClickHouse store: within connectTimeoutMs the server must
 * answer a ping (retried with backoff: it may still be starting), then the
 * database is created if missing and the server's time zone is read (a
 * warning when it is not UTC: DateTime values would be read in that zone).
 * Past the deadline, or when the server is unreachable, start-up fails with a
 * DependencyError naming CLICKHOUSE_URL and the last error seen; a rejected
 * statement fails as the statement error. The admin client used here is
 * closed either way.
 */
import { createClient } from '@clickhouse/client';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { describeClickHouseError, mapError } from './clickhouse-errors.js';

/** What createClient takes, with the URL the messages name. */
export type ClickHouseClientOptions = NonNullable<Parameters<typeof createClient>[0]> & { url: string };

export interface ClickHouseServerInfo {
  /** The server runs on UTC (DateTime values are then written and read as UTC). */
  serverUtc: boolean;
}

export async function connectClickHouse(
  clientOptions: ClickHouseClientOptions,
  database: string,
  connectTimeoutMs: number,
  log: Logger,
): Promise<ClickHouseServerInfo> {
  const { url } = clientOptions;
  let serverUtc = false;
  const admin = createClient(clientOptions);
  let lastError: unknown;
  try {
    await withDeadline(connectTimeoutMs, async (signal) => {
      for (let attempt = 0; !signal.aborted; attempt++) {
        const ping = await admin.ping({ select: false, abort_signal: signal });
        if (ping.success) {
          lastError = undefined;
          break;
        }
        if (signal.aborted) break; // the deadline's own abort is no answer from the server
        lastError = ping.error;
        await sleep(Math.min(100 * 2 ** attempt, 1000), signal);
      }
      if (lastError !== undefined || signal.aborted) throw lastError ?? new Error('no answer');
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}`, abort_signal: signal });
      const rs = await admin.query({
        query: 'SELECT timezone() AS tz, version() AS version',
        format: 'JSONEachRow',
        abort_signal: signal,
      });
      const [info] = await rs.json<{ tz: string; version: string }>();
      serverUtc = info?.tz === 'UTC' || info?.tz === 'Etc/UTC';
      if (info && info.tz !== 'UTC' && info.tz !== 'Etc/UTC') {
        log.warn(
          { timezone: info.tz },
          "ClickHouse server time zone is not UTC: declare DateTime columns as DateTime('UTC') or run the server on UTC",
        );
      }
      log.info({ url, database, version: info?.version }, 'clickhouse store connected');
    });
  } catch (err) {
    metrics.storeErrors.inc({ adapter: 'clickhouse', operation: 'connect' });
    const mapped = mapError(err, 'start-up', url);
    if (mapped instanceof DependencyError || isDeadline(err)) {
      throw new DependencyError(
        'clickhouse',
        `CLICKHOUSE_URL=${url} did not answer within ${connectTimeoutMs} ms: ${
          isDeadline(err)
            ? `timed out${lastError !== undefined ? ` (last error: ${describeClickHouseError(lastError)})` : ''}`
            : errorMessage(err)
        }`,
        { cause: lastError ?? err },
      );
    }
    throw mapped;
  } finally {
    await admin.close().catch(() => undefined);
  }
  return { serverUtc };
}

class DeadlineError extends Error {}
const isDeadline = (err: unknown) => err instanceof DeadlineError;

/** Runs fn with an AbortSignal that fires after ms; rejects with DeadlineError then, whatever fn does. */
async function withDeadline<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeadlineError(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
