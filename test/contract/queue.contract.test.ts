/**
 * Queue port contract (core/queue/queue.ts): the same suite against the
 * in-process runner and against BullMQ on Redis (REDIS_URL, started by
 * `npm run engines:up`). Every test uses its own job names; the BullMQ suite
 * uses a key prefix of its own and deletes every key under it afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { DependencyError } from '../../core/errors.js';
import { metrics } from '../../core/metrics.js';
import { createBullMqQueue } from '../../core/queue/bullmq-queue.js';
import { createInProcessQueue, inProcessQueueStats } from '../../core/queue/inprocess-queue.js';
import {
  JobCancelledError,
  JobError,
  JobTimeoutError,
  type JobContext,
  type JobQueue,
} from '../../core/queue/queue.js';
import { createCpuPool, type CpuPool } from '../../core/threads/cpu-pool.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { spinWithProgressTask, warmTask } from '../helpers/cpu-tasks.js';

const config = testConfig();
const logger = testLogger();
const PREFIX = uniqueName('qct');
const MAX_ATTEMPTS = 2;
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CRASH_WORKER = fileURLToPath(new URL('./fixtures/queue-crash-worker.ts', import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Slack of the "in time" checks (a deadline rejects, a start-up gives up): wide enough for a machine 5-10x slower
 * than usual (late timers, slow Redis), still far below what broken behaviour takes (a default 30 s timeout, or
 * forever). Timing figures belong to the benches.
 */
const LATE_MS = 10_000;
/** Deadline of jobs whose deadline is not what the test is about: never the reason a test fails on a slow machine. */
const ROOMY_MS = 30_000;

interface AdapterCase {
  name: 'inprocess' | 'bullmq';
  create: () => Promise<JobQueue>;
  /** What of finished jobs is still held: [] when nothing is. `names`: the test's job names, `markers`: strings only its payloads/results contain. */
  retained: (queue: JobQueue, names: string[], markers: string[]) => Promise<string[]>;
}

let redis: Redis | undefined;
const admin = () => {
  if (!redis) {
    redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
    redis.on('error', () => undefined); // commands fail on their own; no unhandled 'error' event noise
  }
  return redis;
};

/** Every key under the prefix with its whole content, whatever its type. */
async function dumpKeys(prefix: string): Promise<Map<string, string>> {
  const client = admin();
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await client.type(key);
      let content: unknown;
      switch (type) {
        case 'string':
          content = await client.get(key);
          break;
        case 'hash':
          content = await client.hgetall(key);
          break;
        case 'list':
          content = await client.lrange(key, 0, -1);
          break;
        case 'set':
          content = await client.smembers(key);
          break;
        case 'zset':
          content = await client.zrange(key, 0, -1, 'WITHSCORES');
          break;
        case 'stream':
          content = await client.xrange(key, '-', '+');
          break;
        case 'none':
          continue;
        default:
          content = `<${type}>`;
      }
      out.set(key, JSON.stringify(content));
    }
  } while (cursor !== '0');
  return out;
}

async function deleteKeys(prefix: string): Promise<void> {
  const client = admin();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.unlink(...keys);
  } while (cursor !== '0');
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

const adapters: AdapterCase[] = [
  {
    name: 'inprocess',
    create: () => createInProcessQueue({ concurrency: 4, maxAttempts: MAX_ATTEMPTS, logger }),
    async retained(queue) {
      const stats = inProcessQueueStats(queue);
      return Object.entries(stats)
        .filter(([, n]) => n !== 0)
        .map(([k, n]) => `${k}=${n}`);
    },
  },
  {
    name: 'bullmq',
    create: () =>
      createBullMqQueue({
        redisUrl: config.REDIS_URL,
        prefix: PREFIX,
        concurrency: 4,
        lockMs: config.JOB_LOCK_MS,
        maxAttempts: MAX_ATTEMPTS,
        connectTimeoutMs: 10000,
        logger,
      }),
    async retained(_queue, names, markers) {
      const found: string[] = [];
      for (const [key, content] of await dumpKeys(PREFIX)) {
        for (const marker of markers) if (content.includes(marker)) found.push(`${key} contains ${marker}`);
        for (const name of names) {
          // A job's own keys: <prefix>:jobs.<name>:<uuid>[:logs|:lock|...]
          if (new RegExp(`^${PREFIX}:jobs\\.${name}:${UUID}`).test(key)) found.push(`job key ${key}`);
          // Terminal events carry results / failure reasons: read ones must be gone.
          if (key === `${PREFIX}:jobs.${name}:events` && /"event","(completed|failed)"/.test(content))
            found.push(`${key} still has completed/failed events`);
        }
      }
      return found;
    },
  },
];

/** jobs_cancelled_total for the labels given (the others summed). */
async function cancelledCount(labels: Record<string, string>): Promise<number> {
  const { values } = await metrics.jobsCancelled.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want))
    .reduce((a, v) => a + v.value, 0);
}

/** A CPU job's progress, ticked by its thread every 10 ms: it stops moving once the thread's work stopped. */
function progressOf(buffer: SharedArrayBuffer): () => number {
  const view = new Int32Array(buffer);
  return () => Atomics.load(view, 0);
}

/** Resolves once `read()` has not changed for `quietMs` (checked every 100 ms, up to `ceilingMs`). */
async function settlesWithin(read: () => number, quietMs: number, ceilingMs: number): Promise<void> {
  const t0 = Date.now();
  let last = read();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() - t0 > ceilingMs) throw new Error(`still moving after ${ceilingMs} ms (at ${read()})`);
    await sleep(100);
    const now = read();
    if (now !== last) [last, since] = [now, Date.now()];
  }
}

async function counterValue(labels: Record<string, string>): Promise<number> {
  const { values } = await metrics.queueJobs.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want))
    .reduce((a, v) => a + v.value, 0);
}

// Deadlines of up to 2 * ROOMY_MS: more than the default 60 s per test.
describe.each(adapters)(
  'queue contract: $name adapter',
  { timeout: 120_000 },
  ({ name: adapter, create, retained }) => {
    let queue: JobQueue;
    /** The CPU pool of the cancellation tests, as the worker role has one (core/threads/cpu-pool.ts). */
    let pool: CpuPool;

    beforeAll(async () => {
      queue = await create();
      pool = createCpuPool({ threads: 2, logger });
      // Warm threads, as the worker role has them before it takes jobs: a cold one could miss the deadlines below.
      pool.preload(warmTask, []);
      await pool.ready();
    }, 120_000);
    afterAll(async () => {
      await pool?.close();
      await queue?.close();
      if (adapter === 'bullmq') await deleteKeys(PREFIX);
    });

    it('answers ping', async () => {
      await expect(queue.ping()).resolves.toBeUndefined();
    });

    it('round-trips an object payload and result', async () => {
      const name = uniqueName('echo');
      const seen: { data: unknown; ctx: Omit<JobContext, 'signal'> }[] = [];
      await queue.process(name, async (data: unknown, ctx) => {
        seen.push({ data, ctx: { jobId: ctx.jobId, attempt: ctx.attempt, deadline: ctx.deadline } });
        return { echo: data, attempt: ctx.attempt, at: new Date(0) };
      });
      const payload = {
        text: 'héllo wörld',
        n: 42,
        f: 1.5,
        nested: { list: [1, 'two', null, { deep: true }] },
        empty: {},
      };
      const before = Date.now();
      const result = await queue.run<typeof payload, unknown>(name, payload, { deadlineMs: ROOMY_MS });
      // JSON semantics under both adapters: a Date comes back as its ISO string.
      expect(result).toEqual({ echo: payload, attempt: 1, at: '1970-01-01T00:00:00.000Z' });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.data).toEqual(payload);
      expect(seen[0]!.ctx.attempt).toBe(1);
      expect(seen[0]!.ctx.jobId).toMatch(/\S/);
      expect(seen[0]!.ctx.deadline).toBeGreaterThanOrEqual(before + ROOMY_MS);
      expect(seen[0]!.ctx.deadline).toBeLessThanOrEqual(Date.now() + ROOMY_MS);
    });

    it('resolves undefined for a handler that returns nothing', async () => {
      const name = uniqueName('void');
      await queue.process(name, async () => undefined);
      await expect(queue.run(name, null, { deadlineMs: ROOMY_MS })).resolves.toBeUndefined();
    });

    it('resolves 200 concurrent runs each with its own result', async () => {
      const name = uniqueName('many');
      await queue.process(
        name,
        async (data: { i: number }) => {
          await sleep(Math.random() * 5);
          return { i: data.i, square: data.i * data.i };
        },
        { concurrency: 16 },
      );
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          queue.run<{ i: number }, { i: number; square: number }>(name, { i }, { deadlineMs: 2 * ROOMY_MS }),
        ),
      );
      results.forEach((r, i) => expect(r).toEqual({ i, square: i * i }));
    });

    it('honours the concurrency limit', async () => {
      const name = uniqueName('limit');
      let active = 0;
      let maxActive = 0;
      await queue.process(
        name,
        async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          // Hold the slot until three ran at once (or a while has passed): on a slow machine a short job could end
          // before the worker fetched the next one, and the limit would never be reached.
          await eventually(
            async () => maxActive,
            (n) => n >= 3,
            5000,
            5,
          ).catch(() => undefined);
          await sleep(40);
          active--;
          return 'ok';
        },
        { concurrency: 3 },
      );
      await Promise.all(Array.from({ length: 24 }, () => queue.run(name, {}, { deadlineMs: ROOMY_MS })));
      expect(maxActive).toBe(3);
    });

    it('starts jobs beyond the limit in FIFO order', async () => {
      const name = uniqueName('fifo');
      const started: number[] = [];
      await queue.process(
        name,
        async (data: { i: number }) => {
          started.push(data.i);
          await sleep(5);
          return data.i;
        },
        { concurrency: 1 },
      );
      await Promise.all(Array.from({ length: 10 }, (_, i) => queue.run(name, { i }, { deadlineMs: ROOMY_MS })));
      expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('propagates a JobError with its code, status and details, without retrying it', async () => {
      const name = uniqueName('coded');
      let calls = 0;
      await queue.process(name, async () => {
        calls++;
        throw new JobError('document_unreadable', 'the document has no text layer', 422, {
          page: 3,
          reasons: ['scan', { dpi: 72 }],
        });
      });
      const err = await queue.run(name, { doc: 1 }, { deadlineMs: ROOMY_MS }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobError);
      expect(err).toMatchObject({
        code: 'document_unreadable',
        message: 'the document has no text layer',
        status: 422,
      });
      expect((err as JobError).details).toEqual({ page: 3, reasons: ['scan', { dpi: 72 }] });
      // A retry would come soon after the failure: give it the time to show (a slow machine can only hide one).
      await sleep(300);
      expect(calls).toBe(1);
    });

    it('rejects a deadline miss with JobTimeoutError in time and aborts the handler', async () => {
      const name = uniqueName('slow');
      let abortReason: unknown;
      let aborted = false;
      let finished = false;
      await queue.process(name, async (_data, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted = ctx.signal.aborted;
        abortReason = ctx.signal.reason;
        await sleep(100);
        finished = true;
        return 'too late';
      });
      // Long enough for the job to have started on a slow machine (else it is withdrawn and the handler never runs).
      const deadlineMs = 3000;
      const t0 = Date.now();
      const err = await queue.run(name, {}, { deadlineMs }).catch((e: unknown) => e);
      const elapsed = Date.now() - t0;
      expect(err).toBeInstanceOf(JobTimeoutError);
      expect(err).toMatchObject({ code: 'job_timeout', status: 504 });
      expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 20);
      // In time: at the deadline, not after some longer timeout (the handler itself never returns unless aborted).
      expect(elapsed).toBeLessThan(deadlineMs + LATE_MS);
      await eventually(
        async () => finished,
        (f) => f,
        ROOMY_MS,
        20,
      );
      expect(aborted).toBe(true);
      expect(abortReason).toMatchObject({ code: 'job_timeout' });
    });

    it('withdraws a job that has not started by its deadline', async () => {
      const name = uniqueName('withdraw');
      const started: string[] = [];
      // The blocker holds the only slot until the test lets it go: the queued job's rejection cannot wait for it.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      await queue.process(
        name,
        async (data: { id: string }) => {
          started.push(data.id);
          if (data.id === 'blocker') await released;
          return data.id;
        },
        { concurrency: 1 },
      );
      const blocker = queue.run(name, { id: 'blocker' }, { deadlineMs: ROOMY_MS });
      await eventually(
        async () => started.length,
        (n) => n === 1,
        ROOMY_MS,
        10,
      );
      const t0 = Date.now();
      const err = await queue.run(name, { id: 'queued' }, { deadlineMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobTimeoutError);
      expect(Date.now() - t0).toBeLessThan(300 + LATE_MS);
      release();
      await expect(blocker).resolves.toBe('blocker');
      // The slot is free again: a later job runs, the withdrawn one never does (jobs start in FIFO order, so had it
      // stayed queued it would have started before this one).
      await expect(queue.run(name, { id: 'after' }, { deadlineMs: ROOMY_MS })).resolves.toBe('after');
      expect(started).toEqual(['blocker', 'after']);
    });

    it('retries a crash: fails on attempt 1, succeeds on attempt 2', async () => {
      const name = uniqueName('flaky');
      const attempts: number[] = [];
      const retriedBefore = await counterValue({ adapter, name, outcome: 'retried' });
      await queue.process(name, async (data: { v: string }, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error('transient crash');
        return { v: data.v, attempt: ctx.attempt };
      });
      await expect(queue.run(name, { v: 'x' }, { deadlineMs: ROOMY_MS })).resolves.toEqual({ v: 'x', attempt: 2 });
      expect(attempts).toEqual([1, 2]);
      expect((await counterValue({ adapter, name, outcome: 'retried' })) - retriedBefore).toBe(1);
    });

    it(`gives up on a handler that always crashes after ${MAX_ATTEMPTS} attempts with job_failed`, async () => {
      const name = uniqueName('broken');
      let calls = 0;
      await queue.process(name, async () => {
        calls++;
        throw new TypeError('always broken: cannot read x');
      });
      const err = await queue.run(name, {}, { deadlineMs: ROOMY_MS }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobError);
      expect(err).toMatchObject({ code: 'job_failed', status: 500 });
      expect((err as Error).message).toContain('always broken: cannot read x');
      expect(calls).toBe(MAX_ATTEMPTS);
    });

    it('waits for a handler registered after run() (within the deadline)', async () => {
      const name = uniqueName('late');
      const pending = queue.run<{ q: number }, number>(name, { q: 7 }, { deadlineMs: ROOMY_MS });
      await sleep(400);
      await queue.process(name, async (data: { q: number }) => data.q * 6);
      await expect(pending).resolves.toBe(42);
    });

    it('aborts a CPU job at its deadline: its thread stops, it is counted, the next job on its lane starts at once', async () => {
      const name = uniqueName('cpu-deadline');
      const progress = new SharedArrayBuffer(4);
      const ticks = progressOf(progress);
      // A concurrency-1 lane: the second job can only start once the first one's slot is free.
      await queue.process(
        name,
        (data: { ms: number; tick: boolean }, ctx) =>
          pool.run(spinWithProgressTask, [data.ms, data.tick ? progress : new SharedArrayBuffer(4)], ctx.signal),
        { concurrency: 1 },
      );
      const before = await cancelledCount({ adapter, job: name, reason: 'deadline', stage: 'running' });
      // Long enough to start on a slow machine; the job itself would run 40 s.
      const deadlineMs = 6000;
      const t0 = Date.now();
      const first = queue.run(name, { ms: 40_000, tick: true }, { deadlineMs }).catch((e: unknown) => e);
      const next = queue.run<unknown, number>(name, { ms: 50, tick: false }, { deadlineMs: ROOMY_MS });
      await eventually(
        async () => ticks(),
        (n) => n > 0,
        ROOMY_MS,
        20,
      );
      expect(await first).toBeInstanceOf(JobTimeoutError);
      // The next job is done well before the first one would have ended (40 s): its slot freed at the abort.
      await next;
      expect(Date.now() - t0).toBeLessThan(deadlineMs + 12_000);
      // The thread's work stopped: the progress counter no longer moves.
      await settlesWithin(ticks, 500, LATE_MS);
      await eventually(
        () => cancelledCount({ adapter, job: name, reason: 'deadline', stage: 'running' }),
        (n) => n === before + 1,
        LATE_MS,
        50,
      );
    });

    it('cancels the job of a caller that is gone: a running one is aborted in its thread, a waiting one withdrawn', async () => {
      const name = uniqueName('cpu-gone');
      const progress = new SharedArrayBuffer(4);
      const ticks = progressOf(progress);
      const starts: number[] = [];
      await queue.process(
        name,
        (data: { i: number }, ctx) => {
          starts.push(data.i);
          return pool.run(spinWithProgressTask, [20_000, progress], ctx.signal);
        },
        { concurrency: 1 },
      );
      const count = (stage: string) => cancelledCount({ adapter, job: name, reason: 'caller_gone', stage });
      const [running0, waiting0] = [await count('running'), await count('waiting')];
      const callers = [new AbortController(), new AbortController()];
      // Deadlines far away: only the callers' signals can stop these jobs in time.
      const runs = callers.map((caller, i) =>
        queue.run(name, { i }, { deadlineMs: 2 * ROOMY_MS, signal: caller.signal }).catch((e: unknown) => e),
      );
      await eventually(
        async () => ticks(),
        (n) => n > 0,
        ROOMY_MS,
        20,
      );
      // The waiting one goes first (else it could start in the slot the running one frees).
      callers[1]!.abort();
      const t0 = Date.now();
      callers[0]!.abort();
      for (const run of runs) expect(await run).toBeInstanceOf(JobCancelledError);
      expect(await runs[0]).toMatchObject({ code: 'job_cancelled' });
      await settlesWithin(ticks, 500, LATE_MS);
      expect(Date.now() - t0).toBeLessThan(LATE_MS);
      await eventually(
        async () => [await count('running'), await count('waiting')],
        ([r, w]) => r === running0 + 1 && w === waiting0 + 1,
        LATE_MS,
        50,
      );
      expect(starts).toEqual([0]);
    });

    it('close() stops taking jobs and lets the in-flight one finish', async () => {
      const own = await create();
      const name = uniqueName('closing');
      let started = false;
      let finished = false;
      await own.process(name, async (data: { v: number }) => {
        started = true;
        await sleep(400);
        finished = true;
        return data.v + 1;
      });
      const inflight = own.run<{ v: number }, number>(name, { v: 1 }, { deadlineMs: ROOMY_MS });
      await eventually(
        async () => started,
        (s) => s,
        ROOMY_MS,
        10,
      );
      const closed = own.close();
      await expect(own.run(name, { v: 2 }, { deadlineMs: 1000 })).rejects.toMatchObject({
        code: 'queue_closed',
        status: 503,
      });
      await closed;
      expect(finished).toBe(true);
      await expect(inflight).resolves.toBe(2);
    });

    it('retains nothing of finished jobs (payload, result, failure reason)', async () => {
      const tag = uniqueName('pii');
      const m = {
        data: `${tag}-data`,
        result: `${tag}-result`,
        detail: `${tag}-detail`,
        crash: `${tag}-crash`,
        late: `${tag}-late`,
      };
      const ok = uniqueName('keep_ok');
      const coded = uniqueName('keep_coded');
      const flaky = uniqueName('keep_flaky');
      const late = uniqueName('keep_late');
      const orphan = uniqueName('keep_orphan');
      let lateDone = false;
      await queue.process(ok, async (data: { secret: string }) => ({ secret: m.result, echo: data.secret }));
      await queue.process(coded, async () => {
        throw new JobError('rejected', 'rejected input', 400, { field: m.detail });
      });
      await queue.process(flaky, async (_d, ctx) => {
        if (ctx.attempt === 1) throw new Error(`crash carrying ${m.crash}`);
        return { secret: m.result };
      });
      // Produces its result only after its deadline (3 s: long enough for it to have started on a slow machine).
      await queue.process(late, async (_d, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        await sleep(100);
        lateDone = true;
        return { secret: m.late };
      });
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          queue.run<{ secret: string }, { secret: string; echo: string }>(
            ok,
            { secret: m.data },
            { deadlineMs: ROOMY_MS },
          ),
        ),
      );
      results.forEach((r) => expect(r).toEqual({ secret: m.result, echo: m.data }));
      await expect(queue.run(coded, { secret: m.data }, { deadlineMs: ROOMY_MS })).rejects.toMatchObject({
        code: 'rejected',
        details: { field: m.detail },
      });
      await expect(queue.run(flaky, { secret: m.data }, { deadlineMs: ROOMY_MS })).resolves.toEqual({
        secret: m.result,
      });
      await expect(queue.run(late, { secret: m.data }, { deadlineMs: 3000 })).rejects.toBeInstanceOf(JobTimeoutError);
      // Never picked up (no handler for it): withdrawn at its deadline.
      await expect(queue.run(orphan, { secret: m.data }, { deadlineMs: 300 })).rejects.toBeInstanceOf(JobTimeoutError);
      await eventually(
        async () => lateDone,
        (d) => d,
        ROOMY_MS,
        20,
      );
      const left = await eventually(
        () => retained(queue, [ok, coded, flaky, late, orphan], Object.values(m)),
        (found) => found.length === 0,
        ROOMY_MS,
        100,
      ).catch((e: unknown) => e);
      expect(left).toEqual([]);
    });
  },
);

describe('queue contract: bullmq only', () => {
  afterAll(async () => {
    await deleteKeys(PREFIX);
    await redis?.quit();
  });

  it('picks up the job of a worker process that died mid-job (after its lock expired)', async () => {
    const lockMs = 1500;
    const name = uniqueName('crash');
    const caller = await createBullMqQueue({
      redisUrl: config.REDIS_URL,
      prefix: PREFIX,
      concurrency: 1,
      lockMs,
      maxAttempts: 2,
      connectTimeoutMs: 10000,
      logger,
    });
    let child: ChildProcess | undefined;
    try {
      let out = '';
      let err = '';
      child = spawn(process.execPath, ['--import', 'tsx', CRASH_WORKER], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          REDIS_URL: config.REDIS_URL,
          QUEUE_PREFIX: PREFIX,
          JOB_NAME: name,
          JOB_LOCK_MS: String(lockMs),
          JOB_MAX_ATTEMPTS: '2',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child!.once('exit', (code, signal) => resolve(signal ?? code)),
      );
      await eventually(
        async () => out.includes('ready') || child!.exitCode !== null || child!.signalCode !== null,
        (done) => done,
        90_000,
        50,
      ).catch(() => undefined);
      expect(out, `worker did not start: ${err}`).toContain('ready');

      const result = caller.run<{ n: number }, { attempt: number; by: string }>(name, { n: 1 }, { deadlineMs: 60_000 });
      await expect(exited).resolves.toBe('SIGKILL');
      expect(out).toMatch(new RegExp(`picked ${UUID} 1`));

      // A second worker, registered only now, completes the same job once the dead worker's lock expired.
      const t0 = Date.now();
      await caller.process(name, async (_d, ctx) => ({ attempt: ctx.attempt, by: 'test' }));
      await expect(result).resolves.toEqual({ attempt: 2, by: 'test' });
      // Once the lock expired (the stalled check runs every lockMs): a few lockMs and a slow machine's slack, well
      // below BullMQ's default 30 s stalled interval, which a lock setting that did not reach the check would take.
      expect(Date.now() - t0).toBeLessThan(lockMs * 4 + LATE_MS);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await caller.close();
    }
  }, 240_000);

  it('rejects start-up against a Redis that refuses connections, naming REDIS_URL', async () => {
    const connectTimeoutMs = 2000;
    const t0 = Date.now();
    const err = await createBullMqQueue({
      redisUrl: 'redis://127.0.0.1:1',
      prefix: PREFIX,
      concurrency: 1,
      lockMs: 30000,
      maxAttempts: 2,
      connectTimeoutMs,
      logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect((err as Error).message).toMatch(/REDIS_URL/);
    expect((err as Error).message).toMatch(/127\.0\.0\.1:1/);
    expect(Date.now() - t0).toBeLessThan(connectTimeoutMs + LATE_MS);
  });

  it('rejects start-up against a Redis that accepts but never answers, within connectTimeoutMs', async () => {
    // A TCP server that accepts connections and stays silent: the connection hangs.
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const connectTimeoutMs = 1500;
      const t0 = Date.now();
      const err = await createBullMqQueue({
        redisUrl: `redis://127.0.0.1:${port}`,
        prefix: PREFIX,
        concurrency: 1,
        lockMs: 30000,
        maxAttempts: 2,
        connectTimeoutMs,
        logger,
      }).catch((e: unknown) => e);
      const elapsed = Date.now() - t0;
      expect(err).toBeInstanceOf(DependencyError);
      expect((err as Error).message).toMatch(/REDIS_URL/);
      expect(elapsed).toBeGreaterThanOrEqual(connectTimeoutMs - 50);
      expect(elapsed).toBeLessThan(connectTimeoutMs + LATE_MS);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
