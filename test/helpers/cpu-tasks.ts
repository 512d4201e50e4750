/**
 * CPU tasks for the pool and queue tests (core/threads/cpu-pool.ts): a busy loop that blocks its thread as a
 * real scrub does, and what a thread can tell about itself (which thread, how often this module was loaded).
 */
import { threadId } from 'node:worker_threads';
import { cpuTask } from '../../core/threads/cpu-pool.js';

/** Times this module was evaluated in the current thread (a warm thread loads it once). */
const g = globalThis as { __cpuTaskLoads?: number; __cpuTaskWarm?: boolean };
g.__cpuTaskLoads = (g.__cpuTaskLoads ?? 0) + 1;

/** A warm-up (CpuPool.preload): marks the thread warm. */
export function warm(): void {
  g.__cpuTaskWarm = true;
}

/** Blocks the thread for `ms` (no await: only terminating the thread stops it early); says which thread ran it. */
export function spin(ms: number): { threadId: number; loads: number; warm: boolean } {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1);
  return { threadId, loads: g.__cpuTaskLoads ?? 0, warm: g.__cpuTaskWarm === true };
}

/** Marks in a shared buffer, every `stepMs`, how far the loop got (the test sees whether the work stopped). */
export function spinWithProgress(ms: number, progress: SharedArrayBuffer): number {
  const counter = new Int32Array(progress);
  const end = Date.now() + ms;
  let next = Date.now();
  while (Date.now() < end) {
    if (Date.now() >= next) {
      Atomics.add(counter, 0, 1);
      next += 10;
    }
  }
  return Atomics.load(counter, 0);
}

export function fail(message: string): never {
  throw new Error(message);
}

export const spinTask = cpuTask(import.meta.url, { spin });
export const warmTask = cpuTask(import.meta.url, { warm });
export const spinWithProgressTask = cpuTask(import.meta.url, { spinWithProgress });
export const failTask = cpuTask(import.meta.url, { fail });
