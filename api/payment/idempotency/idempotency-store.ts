/**
 * The idempotency store port: the settled answers of paid calls kept under
 * their payment identifier, and the in-flight lock that makes concurrent
 * retries of one identifier run the handler and charge exactly once.
 *
 *   claim(key, fingerprint, lockMs)
 *     nothing under key     -> { state: 'acquired', token }   the caller runs the call, holding the lock for lockMs
 *     a lock is held        -> { state: 'in_progress', fingerprint }
 *     an answer is kept     -> { state: 'stored', record }
 *   keep(key, token, record, ttlMs)   the holder's call settled: the answer replaces the lock for ttlMs
 *   release(key, token)               the holder's call was not settled: nothing is kept, the next claim acquires
 *
 * A lock whose holder died expires after lockMs; `keep` and `release` by a
 * holder whose lock expired (or was taken over) change nothing. The key is the
 * caller's (payer + identifier, idempotent-retries.ts); the fingerprint is
 * request-fingerprint.ts's. Two adapters: memory-idempotency-store.ts (one
 * process, bounded by bytes) and redis-idempotency-store.ts (shared by replicas).
 */

/** What is kept of a settled call: enough to answer its retries exactly as the call was answered. */
export interface IdempotencyRecord {
  /** The request the answer belongs to (request-fingerprint.ts). */
  fingerprint: string;
  /** The status the call was answered with (a settled call: 200). */
  status: number;
  contentType: string;
  /** The body bytes; absent when the answer was larger than the per-entry bound (then not replayable). */
  body?: Buffer;
  /** The settlement response as JSON text (HTTP: the decoded `PAYMENT-RESPONSE`; MCP: `_meta["x402/payment-response"]`). */
  settlement: string;
  /** sha-256 hex of the settled payment's signature: a retry carrying the very same signature is the payer's. */
  signatureDigest: string;
  /** When the call settled (epoch ms). */
  settledAtMs: number;
}

export type IdempotencyClaim =
  | { state: 'acquired'; token: string }
  | { state: 'in_progress'; fingerprint: string }
  | { state: 'stored'; record: IdempotencyRecord };

export interface IdempotencyStore {
  readonly kind: 'memory' | 'redis';
  claim(key: string, fingerprint: string, lockMs: number): Promise<IdempotencyClaim>;
  /** Keeps the answer for ttlMs; false when the caller no longer held the lock (nothing changed). */
  keep(key: string, token: string, record: IdempotencyRecord, ttlMs: number): Promise<boolean>;
  release(key: string, token: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The bytes a record takes (body plus its texts): what the bounds count. */
export function recordBytes(record: IdempotencyRecord): number {
  return (
    (record.body?.length ?? 0) + record.settlement.length + record.contentType.length + record.fingerprint.length + 96
  );
}
