/**
 * The sign-in-with-x store port: who bought what (entitlements), and which
 * SIWx nonces were already spent.
 *
 *   grant(payer, resourceKey, ttlMs)    a settled payment entitles its payer to re-read the resource for ttlMs
 *                                       (a later purchase of the same resource extends it, never shortens it)
 *   entitled(payer, resourceKey)        true while the entitlement lasts
 *   spendNonce(nonce, ttlMs)            true the first time a nonce is spent within ttlMs, false after
 *
 * Payers are compared lower-case; keys are hashed by the adapters. Two
 * adapters: memory-siwx-store.ts (one process, bounded) and
 * redis-siwx-store.ts (shared by replicas).
 */
import { createHash } from 'node:crypto';

export interface SiwxStore {
  readonly kind: 'memory' | 'redis';
  grant(payer: string, resourceKey: string, ttlMs: number): Promise<void>;
  entitled(payer: string, resourceKey: string): Promise<boolean>;
  spendNonce(nonce: string, ttlMs: number): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The hashed key of a payer's entitlement to a resource. */
export function entitlementKey(payer: string, resourceKey: string): string {
  return createHash('sha256').update(`${payer.toLowerCase()}\u0000${resourceKey}`, 'utf8').digest('hex');
}

/** The hashed key of a spent nonce (a client-chosen string never shapes a store key). */
export function nonceKey(nonce: string): string {
  return createHash('sha256').update(nonce, 'utf8').digest('hex');
}
