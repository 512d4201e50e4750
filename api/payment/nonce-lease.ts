/**
 * One nonce sequence per settler key. Every settlement transaction takes its
 * nonce and is broadcast inside `withNonce`, which runs for one holder at a
 * time among everyone sharing the lease, so transactions reach the node in
 * nonce order (an automining node refuses a gap: "Nonce too high ... can't be
 * queued"; a real chain would hold it back) and no two get the same nonce.
 *
 *   memory: one API process (a promise-chain mutex and a counter).
 *   redis:  every API replica that shares the settler key: a lock
 *           (`SET NX PX`, token-checked release) and the next nonce in Redis.
 *
 * The next nonce is read from the chain (`pending` transaction count) when
 * unknown: at start, and after any send that failed, since a failed send may
 * or may not have reached the node (a timeout). A send that succeeded moves
 * the sequence on by one. Only the signing and the broadcast run under the
 * lease; gas estimation and receipts run outside it.
 *
 * Hand-written: viem's nonceManager hands out nonces without ordering the
 * broadcasts and knows nothing of other processes; no maintained library
 * does a cross-process nonce lease over Redis.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { failFastRedis } from './fail-fast-redis.js';
import type { Address } from 'viem';

export interface NonceLease {
  readonly kind: 'memory' | 'redis';
  /**
   * Runs `send(nonce)` with the settler's next nonce, alone among the lease's holders. `send` resolves once
   * the node accepted the transaction; when it throws, the next holder re-reads the nonce from the chain.
   */
  withNonce<T>(send: (nonce: number) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The settler's next nonce on chain (pending transactions included). */
export type ChainNonce = (address: Address) => Promise<number>;

export class MemoryNonceLease implements NonceLease {
  readonly kind = 'memory';
  private tail: Promise<unknown> = Promise.resolve();
  private next: number | undefined;

  constructor(
    private readonly address: Address,
    private readonly chainNonce: ChainNonce,
  ) {}

  withNonce<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    const run = this.tail.then(async () => {
      const nonce = this.next ?? (await this.chainNonce(this.address));
      try {
        const result = await send(nonce);
        this.next = nonce + 1;
        return result;
      } catch (err) {
        this.next = undefined;
        throw err;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.tail;
  }
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
  return redis.call('DEL', KEYS[1])
end
return 0`;

export interface RedisNonceLeaseOptions {
  /** Keys `<prefix><address>:lock` and `<prefix><address>:next`. */
  prefix: string;
  /** A holder that dies keeps the lock at most this long. Default 15 s. */
  lockMs?: number;
  /** Longest wait for the lock before the settlement attempt fails (and is retried). Default 30 s. */
  waitMs?: number;
}

export class RedisNonceLease implements NonceLease {
  readonly kind = 'redis';
  private readonly redis: Redis;
  private readonly lockKey: string;
  private readonly nextKey: string;
  private readonly lockMs: number;
  private readonly waitMs: number;

  constructor(
    url: string,
    private readonly address: Address,
    private readonly chainNonce: ChainNonce,
    options: RedisNonceLeaseOptions,
  ) {
    this.redis = failFastRedis(url);
    const base = `${options.prefix}${address.toLowerCase()}`;
    this.lockKey = `${base}:lock`;
    this.nextKey = `${base}:next`;
    this.lockMs = options.lockMs ?? 15_000;
    this.waitMs = options.waitMs ?? 30_000;
  }

  async withNonce<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    const token = await this.acquire();
    let next = '';
    try {
      const stored = await this.redis.get(this.nextKey);
      const nonce = stored === null ? await this.chainNonce(this.address) : Number(stored);
      const result = await send(nonce);
      next = String(nonce + 1);
      return result;
    } finally {
      // Success: the sequence moves on. Failure: the stored nonce is dropped, the next holder reads the chain's.
      await this.redis.eval(RELEASE, 2, this.lockKey, this.nextKey, token, next).catch(() => undefined);
    }
  }

  private async acquire(): Promise<string> {
    const token = randomUUID();
    const until = Date.now() + this.waitMs;
    for (let delay = 2; ; delay = Math.min(delay * 2, 25)) {
      if ((await this.redis.set(this.lockKey, token, 'PX', this.lockMs, 'NX')) === 'OK') return token;
      if (Date.now() > until)
        throw new Error(`settler nonce lease for ${this.address} not acquired within ${this.waitMs} ms`);
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
