/**
 * Caller side of the BullMQ adapter: one fail-fast Redis connection shared by
 * one `Queue` per job name (`<prefix>:jobs.<name>`) and ONE `QueueEvents` per
 * name whose completed/failed listener settles a jobId -> waiter map (no
 * per-call waitUntilFinished). The job id is chosen and its waiter registered
 * before the job is added, so no event can be missed.
 *
 * Zero retention: jobs are added with removeOnComplete/removeOnFail, and the
 * completed/failed event that carried the result is XDEL'd from the events
 * stream as soon as it is read (batched per tick); a job whose caller gave up
 * is removed if still waiting, and its late terminal event is XDEL'd too.
 * Cancellation (queue.ts): at the deadline, or when the caller's signal
 * aborts (JobCancelledError), a waiting job is removed (counted here, stage
 * waiting); an active one is cancelled in its worker through Redis pub/sub
 * (bullmq-cancellation.ts; the worker counts it, stage running).
 * close() lets callers still waiting get their result (or their deadline),
 * then closes queues and events (the shared connection is the adapter's).
 *
 * Outages fail fast (issue 23): a call while the shared connection is not
 * ready, or whose enqueue fails, is QueueUnavailableError (503
 * `queue_unavailable`) at once; when the connection closes with jobs in
 * flight and is not back within OUTAGE_GRACE_MS, their callers get it too
 * (the job is forgotten like an abandoned one) instead of a 504 at the deadline.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { withTimeout } from '../backoff.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { decodeFailure, queueName, unwrap, type Envelope, type Wrapped } from './bullmq-job-format.js';
import { publishCancellation, type CancelReason } from './bullmq-cancellation.js';
import { JobCancelledError, JobError, JobTimeoutError, QueueUnavailableError } from './queue.js';
import { describeError, reconnectDelay, throttledLog } from './redis-connection.js';

const ADAPTER = 'bullmq';
/** How long a caller that gave up remembers the job id, to XDEL its late terminal event. */
const ABANDONED_TTL_MS = 10 * 60_000;
const ABANDONED_MAX = 100_000;
/** A lost connection back within this long (a blip) does not fail the jobs in flight. */
const OUTAGE_GRACE_MS = 300;

export interface BullMqCallerOptions {
  redisUrl: string;
  prefix: string;
  connectTimeoutMs: number;
  logger: Logger;
  /** Approximate cap of each events stream (see BullMqQueueOptions.eventsMaxLen). */
  eventsMaxLen: number;
  /** Options of every added job (attempts, backoff, zero retention). */
  jobOptions: JobsOptions;
}

interface Waiter {
  name: string;
  deadlineMs: number;
  startedAt: number;
  timer?: NodeJS.Timeout;
  /** The caller's signal and the listener that cancels the job when it aborts. */
  signal?: AbortSignal;
  onCallerGone?: () => void;
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

export class BullMqCallers {
  private readonly callers = new Map<string, Promise<CallerLane>>();
  private readonly readyCallers = new Map<string, CallerLane>();
  /** jobId -> when its caller gave up: its late completed/failed event is deleted on sight. */
  private readonly abandoned = new Map<string, number>();
  private readonly pendingDeletes = new Set<Promise<unknown>>();
  private closing = false;
  private pendingRuns = 0;
  private idleWaiters: (() => void)[] = [];
  private outageCheck?: NodeJS.Timeout;

  constructor(
    private readonly options: BullMqCallerOptions,
    private readonly client: Redis,
    private readonly where: string,
  ) {
    client.on('close', () => {
      if (this.closing || this.outageCheck) return;
      this.outageCheck = setTimeout(() => {
        this.outageCheck = undefined;
        if (this.client.status !== 'ready') this.failInFlight();
      }, OUTAGE_GRACE_MS);
      this.outageCheck.unref();
    });
  }

  /** Adds job `name` and waits for its result until `deadline` (epoch ms; `deadlineMs` as the caller gave it). */
  async run<O>(
    name: string,
    data: unknown,
    deadline: number,
    deadlineMs: number,
    startedAt: number,
    signal?: AbortSignal,
  ): Promise<O> {
    this.pendingRuns++;
    try {
      if (signal?.aborted) throw new JobCancelledError(name);
      if (this.client.status !== 'ready') {
        this.record(name, startedAt, 'failed');
        throw this.unavailable(name, `Redis at ${this.where} is not connected (${this.client.status})`);
      }
      const lane =
        this.readyCallers.get(name) ??
        (await this.caller(name).catch((err: unknown) => {
          this.record(name, startedAt, 'failed');
          throw this.unavailable(name, errorMessage(err), err);
        }));
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.record(name, startedAt, 'timeout');
        throw new JobTimeoutError(name, deadlineMs);
      }
      const jobId = randomUUID();
      return await new Promise<O>((resolve, reject) => {
        const waiter: Waiter = { name, deadlineMs, startedAt, resolve: resolve as (value: unknown) => void, reject };
        waiter.timer = setTimeout(() => this.cancel(lane, jobId, waiter, 'deadline'), remaining);
        if (signal) {
          waiter.signal = signal;
          waiter.onCallerGone = () => this.cancel(lane, jobId, waiter, 'caller_gone');
          signal.addEventListener('abort', waiter.onCallerGone, { once: true });
        }
        // Registered before the add: the result event cannot be missed.
        lane.waiters.set(jobId, waiter);
        const envelope: Envelope = { d: data, dl: deadline, dm: deadlineMs };
        lane.queue.add(name, envelope, { ...this.options.jobOptions, jobId }).catch((err: unknown) => {
          if (lane.waiters.get(jobId) !== waiter) return;
          lane.waiters.delete(jobId);
          clearTimeout(waiter.timer);
          this.record(name, startedAt, 'failed');
          if (err instanceof TypeError) {
            reject(
              new JobError(
                'job_invalid_data',
                `job ${name}: data is not JSON-serialisable: ${errorMessage(err)}`,
                500,
                { job: name },
              ),
            );
            return;
          }
          // The add may have reached Redis before the error: clean up after it.
          this.abandon(jobId);
          reject(this.unavailable(name, `could not enqueue on Redis at ${this.where}: ${describeError(err)}`, err));
        });
      });
    } finally {
      this.pendingRuns--;
      this.checkIdle();
    }
  }

  /** Waits for the runs in flight, deletes the events they read, then closes every lane. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.outageCheck);
    const { logger } = this.options;
    if (this.pendingRuns > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const lanes = await Promise.allSettled([...this.callers.values()]);
    for (const lane of lanes) if (lane.status === 'fulfilled') this.flushDeletes(lane.value);
    await Promise.allSettled([...this.pendingDeletes]);
    await Promise.all(
      lanes.map(async (lane) => {
        if (lane.status !== 'fulfilled') return;
        await lane.value.events
          .close()
          .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'queue events close failed'));
        await lane.value.queue
          .close()
          .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'queue close failed'));
      }),
    );
    this.callers.clear();
    this.readyCallers.clear();
    this.abandoned.clear();
  }

  private unavailable(name: string, reason: string, cause?: unknown): QueueUnavailableError {
    return new QueueUnavailableError(`job ${name}: the queue is unavailable: ${reason}`, { job: name }, { cause });
  }

  /** The connection is lost: every caller still waiting gets QueueUnavailableError now. */
  private failInFlight(): void {
    let failed = 0;
    for (const lane of this.readyCallers.values()) {
      for (const [jobId, waiter] of [...lane.waiters]) {
        this.abandon(jobId);
        const reason = `the connection to Redis at ${this.where} was lost while the job was in flight`;
        this.settle(lane, jobId, waiter, 'failed', this.unavailable(waiter.name, reason));
        failed++;
      }
    }
    if (failed)
      this.options.logger.warn({ jobs: failed }, 'Redis connection lost: jobs in flight answered queue_unavailable');
  }

  private record(name: string, startedAt: number, outcome: 'completed' | 'failed' | 'timeout' | 'cancelled'): void {
    metrics.queueJobs.inc({ adapter: ADAPTER, name, outcome });
    metrics.queueJobSeconds.observe({ adapter: ADAPTER, name }, (performance.now() - startedAt) / 1000);
  }

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
      streams: { events: { maxLen: this.options.eventsMaxLen } },
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
      const lastEventId = await withTimeout(
        ready(),
        connectTimeoutMs,
        () => new Error(`no answer within ${connectTimeoutMs} ms`),
      );
      events = new QueueEvents(qname, {
        connection: {
          url: this.options.redisUrl,
          maxRetriesPerRequest: null,
          retryStrategy: reconnectDelay,
          connectionName: `${prefix}:events:${name}`,
        },
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
      await withTimeout(
        eventsReady.waitUntilReady(),
        connectTimeoutMs,
        () => new Error(`no answer within ${connectTimeoutMs} ms`),
      );
      return lane;
    } catch (err) {
      await Promise.allSettled([events?.close(), queue.close()]);
      throw new DependencyError(
        'REDIS_URL',
        `queue for job ${name} could not reach Redis at ${this.where}: ${describeError(err)}`,
        { cause: err },
      );
    }
  }

  /** The caller has its answer (deadline) or is gone: withdraw the job if waiting, else cancel it in its worker. */
  private cancel(lane: CallerLane, jobId: string, waiter: Waiter, reason: CancelReason): void {
    if (lane.waiters.get(jobId) !== waiter) return;
    // Remember it first: a terminal event racing with the removal is deleted too.
    this.abandon(jobId);
    if (reason === 'deadline')
      this.settle(lane, jobId, waiter, 'timeout', new JobTimeoutError(waiter.name, waiter.deadlineMs));
    else this.settle(lane, jobId, waiter, 'cancelled', new JobCancelledError(waiter.name));
    // Withdraw the job if it has not started (0 = active, i.e. locked, or already gone).
    lane.queue.remove(jobId).then(
      (removed) => {
        if (removed === 1) {
          this.abandoned.delete(jobId);
          metrics.jobsCancelled.inc({ adapter: ADAPTER, job: waiter.name, reason, stage: 'waiting' });
          return;
        }
        // Active (or just finished): its worker aborts it and counts it.
        publishCancellation(this.client, this.options.prefix, waiter.name, jobId, reason).catch((err: unknown) =>
          this.options.logger.debug(
            { job: waiter.name, jobId, err: errorMessage(err) },
            'could not publish a job cancellation; the worker stops it at the deadline',
          ),
        );
      },
      (err: unknown) =>
        this.options.logger.debug(
          { job: waiter.name, jobId, err: errorMessage(err) },
          'could not withdraw a timed-out job',
        ),
    );
  }

  private settle(
    lane: CallerLane,
    jobId: string,
    waiter: Waiter,
    outcome: 'completed' | 'failed' | 'timeout' | 'cancelled',
    err?: Error,
    value?: unknown,
  ): void {
    lane.waiters.delete(jobId);
    clearTimeout(waiter.timer);
    if (waiter.onCallerGone) waiter.signal?.removeEventListener('abort', waiter.onCallerGone);
    this.record(waiter.name, waiter.startedAt, outcome);
    if (err) waiter.reject(err);
    else waiter.resolve(value);
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
      this.options.logger.warn(
        { job: lane.name, events: ids.length, err: errorMessage(err) },
        'could not delete read job events; they stay until the stream is trimmed',
      );
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
