/**
 * The CPU pool (core/threads/cpu-pool.ts) on real worker threads: tasks run off the calling thread, which keeps
 * serving its timers; each thread imports a task's module once and runs the warm-ups first, a replacement
 * thread too; an abort stops a running task at once (its thread terminated) and drops a queued one; errors come
 * back with their message. The queue's cancellation through it is in test/contract/queue.contract.test.ts.
 */
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuPool, inlineCpu, type CpuPool } from '../../core/threads/cpu-pool.js';
import { testLogger } from '../helpers/config.js';
import { failTask, spin, spinTask, spinWithProgressTask, warmTask } from '../helpers/cpu-tasks.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Ceiling of "at once" on a loaded machine; a broken abort waits for the whole task (20 s). */
const LATE_MS = 8000;

let pool: CpuPool;

beforeAll(async () => {
  pool = createCpuPool({ threads: 2, logger: testLogger() });
  pool.preload(warmTask, []);
  await pool.ready();
}, 120_000);
afterAll(() => pool?.close());

describe('CPU pool', { timeout: 120_000 }, () => {
  it('runs tasks on its threads, warmed up first, each importing the module once', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => pool.run(spinTask, [20])));
    for (const r of results) {
      expect(r.threadId).not.toBe(threadId);
      expect(r.warm).toBe(true);
      expect(r.loads).toBe(1);
    }
    expect(new Set(results.map((r) => r.threadId)).size).toBeLessThanOrEqual(2);
  });

  it('leaves the calling thread free: its timers keep firing while 2 tasks hold both threads', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      let done = false;
      const jobs = Promise.all([pool.run(spinTask, [2000]), pool.run(spinTask, [2000])]).finally(() => (done = true));
      await sleep(500);
      expect(done).toBe(false);
      // Inline, these tasks would block the loop for 4 s and no tick would fire before they end.
      expect(ticks).toBeGreaterThan(3);
      await jobs;
    } finally {
      clearInterval(timer);
    }
  });

  it('an abort stops a running task at once, with the signal reason; its replacement thread is warm', async () => {
    const progress = new SharedArrayBuffer(4);
    const view = new Int32Array(progress);
    const controller = new AbortController();
    const running = pool.run(spinWithProgressTask, [20_000, progress], controller.signal).catch((e: unknown) => e);
    const t0 = Date.now();
    while (Atomics.load(view, 0) === 0) {
      if (Date.now() - t0 > 60_000) throw new Error('the task never started');
      await sleep(10);
    }
    const reason = new Error('the caller was answered');
    controller.abort(reason);
    const t1 = Date.now();
    expect(await running).toBe(reason);
    expect(Date.now() - t1).toBeLessThan(LATE_MS);
    const at = Atomics.load(view, 0);
    await sleep(300);
    expect(Atomics.load(view, 0)).toBe(at);
    // Both threads (the replacement included) take work again, warmed up.
    const after = await Promise.all([pool.run(spinTask, [200]), pool.run(spinTask, [200])]);
    for (const r of after) expect(r).toMatchObject({ warm: true, loads: 1 });
  });

  it('an abort drops a task still waiting for a thread: it never runs', async () => {
    const progress = new SharedArrayBuffer(4);
    const busy = [pool.run(spinTask, [1500]), pool.run(spinTask, [1500])];
    const controller = new AbortController();
    const queued = pool.run(spinWithProgressTask, [100, progress], controller.signal).catch((e: unknown) => e);
    controller.abort(new Error('gone'));
    expect(await queued).toMatchObject({ message: 'gone' });
    await Promise.all(busy);
    await sleep(200);
    expect(Atomics.load(new Int32Array(progress), 0)).toBe(0);
  });

  it('an already aborted signal rejects without running', async () => {
    await expect(pool.run(spinTask, [10], AbortSignal.abort(new Error('late')))).rejects.toThrow('late');
  });

  it("a task's error comes back with its message", async () => {
    await expect(pool.run(failTask, ['no such page'])).rejects.toThrow('no such page');
  });

  it('inlineCpu runs the same task on the calling thread', async () => {
    expect((await inlineCpu.run(spinTask, [1])).threadId).toBe(threadId);
    expect(spin(1).threadId).toBe(threadId);
  });
});
