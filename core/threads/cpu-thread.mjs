/**
 * Entry of every thread of the CPU pool (core/threads/cpu-pool.ts). Plain
 * JavaScript on purpose: a thread must start before any TypeScript loader is
 * registered. When the project runs as TypeScript (tsx in dev, tests and the
 * image; `workerData.typescript`), the thread registers tsx's loader first:
 * a worker thread does not reliably inherit the parent's loader hooks.
 *
 * Warm: each module is imported once per thread (the ESM cache), and the
 * tasks in `workerData.preload` (a module's warm-up: word vectors, phone
 * metadata) run before the thread takes its first job. A thread that replaces
 * one terminated by an abort warms up the same way.
 *
 * A task is `{ module, name, args }`: the export `name` of `module` (a file
 * URL) called with `args`; its result (or error) goes back by structured clone.
 */
import { workerData } from 'node:worker_threads';

const { typescript = false, preload = [] } = workerData ?? {};
if (typescript) (await import('tsx/esm/api')).register();

/** Module namespace promises by URL (the ESM cache holds them too; this skips the resolution). */
const modules = new Map();

function load(url) {
  let namespace = modules.get(url);
  if (!namespace) {
    namespace = import(url);
    modules.set(url, namespace);
  }
  return namespace;
}

async function call({ module, name, args }) {
  // A ping (CpuPool.ready): answered once this thread has warmed up, since it takes no task before.
  if (module === null) return true;
  const namespace = await load(module);
  const fn = namespace[name];
  if (typeof fn !== 'function') throw new TypeError(`${module} exports no function ${name}`);
  return fn(...args);
}

for (const task of preload) {
  try {
    await call(task);
  } catch (err) {
    // A warm-up that fails is not fatal: the job that needs the module meets the error itself.
    process.emitWarning(`cpu pool: warm-up ${task.name} of ${task.module} failed: ${err?.message ?? err}`);
  }
}

export default call;
