/**
 * One computed answer per key, shared by every viewer for `ttlMs`: concurrent
 * requests for a key wait for the same computation (single flight), and a
 * failed computation is not kept. This is what lets many viewers poll the
 * dashboard at the cost of one store read per key and period. Written here
 * because it is a dozen lines; a general cache (lru-cache's fetch) would add
 * eviction policy the handful of keys here (one per pair) do not need.
 */
export class SnapshotCache<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, compute: () => Promise<T>): Promise<T> {
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    const value = compute();
    this.entries.set(key, { at: t, value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}
