/**
 * Health from what a port's operations actually do, next to its ping: a
 * component turns `degraded` on the first failed write (or read, or
 * publish) and `ok` again on the first one that succeeds, with the reason
 * and since when. A ping answering on a kept-alive connection says nothing
 * about inserts failing (ClickHouse keeps answering /ping on open
 * connections while it shuts down); this does. Only dependency failures
 * (retryable: the engine is unreachable or refusing work) count; a statement
 * the engine rejects is the caller's problem, not the engine's health.
 */
import { errorMessage, isRetryable } from './errors.js';
import type { ProbeResult } from './health.js';

export type OperationKind = 'write' | 'read' | 'publish';
const PLURAL: Record<OperationKind, string> = { write: 'writes', read: 'reads', publish: 'publishes' };

interface Failing {
  reason: string;
  since: number;
  count: number;
}

export class OperationHealth {
  private readonly failing = new Map<OperationKind, Failing>();
  private readonly lastOk = new Map<OperationKind, number>();

  succeeded(kind: OperationKind): void {
    this.lastOk.set(kind, Date.now());
    if (this.failing.size) this.failing.delete(kind);
  }

  /** Records a failure when it is a dependency failure; other errors leave the state as it was. */
  failed(kind: OperationKind, err: unknown): void {
    if (!isRetryable(err)) return;
    const f = this.failing.get(kind);
    if (f) {
      f.reason = errorMessage(err);
      f.count++;
    } else this.failing.set(kind, { reason: errorMessage(err), since: Date.now(), count: 1 });
  }

  /** Runs an operation and records its outcome. */
  async track<T>(kind: OperationKind, op: () => Promise<T>): Promise<T> {
    try {
      const out = await op();
      this.succeeded(kind);
      return out;
    } catch (err) {
      this.failed(kind, err);
      throw err;
    }
  }

  /** The fields a health probe adds: `degraded` with the reason while some kind of operation fails. */
  report(): Partial<ProbeResult> {
    const facts: Record<string, unknown> = {};
    for (const [kind, at] of this.lastOk) facts[`last_${kind}_ok_at`] = new Date(at).toISOString();
    if (!this.failing.size) return facts;
    const [kind, f] = [...this.failing].sort((a, b) => a[1].since - b[1].since)[0]!;
    return {
      ...facts,
      status: 'degraded',
      reason: `${PLURAL[kind]} failing since ${new Date(f.since).toISOString()} (${f.count} failed): ${f.reason}`,
      failing: Object.fromEntries(
        [...this.failing].map(([k, v]) => [
          k,
          { since: new Date(v.since).toISOString(), failed: v.count, last_error: v.reason },
        ]),
      ),
    };
  }
}
