/**
 * The A2A door's tasks, in this process's memory: each task's current state
 * (what tasks/get answers) and, while it waits for payment, the call it will
 * run (skill and input). Callers create tasks at will, so the store is
 * bounded: a task expires `ttlMs` after its last change, and past `maxTasks`
 * tasks or `maxBytes` of JSON the least recently changed go first (a task
 * larger than `maxBytes` on its own is answered but not kept).
 *
 * Hand-written: a Map in insertion order is the whole LRU this needs (a
 * change re-inserts), and its byte accounting is specific to tasks.
 * One process's memory: a follow-up reaching another replica finds no task
 * (TaskNotFound); a payment sent with the first message needs no task.
 */
import type { Task } from './a2a-protocol.js';

/** The call a task runs once paid. */
export interface PendingCall {
  skill: string;
  input: Record<string, unknown>;
}

export interface StoredTask {
  task: Task;
  call?: PendingCall;
}

export interface TaskLimits {
  ttlMs: number;
  maxTasks: number;
  maxBytes: number;
}

export const DEFAULT_TASK_LIMITS: TaskLimits = { ttlMs: 15 * 60_000, maxTasks: 10_000, maxBytes: 64 * 1024 * 1024 };

interface Entry extends StoredTask {
  bytes: number;
  expiresAt: number;
}

export class TaskStore {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly limits: TaskLimits = DEFAULT_TASK_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(id: string): StoredTask | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(id);
      return undefined;
    }
    return entry;
  }

  put(stored: StoredTask): void {
    const id = stored.task.id;
    this.remove(id);
    const bytes = Buffer.byteLength(JSON.stringify(stored.task)) + Buffer.byteLength(JSON.stringify(stored.call ?? {}));
    if (bytes > this.limits.maxBytes) return;
    this.entries.set(id, { ...stored, bytes, expiresAt: this.now() + this.limits.ttlMs });
    this.bytes += bytes;
    this.evict();
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.bytes -= entry.bytes;
  }

  /** Expired tasks, then the least recently changed while over a bound (the Map's first keys are the oldest). */
  private evict(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      const over = this.entries.size > this.limits.maxTasks || this.bytes > this.limits.maxBytes;
      if (!over && entry.expiresAt > now) return;
      this.remove(id);
    }
  }
}
