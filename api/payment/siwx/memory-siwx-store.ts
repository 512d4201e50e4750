/**
 * The in-process sign-in-with-x store (siwx-store.ts) for a single API
 * process. Entitlements live in an LRU bounded by count (lru-cache, each with
 * its TTL): past the bound the least recently used go first, and their payer
 * pays again. Spent nonces are never evicted before their TTL (an evicted
 * nonce could be replayed): a map swept of expired nonces, and a nonce is
 * only spent for a proof whose signature checked out and whose payer holds an
 * entitlement, so it grows with genuine re-reads only.
 */
import { LRUCache } from 'lru-cache';
import { entitlementKey, nonceKey, type SiwxStore } from './siwx-store.js';

export interface MemorySiwxStoreOptions {
  /** Most entitlements kept (each ~150 bytes). */
  maxEntitlements: number;
  sweepIntervalMs?: number;
}

export class MemorySiwxStore implements SiwxStore {
  readonly kind = 'memory';
  private readonly entitlements: LRUCache<string, number>;
  /** nonce key -> epoch ms until which it stays spent. */
  private readonly nonces = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemorySiwxStoreOptions) {
    this.entitlements = new LRUCache<string, number>({ max: Math.max(1, options.maxEntitlements) });
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  async grant(payer: string, resourceKey: string, ttlMs: number): Promise<void> {
    const key = entitlementKey(payer, resourceKey);
    const until = Date.now() + ttlMs;
    const current = this.entitlements.get(key);
    if (current !== undefined && current >= until) return;
    this.entitlements.set(key, until, { ttl: Math.max(1, Math.round(ttlMs)) });
  }

  async entitled(payer: string, resourceKey: string): Promise<boolean> {
    const until = this.entitlements.get(entitlementKey(payer, resourceKey));
    return until !== undefined && until > Date.now();
  }

  async spendNonce(nonce: string, ttlMs: number): Promise<boolean> {
    const key = nonceKey(nonce);
    const now = Date.now();
    const until = this.nonces.get(key);
    if (until !== undefined && until > now) return false;
    this.nonces.set(key, now + ttlMs);
    return true;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entitlements.clear();
    this.nonces.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, until] of this.nonces) if (until <= now) this.nonces.delete(key);
    this.entitlements.purgeStale();
  }
}
