/**
 * The in-process idempotency store (idempotency-store.ts) for a single API
 * process: in-flight locks in a map, kept answers in an LRU (lru-cache)
 * bounded by their total bytes, each entry with its own TTL. When the budget
 * is full the least recently used answers go first: a retry of an evicted
 * identifier finds nothing and is treated as a new call (docs/payment.md says
 * how to size the budget). A record larger than the whole budget is not kept.
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  recordBytes,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyStore,
} from './idempotency-store.js';

interface InFlight {
  token: string;
  fingerprint: string;
  expiresAt: number;
}

export interface MemoryIdempotencyStoreOptions {
  /** Largest total size of kept records (bytes). */
  maxBytes: number;
  sweepIntervalMs?: number;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly kind = 'memory';
  private readonly inFlight = new Map<string, InFlight>();
  private readonly kept: LRUCache<string, IdempotencyRecord>;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryIdempotencyStoreOptions) {
    this.kept = new LRUCache<string, IdempotencyRecord>({
      maxSize: Math.max(1, options.maxBytes),
      sizeCalculation: recordBytes,
      ttlAutopurge: false,
    });
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  async claim(key: string, fingerprint: string, lockMs: number): Promise<IdempotencyClaim> {
    const record = this.kept.get(key);
    if (record) return { state: 'stored', record };
    const now = Date.now();
    const held = this.inFlight.get(key);
    if (held && held.expiresAt > now) return { state: 'in_progress', fingerprint: held.fingerprint };
    const token = randomUUID();
    this.inFlight.set(key, { token, fingerprint, expiresAt: now + lockMs });
    return { state: 'acquired', token };
  }

  async keep(key: string, token: string, record: IdempotencyRecord, ttlMs: number): Promise<boolean> {
    const held = this.inFlight.get(key);
    if (held?.token !== token || held.expiresAt <= Date.now()) return false;
    this.inFlight.delete(key);
    // lru-cache refuses (does not store) an entry larger than maxSize by itself.
    this.kept.set(key, record, { ttl: Math.max(1, Math.round(ttlMs)) });
    return true;
  }

  async release(key: string, token: string): Promise<void> {
    if (this.inFlight.get(key)?.token === token) this.inFlight.delete(key);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.inFlight.clear();
    this.kept.clear();
  }

  /** Bytes of the kept records (for tests and health). */
  get keptBytes(): number {
    return this.kept.calculatedSize;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.inFlight) if (entry.expiresAt <= now) this.inFlight.delete(key);
    this.kept.purgeStale();
  }
}
