/**
 * The settler: settles verified EIP-3009 authorizations from one key, under
 * any concurrency. `settle()` queues an authorization and resolves with its
 * x402 SettleResponse once it is on chain or can no longer be.
 *
 *  - Batching: while transactions are in flight, new authorizations wait;
 *    the next transaction takes up to `batchMax` of them in one Multicall3
 *    aggregate3 (settlement-calls.ts). A lone one goes out directly. No delay
 *    is added to wait for a batch: batches form from what queues up while
 *    earlier transactions mine. Before sending, a batch is simulated (eth_call)
 *    and calls that would fail are taken out with their reason, so gas is
 *    paid only for authorizations that settle.
 *  - Nonces: each transaction is signed and broadcast under the nonce lease
 *    (nonce-lease.ts): one sequence per settler key, in this process or
 *    across replicas. At most `pipeline` transactions of this process are in
 *    flight at once (PAYMENT_SETTLE_IN_FLIGHT).
 *  - Retries: an authorization whose transaction failed, reverted, or got no
 *    receipt in time is tried again (backoff 0.2 s doubling to 2 s) while it
 *    is valid and within `timeoutMs` of being queued; a reason no retry can
 *    change (used nonce, expired, balance, signature) ends it at once. An
 *    authorization already broadcast is never double-charged: the token
 *    refuses a used nonce, and a "used" answer is checked against this
 *    authorization's own earlier transactions, which then count as success.
 */
import type { Account, Address, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';
import type { SettleResponse } from '@x402/core/types';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import type { NonceLease } from './nonce-lease.js';
import {
  aggregate3Failures,
  authorizationKey,
  classifyFailure,
  failureMessage,
  failureText,
  settledAuthorizations,
  settlementTransaction,
  type SignedAuthorization,
} from './settlement-calls.js';

export interface SettlementQueueOptions {
  publicClient: PublicClient;
  /** A wallet with a local account (it signs; the node only relays). */
  wallet: WalletClient<Transport, Chain, Account>;
  asset: Address;
  network: string;
  lease: NonceLease;
  /** Most authorizations per transaction; 1 = one transferWithAuthorization per transaction. */
  batchMax: number;
  /** Transactions of this process in flight at once. Default 8. */
  pipeline?: number;
  /** Longest a settlement may take from queueing (receipts included). */
  timeoutMs: number;
  logger?: Logger;
  /** Settled in `block` (reservations, used nonces). */
  onSettled?(authorization: SignedAuthorization, block: bigint): void;
  /** Finally failed. */
  onFailed?(authorization: SignedAuthorization, reason: string): void;
}

interface Item {
  auth: SignedAuthorization;
  key: string;
  deadlineMs: number;
  notBeforeMs: number;
  attempts: number;
  broadcasts: Hex[];
  last?: { reason: string; message: string };
  resolve(response: SettleResponse): void;
}

export interface SettlementStats {
  settled: number;
  failed: number;
  transactions: number;
  /** Transactions carrying more than one authorization. */
  batches: number;
  lastError?: { atMs: number; reason: string; message: string };
  lastSettledAtMs?: number;
}

export class SettlementQueue {
  private pending: Item[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly idle = new Set<() => void>();
  private readonly pipeline: number;
  readonly stats: SettlementStats = { settled: 0, failed: 0, transactions: 0, batches: 0 };

  constructor(private readonly options: SettlementQueueOptions) {
    this.pipeline = options.pipeline ?? 8;
  }

  settle(auth: SignedAuthorization): Promise<SettleResponse> {
    return new Promise((resolve) => {
      const deadlineMs = Math.min(Date.now() + this.options.timeoutMs, Number(auth.validBefore) * 1000 - 2000);
      this.pending.push({
        auth,
        key: authorizationKey(auth.from, auth.nonce),
        deadlineMs,
        notBeforeMs: 0,
        attempts: 0,
        broadcasts: [],
        resolve,
      });
      this.kick();
    });
  }

  /** Authorizations waiting or in flight. */
  get backlog(): number {
    return this.pending.length + this.inFlight;
  }

  private kick(): void {
    const now = Date.now();
    while (this.inFlight < this.pipeline) {
      const ready = this.pending.filter((i) => i.notBeforeMs <= now);
      if (!ready.length) break;
      const batch = ready.slice(0, this.options.batchMax);
      const taken = new Set(batch);
      this.pending = this.pending.filter((i) => !taken.has(i));
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.kick();
      });
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length && this.inFlight < this.pipeline) {
      const next = Math.min(...this.pending.map((i) => i.notBeforeMs));
      this.timer = setTimeout(() => this.kick(), Math.max(1, next - now));
    }
    if (!this.pending.length && !this.inFlight) for (const done of this.idle) done();
  }

  private async run(batch: Item[]): Promise<void> {
    const now = Date.now();
    let live: Item[] = [];
    for (const i of batch) {
      if (i.deadlineMs > now) live.push(i);
      else
        this.fail(
          i,
          i.last?.reason ?? 'invalid_exact_evm_transaction_failed',
          i.last?.message ?? 'settlement deadline passed',
        );
    }
    try {
      if (live.length > 1) live = await this.simulate(live);
      if (!live.length) return;
      const { to, data } = settlementTransaction(
        this.options.asset,
        live.map((i) => i.auth),
      );
      const { wallet } = this.options;
      let prepared;
      try {
        prepared = await wallet.prepareTransactionRequest({
          account: wallet.account,
          chain: wallet.chain,
          to,
          data,
          parameters: ['fees', 'gas', 'chainId', 'type'],
        });
      } catch (err) {
        // A lone authorization's gas estimate reverts with its reason.
        return await this.retryOrFail(live, `${failureText(err)} ${errorMessage(err)}`);
      }
      const request = { ...prepared, gas: ((prepared.gas ?? 0n) * 12n) / 10n };
      const hash = await this.options.lease.withNonce(async (nonce) => {
        const serializedTransaction = await wallet.signTransaction({ ...request, nonce } as Parameters<
          typeof wallet.signTransaction
        >[0]);
        return wallet.sendRawTransaction({ serializedTransaction });
      });
      this.stats.transactions += 1;
      if (live.length > 1) this.stats.batches += 1;
      for (const i of live) i.broadcasts.push(hash);
      const timeout = Math.max(1000, Math.min(...live.map((i) => i.deadlineMs)) - Date.now());
      const receipt = await this.options.publicClient.waitForTransactionReceipt({ hash, timeout });
      const settled =
        receipt.status === 'success' ? settledAuthorizations(this.options.asset, receipt.logs) : new Set<string>();
      const missed: Item[] = [];
      for (const i of live) {
        if (settled.has(i.key)) this.succeed(i, hash, receipt.blockNumber);
        else missed.push(i);
      }
      if (missed.length)
        await this.retryOrFail(
          missed,
          receipt.status === 'success' ? 'the call failed inside the batch' : `transaction ${hash} reverted`,
          true,
        );
    } catch (err) {
      // Broadcast or receipt failed: unknown outcome; a retry finds out (a used nonce is checked against our own transactions).
      await this.retryOrFail(live, failureText(err), true);
    }
  }

  /** The batch minus the calls that would fail now; those are settled from an earlier transaction, retried or failed. */
  private async simulate(items: Item[]): Promise<Item[]> {
    const { to, data } = settlementTransaction(
      this.options.asset,
      items.map((i) => i.auth),
    );
    const { data: result } = await this.options.publicClient.call({ account: this.options.wallet.account, to, data });
    const failures = aggregate3Failures(result ?? '0x');
    const ok: Item[] = [];
    for (const [n, i] of items.entries()) {
      const failure = failures[n];
      if (failure === undefined) ok.push(i);
      else await this.retryOrFail([i], failure);
    }
    return ok;
  }

  private async retryOrFail(items: Item[], message: string, unknownOutcome = false): Promise<void> {
    const { reason, retry } = unknownOutcome
      ? { reason: 'invalid_exact_evm_transaction_failed', retry: true }
      : classifyFailure(message);
    for (const i of items) {
      // "Used" after one of our own broadcasts: that transaction may be the one that used it.
      if (reason === 'invalid_exact_evm_nonce_already_used' && i.broadcasts.length && (await this.settledEarlier(i)))
        continue;
      i.last = { reason, message: (message.split('\n')[0] ?? message).slice(0, 300) };
      this.stats.lastError = { atMs: Date.now(), reason, message: i.last.message };
      i.attempts += 1;
      if (retry && Date.now() < i.deadlineMs) {
        i.notBeforeMs = Date.now() + Math.min(2000, 200 * 2 ** (i.attempts - 1));
        this.pending.push(i);
        this.options.logger?.warn(
          { payer: i.auth.from, attempt: i.attempts, reason, err: i.last.message },
          'x402 settlement: retrying',
        );
      } else {
        this.fail(i, reason, i.last.message);
      }
    }
  }

  private async settledEarlier(i: Item): Promise<boolean> {
    for (const hash of i.broadcasts) {
      const receipt = await this.options.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt?.status === 'success' && settledAuthorizations(this.options.asset, receipt.logs).has(i.key)) {
        this.succeed(i, hash, receipt.blockNumber);
        return true;
      }
    }
    return false;
  }

  private succeed(i: Item, transaction: Hex, block: bigint): void {
    this.stats.settled += 1;
    this.stats.lastSettledAtMs = Date.now();
    this.options.onSettled?.(i.auth, block);
    i.resolve({
      success: true,
      transaction,
      network: this.options.network as SettleResponse['network'],
      payer: i.auth.from,
    });
  }

  private fail(i: Item, reason: string, message: string): void {
    this.stats.failed += 1;
    this.options.onFailed?.(i.auth, reason);
    this.options.logger?.warn(
      { payer: i.auth.from, reason, err: message, attempts: i.attempts },
      'x402 settlement: failed',
    );
    i.resolve({
      success: false,
      errorReason: reason,
      errorMessage: failureMessage(reason),
      transaction: i.broadcasts.at(-1) ?? '',
      network: this.options.network as SettleResponse['network'],
      payer: i.auth.from,
    });
  }

  /** Resolves once nothing is queued or in flight. */
  drained(): Promise<void> {
    if (!this.pending.length && !this.inFlight) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.idle.delete(done);
        resolve();
      };
      this.idle.add(done);
    });
  }
}
