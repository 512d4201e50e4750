/**
 * The durable record of settlements answered on broadcast and not yet confirmed (PAYMENT_ANSWER_ON=broadcast),
 * and of the losses still within the hold window, so that a restart loses none of them: at start the settler
 * reads them back, follows every unconfirmed one to its end on chain (settlement-queue.ts `recover`) and counts
 * the losses against the risk caps again (settlement-risk.ts).
 *
 *   file:  `$DATA_DIR/x402-unconfirmed-settlements.jsonl`, an append-only log of `put` / `done` / `loss` lines,
 *          rewritten compact at start. A write returns once the kernel has it (it survives a crash of the process,
 *          not of the machine: no fsync per answer).
 *   redis: a hash of the unconfirmed ones and a sorted set of the losses by time, under the settler's prefix
 *          (replicas sharing the settler key share them; a recovered settlement that another replica confirms is
 *          recognised by its AuthorizationUsed event).
 *
 * Every record carries the signed authorization, so recovery needs nothing else.
 */
import { mkdir, open, readFile, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import type { Hex } from 'viem';
import { failFastRedis } from './fail-fast-redis.js';
import { authorizationKey, type SignedAuthorization } from './settlement-calls.js';

export interface UnconfirmedSettlement {
  auth: SignedAuthorization;
  /** Transactions that carried it so far. */
  broadcasts: Hex[];
  answeredAtMs: number;
}

export interface RecordedLoss {
  key: string;
  payer: string;
  valueAtomic: bigint;
  reason: string;
  atMs: number;
}

export interface UnconfirmedSettlements {
  readonly kind: 'file' | 'redis';
  /** Recorded (or updated with a new broadcast) before its answer is released. */
  put(record: UnconfirmedSettlement): Promise<void>;
  /** Confirmed, or ended as a loss (recorded with `loss` first). */
  done(auth: SignedAuthorization): Promise<void>;
  loss(loss: RecordedLoss): Promise<void>;
  /** What a previous run left: unconfirmed settlements, and losses newer than `sinceMs`. */
  load(sinceMs: number): Promise<{ unconfirmed: UnconfirmedSettlement[]; losses: RecordedLoss[] }>;
  close(): Promise<void>;
}

const keyOf = (auth: SignedAuthorization) => authorizationKey(auth.from, auth.nonce);

type Line =
  | { op: 'put'; key: string; record: Wire }
  | { op: 'done'; key: string }
  | { op: 'loss'; key: string; payer: string; value: string; reason: string; at: number };

interface Wire {
  auth: Record<keyof SignedAuthorization, string>;
  broadcasts: Hex[];
  answeredAtMs: number;
}

function toWire(r: UnconfirmedSettlement): Wire {
  const a = r.auth;
  return {
    auth: {
      from: a.from,
      to: a.to,
      value: a.value.toString(),
      validAfter: a.validAfter.toString(),
      validBefore: a.validBefore.toString(),
      nonce: a.nonce,
      signature: a.signature,
    },
    broadcasts: r.broadcasts,
    answeredAtMs: r.answeredAtMs,
  };
}

function fromWire(w: Wire): UnconfirmedSettlement {
  const a = w.auth;
  return {
    auth: {
      from: a.from as Hex,
      to: a.to as Hex,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce as Hex,
      signature: a.signature as Hex,
    },
    broadcasts: w.broadcasts,
    answeredAtMs: w.answeredAtMs,
  };
}

const lossOf = (l: Extract<Line, { op: 'loss' }>): RecordedLoss => ({
  key: l.key,
  payer: l.payer,
  valueAtomic: BigInt(l.value),
  reason: l.reason,
  atMs: l.at,
});

const lossLine = (loss: RecordedLoss): Extract<Line, { op: 'loss' }> => ({
  op: 'loss',
  key: loss.key,
  payer: loss.payer,
  value: loss.valueAtomic.toString(),
  reason: loss.reason,
  at: loss.atMs,
});

/** The log file of one process's settler (DATA_DIR). */
export class FileUnconfirmedSettlements implements UnconfirmedSettlements {
  readonly kind = 'file';
  private handle: FileHandle | undefined;

  constructor(private readonly path: string) {}

  async put(record: UnconfirmedSettlement): Promise<void> {
    await this.append({ op: 'put', key: keyOf(record.auth), record: toWire(record) });
  }

  async done(auth: SignedAuthorization): Promise<void> {
    await this.append({ op: 'done', key: keyOf(auth) });
  }

  async loss(loss: RecordedLoss): Promise<void> {
    await this.append(lossLine(loss));
  }

  /** Replays the log, then rewrites it with only what is still live. */
  async load(sinceMs: number): Promise<{ unconfirmed: UnconfirmedSettlement[]; losses: RecordedLoss[] }> {
    const text = await readFile(this.path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    const live = new Map<string, Wire>();
    const losses: Extract<Line, { op: 'loss' }>[] = [];
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a line cut by a crash mid-write
      }
      if (line.op === 'put') live.set(line.key, line.record);
      else if (line.op === 'done') live.delete(line.key);
      else if (line.at > sinceMs) losses.push(line);
    }
    const kept: Line[] = [...[...live].map(([key, record]) => ({ op: 'put' as const, key, record })), ...losses];
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, kept.map((l) => `${JSON.stringify(l)}\n`).join(''), { mode: 0o600 });
    await this.handle?.close();
    this.handle = undefined;
    await rename(tmp, this.path);
    return { unconfirmed: [...live.values()].map(fromWire), losses: losses.map(lossOf) };
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }

  private async append(line: Line): Promise<void> {
    if (!this.handle) {
      await mkdir(dirname(this.path), { recursive: true });
      this.handle = await open(this.path, 'a', 0o600);
    }
    // One write per line on an O_APPEND descriptor: concurrent appends do not interleave.
    await this.handle.write(`${JSON.stringify(line)}\n`);
  }
}

/** A hash and a sorted set in Redis, shared by the replicas of one settler key. */
export class RedisUnconfirmedSettlements implements UnconfirmedSettlements {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.redis = failFastRedis(url);
  }

  async put(record: UnconfirmedSettlement): Promise<void> {
    await this.redis.hset(`${this.prefix}unconfirmed`, keyOf(record.auth), JSON.stringify(toWire(record)));
  }

  async done(auth: SignedAuthorization): Promise<void> {
    await this.redis.hdel(`${this.prefix}unconfirmed`, keyOf(auth));
  }

  async loss(loss: RecordedLoss): Promise<void> {
    await this.redis.zadd(`${this.prefix}losses`, loss.atMs, JSON.stringify(lossLine(loss)));
  }

  async load(sinceMs: number): Promise<{ unconfirmed: UnconfirmedSettlement[]; losses: RecordedLoss[] }> {
    await this.redis.zremrangebyscore(`${this.prefix}losses`, '-inf', sinceMs);
    const [all, losses] = await Promise.all([
      this.redis.hgetall(`${this.prefix}unconfirmed`),
      this.redis.zrangebyscore(`${this.prefix}losses`, `(${sinceMs}`, '+inf'),
    ]);
    return {
      unconfirmed: Object.values(all).map((v) => fromWire(JSON.parse(v) as Wire)),
      losses: losses.map((v) => lossOf(JSON.parse(v) as Extract<Line, { op: 'loss' }>)),
    };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
