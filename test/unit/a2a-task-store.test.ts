/**
 * The A2A door's task store (api/a2a/task-store.ts): what a caller creates is
 * bounded in time (TTL from the last change), in count and in bytes, the
 * least recently changed going first; a task too large to keep is not kept.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../api/a2a/a2a-protocol.js';
import { TaskStore } from '../../api/a2a/task-store.js';

const task = (id: string, pad = 0): Task => ({
  kind: 'task',
  id,
  contextId: 'c',
  status: {
    state: 'input-required',
    timestamp: '2026-01-01T00:00:00Z',
    message: {
      kind: 'message',
      messageId: 'm',
      role: 'agent',
      taskId: id,
      contextId: 'c',
      parts: [{ kind: 'text', text: 'x'.repeat(pad) }],
    },
  },
});

describe('A2A task store', () => {
  it('forgets a task its TTL after its last change', () => {
    let now = 0;
    const store = new TaskStore({ ttlMs: 1000, maxTasks: 10, maxBytes: 1_000_000 }, () => now);
    store.put({ task: task('a'), call: { skill: 's', input: { x: 1 } } });
    now = 900;
    expect(store.get('a')?.call).toEqual({ skill: 's', input: { x: 1 } });
    store.put({ task: task('a') }); // a change: the TTL starts again
    now = 1800;
    expect(store.get('a')).toBeDefined();
    now = 1900;
    expect(store.get('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('keeps at most maxTasks, dropping the least recently changed', () => {
    const store = new TaskStore({ ttlMs: 60_000, maxTasks: 3, maxBytes: 1_000_000 });
    for (const id of ['a', 'b', 'c']) store.put({ task: task(id) });
    store.put({ task: task('a') }); // a is now the most recent
    store.put({ task: task('d') });
    expect(store.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].filter((id) => store.get(id))).toEqual(['a', 'c', 'd']);
    for (let i = 0; i < 10_000; i++) store.put({ task: task(`flood-${i}`) });
    expect(store.size).toBe(3);
  });

  it('keeps at most maxBytes of tasks, and does not keep a task larger than that on its own', () => {
    const store = new TaskStore({ ttlMs: 60_000, maxTasks: 1000, maxBytes: 5_000 });
    for (let i = 0; i < 10; i++) store.put({ task: task(`t${i}`, 1_000) });
    expect(store.size).toBeGreaterThan(0);
    expect(store.size).toBeLessThan(5);
    expect(store.get('t9')).toBeDefined();
    expect(store.get('t0')).toBeUndefined();
    store.put({ task: task('huge', 10_000) });
    expect(store.get('huge')).toBeUndefined();
    expect(store.get('t9')).toBeDefined();
  });
});
