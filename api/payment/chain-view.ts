/**
 * What the in-process facilitator knows of its chain, followed block by
 * block, so that verifying a payment needs no chain round trip:
 *
 *  - the head (number, block time): polled every `pollMs`; its age is the
 *    `/health` figure of a chain that stopped (a dev chain that stopped
 *    mining, an RPC that serves an old block);
 *  - used authorizations: the asset's `AuthorizationUsed` and
 *    `AuthorizationCanceled` logs of every new block (and, at start, of the
 *    blocks covering the longest authorization the gate accepts), so a
 *    signature already settled on chain (by us before a restart, by another
 *    replica, or cancelled by the payer) is refused before any handler runs;
 *  - a payer's balance and whether it has code, read once per block per
 *    payer (concurrent requests share one read), at that block. While the
 *    read of a new block is in flight, a payer seen recently is answered
 *    from the last block read (at most `maxStaleBlocks` behind the head), so
 *    no request waits on the chain but a new payer's first (or one asking
 *    for a fresh read). An older balance is no laxer: the reservations
 *    (reservations.ts) count every payment not yet reflected in the balance
 *    at the block it was read at.
 *
 * What the cache can miss is caught by the settlement, which always executes
 * on chain: a balance spent or a nonce used since the last block makes the
 * settlement fail, and a failed settlement withholds the result.
 */
import { parseAbiItem, erc20Abi, type Address, type PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';

const AUTHORIZATION_EVENTS = [
  parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
  parseAbiItem('event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)'),
] as const;
/** Largest block range of one eth_getLogs (public RPCs commonly cap it). */
const LOG_RANGE = 1000n;

export interface ChainHead {
  number: bigint;
  /** Block time, ms. */
  timestampMs: number;
  /** When this process last read it, ms. */
  readAtMs: number;
}

export interface PayerFacts {
  block: bigint;
  hasCode: boolean;
  balance: bigint;
}

/** A payer's newest read (maybe in flight) and, once one answered, the newest facts known. */
interface PayerEntry {
  block: bigint;
  facts: Promise<PayerFacts>;
  known?: PayerFacts;
}

export interface ChainViewOptions {
  client: PublicClient;
  asset: Address;
  /** Head poll interval. Default 1000 ms. */
  pollMs?: number;
  /** How long a used authorization is remembered (block time): the longest validity the gate accepts, and some. */
  rememberS: number;
  /** Blocks read for used authorizations at start. Default rememberS (one block a second at most). */
  backfillBlocks?: number;
  /** How far behind the head a payer's last read may be to answer while the new block's read is in flight. Default 2. */
  maxStaleBlocks?: number;
  logger?: Logger;
}

export class ChainView {
  private current: ChainHead | undefined;
  private failure: { atMs: number; message: string } | undefined;
  private readonly used = new Map<string, number>();
  /** Per payer (lower case). */
  private readonly payers = new Map<string, PayerEntry>();
  private logsFrom: bigint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private refreshing: Promise<void> | undefined;
  private stopped = false;
  private readonly pollMs: number;

  constructor(private readonly options: ChainViewOptions) {
    this.pollMs = options.pollMs ?? 1000;
    this.maxStaleBlocks = BigInt(options.maxStaleBlocks ?? 2);
  }
  private readonly maxStaleBlocks: bigint;

  /** Reads the head (and the recent used authorizations) once, then keeps polling. Never throws: a failure shows in `status()`. */
  async start(): Promise<void> {
    await (this.polling = this.poll());
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll().finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      const block = await this.options.client.getBlock({ blockTag: 'latest' });
      const head: ChainHead = {
        number: block.number,
        timestampMs: Number(block.timestamp) * 1000,
        readAtMs: Date.now(),
      };
      if (!this.current || head.number > this.current.number) await this.readUsed(head);
      this.current = head;
      this.failure = undefined;
    } catch (err) {
      this.failure = { atMs: Date.now(), message: errorMessage(err).split('\n')[0] ?? 'unknown error' };
      this.options.logger?.warn({ err: this.failure.message }, 'x402 chain view: head not read');
    }
  }

  /** Used and cancelled authorizations of the blocks since the last read (a head is published only once they are known). */
  private async readUsed(head: ChainHead): Promise<void> {
    const backfill = BigInt(this.options.backfillBlocks ?? this.options.rememberS);
    let from = this.logsFrom ?? (head.number > backfill ? head.number - backfill : 0n);
    while (from <= head.number) {
      const to = from + LOG_RANGE - 1n < head.number ? from + LOG_RANGE - 1n : head.number;
      const logs = await this.options.client.getLogs({
        address: this.options.asset,
        events: AUTHORIZATION_EVENTS,
        fromBlock: from,
        toBlock: to,
        strict: true,
      });
      for (const log of logs) this.used.set(authorizationKey(log.args.authorizer, log.args.nonce), head.timestampMs);
      from = to + 1n;
    }
    this.logsFrom = head.number + 1n;
    const oldest = head.timestampMs - this.options.rememberS * 1000;
    for (const [key, at] of this.used) if (at < oldest) this.used.delete(key);
    // A payer not seen for a few blocks is read afresh when it comes back.
    for (const [key, entry] of this.payers)
      if (entry.block + this.maxStaleBlocks < head.number) this.payers.delete(key);
  }

  /** The head, when it was read within `maxReadAgeMs` (default 5 polls); undefined when the chain is not being followed. */
  freshHead(maxReadAgeMs = this.pollMs * 5): ChainHead | undefined {
    const head = this.current;
    return head && Date.now() - head.readAtMs <= maxReadAgeMs ? head : undefined;
  }

  /** Reads the head now (one read shared by concurrent callers); the last head when the read fails. */
  async latestHead(): Promise<ChainHead | undefined> {
    this.refreshing ??= this.poll().finally(() => (this.refreshing = undefined));
    await this.refreshing;
    return this.current;
  }

  /** Whether the authorization is known used or cancelled on chain (or settled by this process). */
  isUsed(authorizer: string, nonce: string): boolean {
    return this.used.has(authorizationKey(authorizer, nonce));
  }

  /** Records an authorization this process just settled, before its block's logs are read. */
  markUsed(authorizer: string, nonce: string): void {
    this.used.set(authorizationKey(authorizer, nonce), this.current?.timestampMs ?? Date.now());
  }

  /**
   * The payer's balance of the asset and whether it has code: read at `head` (one read per block per payer), or,
   * while that read is in flight, the last read if it is at most `maxStaleBlocks` behind (`fresh`: always wait for
   * the read at `head`). `block` says which block the facts are of.
   */
  payerFacts(payer: string, head: ChainHead, options: { fresh?: boolean } = {}): Promise<PayerFacts> {
    const key = payer.toLowerCase();
    const entry = this.payers.get(key);
    const reading = entry && entry.block >= head.number ? entry.facts : this.read(key, payer, head);
    const known = this.payers.get(key)?.known;
    if (!options.fresh && known && known.block + this.maxStaleBlocks >= head.number) return Promise.resolve(known);
    return reading;
  }

  /** Reads the payer's facts at `head`, remembered as the payer's newest read (and, once answered, its newest known). */
  private read(key: string, payer: string, head: ChainHead): Promise<PayerFacts> {
    const address = payer as Address;
    const blockNumber = head.number;
    const facts = Promise.all([
      this.options.client.getCode({ address, blockNumber }),
      this.options.client.readContract({
        address: this.options.asset,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [address],
        blockNumber,
      }),
    ]).then(([code, balance]): PayerFacts => ({ block: blockNumber, hasCode: !!code && code !== '0x', balance }));
    const known = this.payers.get(key)?.known;
    const entry: PayerEntry = { block: blockNumber, facts, ...(known ? { known } : {}) };
    this.payers.set(key, entry);
    facts.then(
      (answered) => {
        if (!entry.known || entry.known.block < answered.block) entry.known = answered;
      },
      () => {
        // A failed read is not remembered: the entry falls back to what was known, and the next request reads again.
        if (this.payers.get(key) !== entry) return;
        if (!entry.known) this.payers.delete(key);
        else Object.assign(entry, { block: entry.known.block, facts: Promise.resolve(entry.known) });
      },
    );
    return facts;
  }

  /** For /health: the head's number and age, and the last read failure. */
  status(): {
    head?: { number: number; age_ms: number; read_ms_ago: number };
    error?: { at: string; message: string };
  } {
    const now = Date.now();
    return {
      ...(this.current
        ? {
            head: {
              number: Number(this.current.number),
              age_ms: Math.max(0, now - this.current.timestampMs),
              read_ms_ago: now - this.current.readAtMs,
            },
          }
        : {}),
      ...(this.failure
        ? { error: { at: new Date(this.failure.atMs).toISOString(), message: this.failure.message } }
        : {}),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
  }
}

const authorizationKey = (authorizer: string, nonce: string) => `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;
