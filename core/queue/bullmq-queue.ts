/**
 * BullMQ adapter of the queue port (see queue.ts), following BullMQ's
 * production guide:
 *  - start-up checks that Redis answers within `connectTimeoutMs` (and warns
 *    when maxmemory-policy is not `noeviction`), else DependencyError naming
 *    REDIS_URL: it never hangs;
 *  - caller side: one fail-fast connection (enableOfflineQueue false) shared by
 *    one `Queue` per job name (`<prefix>:jobs.<name>`), and ONE `QueueEvents`
 *    per name whose completed/failed listener settles a jobId -> waiter map
 *    (no per-call waitUntilFinished). The job id is chosen and its waiter
 *    registered before the job is added, so no event can be missed;
 *  - zero retention: jobs are added with removeOnComplete/removeOnFail, and
 *    the completed/failed event that carried the result to the caller is
 *    XDEL'd from the events stream as soon as it is read (batched per tick);
 *    a job whose caller gave up is removed if still waiting, and its late
 *    terminal event is XDEL'd too; a worker never writes a result produced
 *    after the caller's deadline (it reports job_timeout instead);
 *  - worker side: one `Worker` per name (its own connections,
 *    maxRetriesPerRequest null), lockDuration = lockMs and the stalled check
 *    every lockMs, so the job of a worker process that died is picked up
 *    again after its lock expires; `ctx.attempt` counts starts (a crash and a
 *    dead worker both count), capped at maxAttempts;
 *  - errors: a coded error (JobError, or a non-retryable AppError) becomes an
 *    UnrecoverableError whose message carries JSON {code,message,status,
 *    details} (not retried); the caller parses it back into a JobError. An
 *    uncoded error is retried by BullMQ (attempts, short exponential backoff)
 *    and finally reaches the caller as JobError `job_failed`;
 *  - close(): workers finish in-flight jobs, callers still waiting get their
 *    result (or their deadline), then queues, events and connections close.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { withTimeout } from '../backoff.js';
import { AppError, DependencyError, errorMessage, isRetryable } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { JobError, JobTimeoutError, type JobHandler, type JobQueue, type ProcessOptions, type RunOptions } from './queue.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** Redis key prefix (QUEUE_PREFIX). */
  prefix: string;
  /** Default worker concurrency per job name (JOB_CONCURRENCY). */
  concurrency: number;
  /** Job lock (JOB_LOCK_MS): a dead worker's job is retried after it expires. */
  lockMs: number;
  /** Attempts for a job whose handler crashed or whose worker died (JOB_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** How long start-up (and ping) waits for Redis to answer. */
  connectTimeoutMs: number;
  logger: Logger;
  /**
   * Approximate cap of each events stream (BullMQ default 10 000). Results do
   * not depend on it for deletion (they are XDEL'd once read); it bounds the
   * payload-free bookkeeping events and any event whose caller process died.
   * It must stay well above the events produced between two reads of a
   * QueueEvents (about 4 per job), or a caller could miss its result.
   */
  eventsMaxLen?: number;
  /** First retry delay after a crash (exponential). Default 100 ms. */
  retryBackoffMs?: number;
}

const ADAPTER = 'bullmq';
/** setTimeout's limit (about 24.8 days). */
const MAX_DEADLINE_MS = 2_147_483_647;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Marks a failedReason that carries a coded error as JSON. */
const CODED_PREFIX = 'x402-job-error:';
/** How long a caller that gave up remembers the job id, to XDEL its late terminal event. */
const ABANDONED_TTL_MS = 10 * 60_000;
const ABANDONED_MAX = 100_000;

/** What a job carries in Redis: the caller's data and deadline. */
interface Envelope {
  d: unknown;
  /** Caller's deadline, epoch ms. */
  dl: number;
  /** Caller's deadline as given, ms (for the error message). */
  dm: number;
}

/** The handler's result, wrapped so that `undefined` survives JSON. */
interface Wrapped {
  v?: unknown;
}

interface Waiter {
  name: string;
  deadlineMs: number;
  startedAt: number;
  timer?: NodeJS.Timeout;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface CallerLane {
  name: string;
  queue: Queue<Envelope, Wrapped>;
  events: QueueEvents;
  eventsKey: string;
  waiters: Map<string, Waiter>;
  /** Stream ids of read completed/failed events, deleted on the next tick. */
  toDelete: string[];
}

export async function createBullMqQueue(options: BullMqQueueOptions): Promise<JobQueue> {
  const { redisUrl, connectTimeoutMs, logger } = options;
  for (const key of ['concurrency', 'lockMs', 'maxAttempts', 'connectTimeoutMs'] as const) {
    if (!Number.isInteger(options[key]) || options[key] < 1) throw new Error(`bullmq queue: ${key} must be a positive integer, got ${options[key]}`);
  }
  const where = redactUrl(redisUrl);
  let lastError: unknown;
  // The caller side's connection: fail fast (no offline queue, few retries)
  // so an enqueue during an outage errors at once instead of piling up.
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 2,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    connectionName: `${options.prefix}:caller`,
  });
  const onError = throttledLog(logger, 'Redis connection error (caller side)');
  client.on('error', (err) => {
    lastError = err;
    onError(err);
  });
  let info: string;
  try {
    info = await withTimeout(
      client.connect().then(() => client.info('memory')),
      connectTimeoutMs,
      () => new Error(`no answer within ${connectTimeoutMs} ms`),
    );
  } catch (err) {
    client.disconnect();
    throw new DependencyError('REDIS_URL', `Redis at ${where} is unreachable or did not answer within ${connectTimeoutMs} ms: ${describeError(lastError ?? err)}`, { cause: lastError ?? err });
  }
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy !== 'noeviction') {
    logger.warn({ redis: where, maxmemory_policy: policy ?? 'unknown' }, 'Redis maxmemory-policy is not noeviction: Redis may evict queued jobs under memory pressure');
  }
  return new BullMqQueue(options, client, where);
}

class BullMqQueue implements JobQueue {
  readonly adapter = ADAPTER;
  private readonly callers = new Map<string, Promise<CallerLane>>();
  private readonly readyCallers = new Map<string, CallerLane>();
  private readonly workers = new Map<string, Worker<Envelope, Wrapped>>();
  /** jobId -> when its caller gave up: its late completed/failed event is deleted on sight. */
  private readonly abandoned = new Map<string, number>();
  private readonly pendingDeletes = new Set<Promise<unknown>>();
  private closing = false;
  private closed?: Promise<void>;
  private pendingRuns = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly eventsMaxLen: number;
  private readonly jobOptions: JobsOptions;

  constructor(
    private readonly options: BullMqQueueOptions,
    private readonly client: Redis,
    private readonly where: string,
  ) {
    this.eventsMaxLen = options.eventsMaxLen ?? 2000;
    this.jobOptions = {
      attempts: options.maxAttempts,
      backoff: { type: 'exponential', delay: options.retryBackoffMs ?? 100 },
      removeOnComplete: true,
      removeOnFail: true,
    };
  }

  async process<I, O>(name: string, handler: JobHandler<I, O>, processOptions?: ProcessOptions): Promise<void> {
    if (this.closing) throw closedError();
    assertName(name);
    if (this.workers.has(name)) throw new Error(`bullmq queue: a handler for job ${name} is already registered`);
    const concurrency = processOptions?.concurrency ?? this.options.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`bullmq queue: concurrency must be a positive integer, got ${concurrency}`);
    const { logger, lockMs, maxAttempts } = this.options;

    // Two parameters on purpose: a processor that takes BullMQ's cancel signal
    // costs an AbortController and a listener per job; the port has no
    // cancellation besides the deadline.
    const processor = async (job: Job<Envelope, Wrapped>): Promise<Wrapped> => {
      const { d: data, dl: deadline, dm: deadlineMs } = job.data;
      // The caller gave up: skip the work, report a payload-free timeout.
      if (!(Date.now() < deadline)) throw codedFailure(new JobTimeoutError(name, deadlineMs));
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new JobTimeoutError(name, deadlineMs)), deadline - Date.now());
      // attemptsStarted counts every start, including one whose worker died.
      const attempt = Math.max(1, job.attemptsStarted || job.attemptsMade + 1);
      let result: O;
      try {
        result = await handler(data as I, { jobId: job.id ?? '', attempt, deadline, signal: controller.signal });
      } catch (err) {
        if (!(Date.now() < deadline)) throw codedFailure(new JobTimeoutError(name, deadlineMs));
        const coded = codedError(err);
        if (coded) throw codedFailure(coded);
        const crash = err instanceof Error ? err : new Error(String(err));
        const willRetry = job.attemptsMade + 1 < (job.opts.attempts ?? 1) && attempt < maxAttempts;
        if (willRetry) metrics.queueJobs.inc({ adapter: ADAPTER, name, outcome: 'retried' });
        logger.warn({ job: name, jobId: job.id, attempt, err: crash.message, retry: willRetry }, willRetry ? 'job crashed; retrying' : 'job crashed');
        throw crash;
      } finally {
        clearTimeout(timer);
      }
      // A result produced after the deadline has no reader: never write it.
      if (!(Date.now() < deadline)) throw codedFailure(new JobTimeoutError(name, deadlineMs));
      return { v: result };
    };

    const worker = new Worker<Envelope, Wrapped>(queueName(name), processor, {
      connection: { url: this.options.redisUrl, maxRetriesPerRequest: null, connectionName: `${this.options.prefix}:worker:${name}` },
      prefix: this.options.prefix,
      concurrency,
      lockDuration: lockMs,
      stalledInterval: lockMs,
      // A dead worker's job is started again while attempts remain...
      maxStalledCount: Math.max(0, maxAttempts - 1),
      // ...and no job starts more than maxAttempts times, crash or stall.
      maxStartedAttempts: maxAttempts,
      // Safety net for jobs added without the options run() sets.
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
      autorun: true,
    });
    const onError = throttledLog(logger, `BullMQ worker error (job ${name})`);
    worker.on('error', onError);
    this.workers.set(name, worker);
    try {
      await withTimeout(worker.waitUntilReady(), this.options.connectTimeoutMs, () => new Error(`no answer within ${this.options.connectTimeoutMs} ms`));
    } catch (err) {
      this.workers.delete(name);
      await withTimeout(worker.close(true), 2000, () => new Error('close timed out')).catch(() => undefined);
      throw new DependencyError('REDIS_URL', `worker for job ${name} could not reach Redis at ${this.where}: ${describeError(err)}`, { cause: err });
    }
  }

  async run<I, O>(name: string, data: I, options: RunOptions): Promise<O> {
    if (this.closing) throw closedError();
    assertName(name);
    const deadlineMs = options?.deadlineMs;
    if (typeof deadlineMs !== 'number' || !Number.isFinite(deadlineMs) || deadlineMs <= 0 || deadlineMs > MAX_DEADLINE_MS) {
      throw new Error(`deadlineMs must be a positive number of ms (at most 2^31-1), got ${String(deadlineMs)}`);
    }
    const startedAt = performance.now();
    const deadline = Date.now() + deadlineMs;
    this.pendingRuns++;
    try {
      const lane = this.readyCallers.get(name) ?? (await this.caller(name));
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.record(name, startedAt, 'timeout');
        throw new JobTimeoutError(name, deadlineMs);
      }
      const jobId = randomUUID();
      return await new Promise<O>((resolve, reject) => {
        const waiter: Waiter = { name, deadlineMs, startedAt, resolve: resolve as (value: unknown) => void, reject };
        waiter.timer = setTimeout(() => this.onDeadline(lane, jobId, waiter), remaining);
        // Registered before the add: the result event cannot be missed.
        lane.waiters.set(jobId, waiter);
        const envelope: Envelope = { d: data, dl: deadline, dm: deadlineMs };
        lane.queue.add(name, envelope, { ...this.jobOptions, jobId }).catch((err: unknown) => {
          if (lane.waiters.get(jobId) !== waiter) return;
          lane.waiters.delete(jobId);
          clearTimeout(waiter.timer);
          this.record(name, startedAt, 'failed');
          if (err instanceof TypeError) {
            reject(new JobError('job_invalid_data', `job ${name}: data is not JSON-serialisable: ${errorMessage(err)}`, 500, { job: name }));
            return;
          }
          // The add may have reached Redis before the error: clean up after it.
          this.abandon(jobId);
          reject(new DependencyError('REDIS_URL', `could not enqueue job ${name} on Redis at ${this.where}: ${describeError(err)}`, { cause: err }));
        });
      });
    } finally {
      this.pendingRuns--;
      this.checkIdle();
    }
  }

  async ping(): Promise<void> {
    try {
      await withTimeout(this.client.ping(), this.options.connectTimeoutMs, () => new Error(`no answer within ${this.options.connectTimeoutMs} ms`));
    } catch (err) {
      throw new DependencyError('REDIS_URL', `Redis at ${this.where} did not answer: ${describeError(err)}`, { cause: err });
    }
  }

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    const { logger } = this.options;
    // Workers finish their in-flight jobs (and stop taking new ones).
    await Promise.all([...this.workers.values()].map((w) => w.close().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'worker close failed'))));
    this.workers.clear();
    // Callers still waiting get their result, or their deadline, whichever comes first.
    if (this.pendingRuns > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const lanes = await Promise.allSettled([...this.callers.values()]);
    for (const lane of lanes) if (lane.status === 'fulfilled') this.flushDeletes(lane.value);
    await Promise.allSettled([...this.pendingDeletes]);
    await Promise.all(
      lanes.map(async (lane) => {
        if (lane.status !== 'fulfilled') return;
        await lane.value.events.close().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'queue events close failed'));
        await lane.value.queue.close().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'queue close failed'));
      }),
    );
    this.callers.clear();
    this.readyCallers.clear();
    this.abandoned.clear();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  // ------------------------------------------------------------ caller side

  private caller(name: string): Promise<CallerLane> {
    let lane = this.callers.get(name);
    if (!lane) {
      lane = this.createCaller(name);
      this.callers.set(name, lane);
      lane.then(
        (ready) => this.readyCallers.set(name, ready),
        () => this.callers.delete(name),
      );
    }
    return lane;
  }

  private async createCaller(name: string): Promise<CallerLane> {
    const { prefix, logger, connectTimeoutMs } = this.options;
    const qname = queueName(name);
    const queue = new Queue<Envelope, Wrapped>(qname, {
      connection: this.client,
      prefix,
      streams: { events: { maxLen: this.eventsMaxLen } },
    });
    queue.on('error', throttledLog(logger, `BullMQ queue error (job ${name})`));
    let events: QueueEvents | undefined;
    try {
      const eventsKey = queue.keys.events;
      if (!eventsKey) throw new Error(`no events key for queue ${qname}`);
      const ready = async () => {
        await queue.waitUntilReady();
        // Writes the queue meta (events maxLen) before the first add.
        await queue.getVersion();
        // Read from the current end of the stream on: no event of a job added
        // from now on can be missed, whenever the XREAD loop starts.
        const last = await this.client.xrevrange(eventsKey, '+', '-', 'COUNT', 1);
        return last[0]?.[0] ?? '0-0';
      };
      const lastEventId = await withTimeout(ready(), connectTimeoutMs, () => new Error(`no answer within ${connectTimeoutMs} ms`));
      events = new QueueEvents(qname, {
        connection: { url: this.options.redisUrl, maxRetriesPerRequest: null, connectionName: `${prefix}:events:${name}` },
        prefix,
        lastEventId,
        autorun: true,
      });
      events.on('error', throttledLog(logger, `BullMQ queue events error (job ${name})`));
      const lane: CallerLane = { name, queue, events, eventsKey, waiters: new Map(), toDelete: [] };
      events.on('completed', ({ jobId, returnvalue }, id) => {
        const waiter = lane.waiters.get(jobId);
        if (waiter) {
          this.deleteEvent(lane, id);
          this.settle(lane, jobId, waiter, 'completed', undefined, unwrap(returnvalue));
        } else if (this.abandoned.delete(jobId)) {
          this.deleteEvent(lane, id);
        }
      });
      events.on('failed', ({ jobId, failedReason }, id) => {
        const waiter = lane.waiters.get(jobId);
        if (waiter) {
          this.deleteEvent(lane, id);
          this.settle(lane, jobId, waiter, 'failed', decodeFailure(name, waiter.deadlineMs, failedReason));
        } else if (this.abandoned.delete(jobId)) {
          this.deleteEvent(lane, id);
        }
      });
      const eventsReady = events;
      await withTimeout(eventsReady.waitUntilReady(), connectTimeoutMs, () => new Error(`no answer within ${connectTimeoutMs} ms`));
      return lane;
    } catch (err) {
      await Promise.allSettled([events?.close(), queue.close()]);
      throw new DependencyError('REDIS_URL', `queue for job ${name} could not reach Redis at ${this.where}: ${describeError(err)}`, { cause: err });
    }
  }

  private onDeadline(lane: CallerLane, jobId: string, waiter: Waiter): void {
    if (lane.waiters.get(jobId) !== waiter) return;
    // Remember it first: a terminal event racing with the removal is deleted too.
    this.abandon(jobId);
    this.settle(lane, jobId, waiter, 'timeout', new JobTimeoutError(waiter.name, waiter.deadlineMs));
    // Withdraw the job if it has not started (0 = active, i.e. locked, or already gone).
    lane.queue.remove(jobId).then(
      (removed) => {
        if (removed === 1) this.abandoned.delete(jobId);
      },
      (err: unknown) => this.options.logger.debug({ job: waiter.name, jobId, err: errorMessage(err) }, 'could not withdraw a timed-out job'),
    );
  }

  private settle(lane: CallerLane, jobId: string, waiter: Waiter, outcome: 'completed' | 'failed' | 'timeout', err?: Error, value?: unknown): void {
    lane.waiters.delete(jobId);
    clearTimeout(waiter.timer);
    this.record(waiter.name, waiter.startedAt, outcome);
    if (err) waiter.reject(err);
    else waiter.resolve(value);
  }

  private record(name: string, startedAt: number, outcome: 'completed' | 'failed' | 'timeout'): void {
    metrics.queueJobs.inc({ adapter: ADAPTER, name, outcome });
    metrics.queueJobSeconds.observe({ adapter: ADAPTER, name }, (performance.now() - startedAt) / 1000);
  }

  private abandon(jobId: string): void {
    const now = Date.now();
    this.abandoned.set(jobId, now);
    // Forget the oldest ones (insertion order) once expired or too many.
    for (const [id, since] of this.abandoned) {
      if (now - since < ABANDONED_TTL_MS && this.abandoned.size <= ABANDONED_MAX) break;
      this.abandoned.delete(id);
    }
  }

  /** Deletes a read completed/failed event from the stream; batched into one XDEL per lane and tick. */
  private deleteEvent(lane: CallerLane, id: string): void {
    lane.toDelete.push(id);
    if (lane.toDelete.length === 1) setImmediate(() => this.flushDeletes(lane));
  }

  private flushDeletes(lane: CallerLane): void {
    if (lane.toDelete.length === 0) return;
    const ids = lane.toDelete;
    lane.toDelete = [];
    const done = this.client.xdel(lane.eventsKey, ...ids).catch((err: unknown) => {
      this.options.logger.warn({ job: lane.name, events: ids.length, err: errorMessage(err) }, 'could not delete read job events; they stay until the stream is trimmed');
    });
    this.pendingDeletes.add(done);
    void done.finally(() => this.pendingDeletes.delete(done));
  }

  private checkIdle(): void {
    if (!this.closing || this.pendingRuns > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function queueName(name: string): string {
  return `jobs.${name}`;
}

/** A handler's deliberate failure (JobError, or a non-retryable AppError) as the caller sees it. */
function codedError(err: unknown): JobError | undefined {
  if (err instanceof JobError) return err;
  if (err instanceof AppError && !isRetryable(err)) return new JobError(err.code, err.message, err.status, err.details);
  return undefined;
}

function codedFailure(err: JobError): UnrecoverableError {
  return new UnrecoverableError(CODED_PREFIX + JSON.stringify({ code: err.code, message: err.message, status: err.status, details: err.details }));
}

function decodeFailure(name: string, deadlineMs: number, failedReason: string | undefined): JobError {
  const reason = failedReason ?? 'unknown error';
  if (reason.startsWith(CODED_PREFIX)) {
    try {
      const parsed = JSON.parse(reason.slice(CODED_PREFIX.length)) as { code?: unknown; message?: unknown; status?: unknown; details?: unknown };
      if (typeof parsed.code === 'string' && typeof parsed.message === 'string') {
        if (parsed.code === 'job_timeout') return new JobTimeoutError(name, deadlineMs);
        const status = typeof parsed.status === 'number' ? parsed.status : 500;
        const details = parsed.details && typeof parsed.details === 'object' ? (parsed.details as Record<string, unknown>) : {};
        return new JobError(parsed.code, parsed.message, status, details);
      }
    } catch {
      // Not ours after all: an uncoded failure.
    }
  }
  return new JobError('job_failed', `job ${name} failed: ${reason}`, 500, { job: name });
}

function unwrap(returnvalue: unknown): unknown {
  return returnvalue !== null && typeof returnvalue === 'object' && 'v' in returnvalue ? (returnvalue as Wrapped).v : undefined;
}

function closedError(): JobError {
  return new JobError('queue_closed', 'job queue is closed', 503);
}

function assertName(name: string): void {
  if (typeof name !== 'string' || !NAME_RE.test(name)) throw new Error(`job name must match ${NAME_RE}, got ${JSON.stringify(name)}`);
}

/** The URL without credentials, for messages and logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username) u.username = '***';
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

/** Node's connection errors are sometimes AggregateErrors with an empty message. */
function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map(describeError).join('; ');
  if (err instanceof Error) return err.message || (err as { code?: string }).code || err.name;
  return String(err);
}

/** Logs an error at most once per 5 s per source (a down Redis emits one per reconnect attempt). */
function throttledLog(logger: Logger, message: string): (err: Error) => void {
  let last = 0;
  let suppressed = 0;
  return (err: Error) => {
    const now = Date.now();
    if (now - last < 5000) {
      suppressed++;
      return;
    }
    last = now;
    logger.warn({ err: describeError(err), suppressed }, message);
    suppressed = 0;
  };
}
