/**
 * Receipts of many transactions at once for the cost of one: while any is awaited, the watcher reads each new
 * block's transaction hashes once and fetches the receipt of only the awaited ones it carries. viem's
 * `waitForTransactionReceipt` polls every awaited hash on its own (a settler with a hundred transactions in flight
 * on 2 s blocks would ask a hundred times per poll); hand-written for that reason.
 *
 * A hash not seen within its timeout rejects (the settler then finds out on chain what became of it). A chain
 * reorganisation is not followed: a receipt once delivered stays delivered (the settler's retries check the chain
 * again for anything that failed).
 */
import type { Hash, PublicClient, TransactionReceipt } from 'viem';

const LOOK_BACK = 3n;

interface Waiter {
  deadlineMs: number;
  /** The head when the watcher first looked for it. */
  sinceHead?: bigint;
  resolve(receipt: TransactionReceipt): void;
  reject(err: Error): void;
}

export class ReceiptWatcher {
  private readonly waiters = new Map<string, Waiter[]>();
  private lastBlock: bigint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly client: PublicClient,
    private readonly pollMs: number,
  ) {}

  wait(hash: Hash, timeoutMs: number): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      const key = hash.toLowerCase();
      // Idle until now: the blocks read before are old news; start again near the head.
      if (!this.waiters.size && !this.polling) this.lastBlock = undefined;
      const list = this.waiters.get(key) ?? [];
      list.push({ deadlineMs: Date.now() + timeoutMs, resolve, reject });
      this.waiters.set(key, list);
      this.schedule(0);
    });
  }

  get awaited(): number {
    return this.waiters.size;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const list of this.waiters.values()) for (const w of list) w.reject(new Error('receipt watcher stopped'));
    this.waiters.clear();
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.polling || !this.waiters.size) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, delayMs);
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      const head = await this.client.getBlockNumber({ cacheTime: 0 });
      // A transaction may have landed a block or two before the first poll (automining): look back a little.
      let next = this.lastBlock === undefined ? (head > LOOK_BACK ? head - LOOK_BACK : 0n) : this.lastBlock + 1n;
      for (; next <= head && this.waiters.size; next++) {
        const block = await this.client.getBlock({ blockNumber: next });
        const mine = block.transactions.filter((h) => this.waiters.has(h.toLowerCase()));
        await Promise.all(mine.map((h) => this.deliver(h)));
        this.lastBlock = next;
      }
      await this.askDirectly(head);
    } catch {
      // The node did not answer: the next poll tries again; deadlines still apply.
    } finally {
      this.polling = false;
    }
    this.expire();
    this.schedule(this.pollMs);
  }

  /** Not found in the blocks read two blocks after it was awaited (mined before the scan began?): asked for by hash. */
  private async askDirectly(head: bigint): Promise<void> {
    const late: Hash[] = [];
    for (const [key, list] of this.waiters) {
      const first = list[0]!;
      first.sinceHead ??= head;
      if (head - first.sinceHead >= 2n) late.push(key as Hash);
    }
    await Promise.all(
      late.map(async (hash) => {
        const receipt = await this.client.getTransactionReceipt({ hash }).catch(() => undefined);
        if (receipt) this.deliverReceipt(hash, receipt);
      }),
    );
  }

  private deliverReceipt(hash: Hash, receipt: TransactionReceipt): void {
    const key = hash.toLowerCase();
    for (const w of this.waiters.get(key) ?? []) w.resolve(receipt);
    this.waiters.delete(key);
  }

  private async deliver(hash: Hash): Promise<void> {
    this.deliverReceipt(hash, await this.client.getTransactionReceipt({ hash }));
  }

  private expire(): void {
    const now = Date.now();
    for (const [key, list] of this.waiters) {
      const left = list.filter((w) => {
        if (w.deadlineMs > now) return true;
        w.reject(new Error(`no receipt for ${key} in time`));
        return false;
      });
      if (left.length) this.waiters.set(key, left);
      else this.waiters.delete(key);
    }
  }
}
