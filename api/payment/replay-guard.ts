/**
 * One payment signature runs a handler at most once. Facilitators verify a
 * signature statelessly, so two requests carrying the same one at the same
 * moment both pass verification; the gate therefore takes a lock on
 * payer + nonce (per network and asset) before verifying, and once a handler
 * has run under a signature its nonce stays refused (until the authorization
 * has expired anyway). Two implementations: an in-process map for a single
 * API process, and Redis `SET NX PX` shared by every API replica.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { failFastRedis } from './fail-fast-redis.js';

export type AcquireResult = { ok: true; token: string } | { ok: false; state: 'in_progress' | 'used' };

export interface ReplayGuard {
  readonly kind: 'memory' | 'redis';
  /** Takes the in-flight lock on `key` for `lockMs`, unless it is held or the nonce was used. */
  acquire(key: string, lockMs: number): Promise<AcquireResult>;
  /** The handler ran under this signature: refuse the nonce for `ttlMs` from now. */
  markUsed(key: string, token: string, ttlMs: number): Promise<void>;
  /** Nothing ran (verification refused it, or the facilitator was unreachable): the signature may be retried. */
  release(key: string, token: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The lock key of a payment: network, asset, payer and nonce, lower-cased. */
export function replayKey(parts: { network: string; asset: string; payer: string; nonce: string }): string {
  return [parts.network, parts.asset, parts.payer, parts.nonce].map((p) => p.toLowerCase()).join(':');
}

/** A lock held while a payment is verified and its handler runs. */
interface InFlight {
  token: string;
  expiresAt: number;
}

/**
 * The in-process guard. Used nonces are the bulk of it (every paid request leaves one for the authorization's
 * lifetime: ~200,000 at 500 paid requests/s), so they are kept as key -> expiry only, without an entry object or
 * a token string: half the objects the major GC has to walk on every collection.
 */
export class MemoryReplayGuard implements ReplayGuard {
  readonly kind = 'memory';
  private readonly inFlight = new Map<string, InFlight>();
  /** Used nonces: key -> epoch ms until which the nonce stays refused. */
  private readonly used = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepIntervalMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  async acquire(key: string, lockMs: number): Promise<AcquireResult> {
    const now = Date.now();
    const usedUntil = this.used.get(key);
    if (usedUntil !== undefined && usedUntil > now) return { ok: false, state: 'used' };
    const held = this.inFlight.get(key);
    if (held && held.expiresAt > now) return { ok: false, state: 'in_progress' };
    const token = randomUUID();
    this.inFlight.set(key, { token, expiresAt: now + lockMs });
    return { ok: true, token };
  }

  async markUsed(key: string, token: string, ttlMs: number): Promise<void> {
    if (this.inFlight.get(key)?.token === token) this.inFlight.delete(key);
    // "Used" always wins, and stays at least as long as anyone asked.
    const until = Date.now() + ttlMs;
    const current = this.used.get(key);
    if (current === undefined || current < until) this.used.set(key, until);
  }

  async release(key: string, token: string): Promise<void> {
    if (this.inFlight.get(key)?.token === token) this.inFlight.delete(key);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.inFlight.clear();
    this.used.clear();
  }

  /** Entries currently held (for tests and health). */
  get size(): number {
    return this.inFlight.size + this.used.size;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.inFlight) if (entry.expiresAt <= now) this.inFlight.delete(key);
    for (const [key, until] of this.used) if (until <= now) this.used.delete(key);
  }
}

const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export class RedisReplayGuard implements ReplayGuard {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'x402:nonce:',
    options: { connectTimeoutMs?: number } = {},
  ) {
    // Fail fast instead of queueing commands while Redis is down: the gate answers 503.
    this.redis = failFastRedis(url, options.connectTimeoutMs); // enableOfflineQueue: ioredis' default
  }

  async acquire(key: string, lockMs: number): Promise<AcquireResult> {
    const token = randomUUID();
    const k = this.prefix + key;
    const set = await this.redis.set(k, `in_progress:${token}`, 'PX', Math.max(1, Math.round(lockMs)), 'NX');
    if (set === 'OK') return { ok: true, token };
    const value = await this.redis.get(k);
    if (value === null) return this.acquire(key, lockMs); // expired between SET and GET
    return { ok: false, state: value.startsWith('used') ? 'used' : 'in_progress' };
  }

  async markUsed(key: string, token: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + key, `used:${token}`, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async release(key: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.prefix + key, `in_progress:${token}`);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export function createReplayGuard(options: {
  store: 'memory' | 'redis';
  redisUrl?: string;
  prefix?: string;
}): ReplayGuard {
  if (options.store === 'redis') {
    if (!options.redisUrl) throw new Error('the redis replay guard needs a Redis URL');
    return new RedisReplayGuard(options.redisUrl, options.prefix);
  }
  return new MemoryReplayGuard();
}
