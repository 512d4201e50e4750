/**
 * CPU pool: runs the pure CPU part of a job (a scrub, a parse, a summary) on a
 * worker thread, so the event loop of the process (the API's, under
 * QUEUE=inprocess) keeps answering while jobs compute. piscina (nodejs
 * community, per-task module and abort signal) holds the threads; this file
 * says how the project uses it:
 *  - a task is a named export of a module, referenced with `cpuTask(import.meta.url, { fn })`
 *    beside the function itself (the module's own URL: `.ts` under tsx, `.js` compiled);
 *    arguments and result cross by structured clone (plain data: no URL, no class instances);
 *  - threads are sized to the cores (JOB_THREADS; 0 = os.availableParallelism(), less one
 *    when the process also serves the API, so its event loop keeps a core), started
 *    once and kept (min = max): each imports a module once (warm), and `preload()` tasks
 *    (a module's warm-up) run in every thread before it takes work;
 *  - `run(task, args, signal)`: when `signal` aborts, a queued task is dropped and a running
 *    one has its thread terminated (synchronous code cannot be interrupted otherwise); the
 *    promise rejects at once with the signal's reason, and a fresh thread (warmed again)
 *    takes the place of the old one;
 *  - tasks beyond the threads wait in the pool's FIFO queue; its length is bounded by the
 *    queue lanes' concurrency (one task at a time per job), not here.
 * `inlineCpu` runs the same tasks on the calling thread (a processor built without a pool:
 * unit tests, benches of the function itself).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';

/** A function a pool thread can run: plain data in, plain data (or a promise of it) out. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any argument list; the handle keeps the real types
type TaskFunction = (...args: any[]) => unknown;

/** A reference to an exported function: where a thread imports it from, and the function for inline runs. */
export interface CpuTask<F extends TaskFunction = TaskFunction> {
  /** File URL of the module that exports it. */
  readonly module: string;
  /** The export's name. */
  readonly name: string;
  readonly fn: F;
}

/**
 * `cpuTask(import.meta.url, { redact })`: a handle on the export `redact` of the calling module. The object
 * form names the export once, so a rename cannot leave the handle behind.
 */
export function cpuTask<F extends TaskFunction>(moduleUrl: string, exported: Record<string, F>): CpuTask<F> {
  const entries = Object.entries(exported);
  if (entries.length !== 1) throw new Error('cpuTask: pass exactly one exported function, as { name }');
  const [name, fn] = entries[0]!;
  if (!moduleUrl.startsWith('file:')) throw new Error(`cpuTask: ${name}: module must be a file URL, got ${moduleUrl}`);
  return { module: moduleUrl, name, fn };
}

export interface CpuPool {
  /** Threads of the pool; 0 when tasks run on the calling thread. */
  readonly threads: number;
  /** Runs `task(...args)`; rejects with `signal.reason` as soon as `signal` aborts (the work stops). */
  run<F extends TaskFunction>(
    task: CpuTask<F>,
    args: Parameters<F>,
    signal?: AbortSignal,
  ): Promise<Awaited<ReturnType<F>>>;
  /** Runs `task(...args)` once in every thread before it takes work (now, and in threads started later). */
  preload<F extends TaskFunction>(task: CpuTask<F>, args: Parameters<F>): void;
  /**
   * Starts the threads; resolves once every one has run its warm-ups (`preload`) and can take work. `signal`
   * (a shutdown during start-up) rejects at once with its reason and ends the warming threads.
   */
  ready(signal?: AbortSignal): Promise<void>;
  /** Lets running tasks finish, then stops the threads; `force` stops them at once (start-up interrupted). */
  close(options?: { force?: boolean }): Promise<void>;
}

export interface CpuPoolOptions {
  /** JOB_THREADS: 0 = one per core (os.availableParallelism()), less one when `sharesCoresWithApi`. */
  threads: number;
  /**
   * The process also serves the API (ROLE=all): the default leaves it a core. Measured on 2 cores with 4
   * maximum-size scrubs running (phase L of bench:utility): /health p50 236 ms with 1 thread, 552 ms with 2.
   */
  sharesCoresWithApi?: boolean;
  logger: Logger;
}

interface ThreadTask {
  /** null: a ping, answered by a warm thread. */
  module: string | null;
  name: string;
  args: unknown[];
}

/** The thread entry: JavaScript, so a thread starts without a TypeScript loader (it registers one if needed). */
const ENTRY = new URL('./cpu-thread.mjs', import.meta.url);
/** This module runs as TypeScript (tsx, vitest): the threads must load `.ts` modules too. */
const TYPESCRIPT = import.meta.url.endsWith('.ts');

export function poolSize(threads: number, sharesCoresWithApi = false): number {
  if (threads > 0) return threads;
  return Math.max(1, availableParallelism() - (sharesCoresWithApi ? 1 : 0));
}

/** A pool of `poolSize(...)` threads, started on the first `run()` (or `ready()`). */
export function createCpuPool(options: CpuPoolOptions): CpuPool {
  return new ThreadPool(poolSize(options.threads, options.sharesCoresWithApi), options.logger);
}

class ThreadPool implements CpuPool {
  /** Shared with piscina as workerData: a thread started later (after an abort) sees every preload. */
  private readonly preloads: ThreadTask[] = [];
  private piscina?: Piscina;
  private closed?: Promise<void>;

  constructor(
    readonly threads: number,
    private readonly logger: Logger,
  ) {
    if (!Number.isInteger(threads) || threads < 1)
      throw new Error(`cpu pool: threads must be a positive integer, got ${threads}`);
  }

  start(): Piscina {
    if (this.closed) throw new Error('cpu pool: closed');
    if (!this.piscina) {
      this.piscina = new Piscina({
        filename: ENTRY.href,
        minThreads: this.threads,
        maxThreads: this.threads,
        idleTimeout: Infinity,
        workerData: { typescript: TYPESCRIPT, preload: this.preloads },
      });
      // A thread that dies outside a task (its tasks already rejected): piscina starts another.
      this.piscina.on('error', (err: unknown) =>
        this.logger.error({ err: errorMessage(err) }, 'cpu pool: a thread failed'),
      );
    }
    return this.piscina;
  }

  preload<F extends TaskFunction>(task: CpuTask<F>, args: Parameters<F>): void {
    this.preloads.push({ module: task.module, name: task.name, args });
    // Threads already running warm up now: one task per thread (each idle thread takes one).
    if (this.piscina) {
      const piscina = this.piscina;
      for (let i = 0; i < this.threads; i++)
        piscina.run({ module: task.module, name: task.name, args }).catch(() => undefined);
    }
  }

  async ready(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const piscina = this.start();
    // One ping per thread: each idle thread takes one, and answers it only after its warm-ups.
    const ping: ThreadTask = { module: null, name: '', args: [] };
    try {
      await Promise.all(Array.from({ length: this.threads }, () => piscina.run(ping, signal ? { signal } : {})));
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    }
  }

  async run<F extends TaskFunction>(
    task: CpuTask<F>,
    args: Parameters<F>,
    signal?: AbortSignal,
  ): Promise<Awaited<ReturnType<F>>> {
    signal?.throwIfAborted();
    const message: ThreadTask = { module: task.module, name: task.name, args };
    try {
      return (await this.start().run(message, signal ? { signal } : {})) as Awaited<ReturnType<F>>;
    } catch (err) {
      // piscina wraps the reason in its AbortError: the caller sees the reason (e.g. JobTimeoutError).
      if (signal?.aborted) throw signal.reason;
      throw err;
    }
  }

  close(options: { force?: boolean } = {}): Promise<void> {
    // A forced close terminates the threads mid-task (warm-ups included); a plain one waits for running tasks.
    const stop = () => (options.force ? this.piscina!.destroy() : this.piscina!.close());
    this.closed ??= this.piscina ? stop() : Promise.resolve();
    return this.closed;
  }
}

/** Runs tasks on the calling thread (no pool): the same results, without the isolation. */
export const inlineCpu: CpuPool = {
  threads: 0,
  async run(task, args, signal) {
    signal?.throwIfAborted();
    return (await task.fn(...args)) as never;
  },
  async ready(signal) {
    signal?.throwIfAborted();
  },
  preload(task, args) {
    Promise.resolve()
      .then(() => task.fn(...args))
      .catch(() => undefined);
  },
  async close() {},
};
