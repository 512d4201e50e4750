/**
 * The settler: settles verified EIP-3009 authorizations from one key, under
 * any concurrency. `settle()` queues an authorization and resolves with its
 * x402 SettleResponse: once its transaction is broadcast (answer on
 * broadcast), or once it is on chain or can no longer be (answer on
 * confirmation).
 *
 *  - Answer on broadcast (`answerOn: 'broadcast'`, PAYMENT_ANSWER_ON): an
 *    authorization the risk caps admit (settlement-risk.ts) is answered as
 *    soon as the node accepted the transaction carrying it (its hash is the
 *    PAYMENT-RESPONSE `transaction`), after it is written to the durable record
 *    (unconfirmed-settlements.ts). Its confirmation is then followed behind:
 *    retried while the authorization is valid (a payer who spent its balance
 *    may top it up), and if it finally fails, the value is a loss: logged,
 *    counted on /metrics and /health, and its payer put on hold. What the caps
 *    do not admit, and everything in confirmation mode, is answered once
 *    confirmed, as before.
 *  - Batching: while a transaction is being sent, new authorizations wait;
 *    the next transaction takes up to `batchMax` of them in one Multicall3
 *    aggregate3 (settlement-calls.ts). A lone one goes out directly. No delay
 *    is added to wait for a batch: batches form from what queues up during a
 *    send, so they grow with the load and with the RPC's round trip.
 *  - Sending and confirming are separate: a send (fees, signature, broadcast)
 *    does not wait for earlier receipts, so the answer on broadcast does not
 *    depend on the block time. At most `pipeline` transactions of this process
 *    await their receipt at once (PAYMENT_SETTLE_IN_FLIGHT).
 *  - Gas: a first attempt is sent with a gas limit from the call count and
 *    fees read at most once a second (no simulation, no estimate: its only
 *    RPC call is the broadcast; unused gas is not paid). A retry is simulated first (eth_call)
 *    and calls that would fail are taken out with their reason; a lone one is
 *    estimated, whose revert says why.
 *  - Nonces: each transaction is signed and broadcast under the nonce lease
 *    (nonce-lease.ts): one sequence per settler key, in this process or
 *    across replicas.
 *  - Retries: an authorization whose transaction failed, reverted, or got no
 *    receipt in time is tried again (backoff 0.2 s doubling to 2 s) while it
 *    is valid and within `timeoutMs` of being queued (answered ones: while
 *    valid); a reason no retry can change (used nonce, expired, signature)
 *    ends it at once. An authorization already broadcast is never
 *    double-charged: the token refuses a used nonce, and a "used" answer is
 *    checked against the token's AuthorizationUsed event for it (whoever sent
 *    the transaction, the transfer went to the signed recipient), which then
 *    counts as success.
 */
import type { Account, Address, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem';
import type { SettleResponse } from '@x402/core/types';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import type { NonceLease } from './nonce-lease.js';
import { ReceiptWatcher } from './receipt-watcher.js';
import { paymentMetrics } from './payment-metrics.js';
import {
  aggregate3Failures,
  AUTHORIZATION_USED,
  authorizationKey,
  classifyFailure,
  failureMessage,
  failureText,
  settledAuthorizations,
  settlementTransaction,
  type SignedAuthorization,
} from './settlement-calls.js';
import type { SettlementRisk } from './settlement-risk.js';
import type { UnconfirmedSettlement, UnconfirmedSettlements } from './unconfirmed-settlements.js';

/** When a paid answer is released: once its settlement is broadcast, or once it is confirmed on chain. */
export type AnswerOn = 'broadcast' | 'confirmation';

export interface SettlementQueueOptions {
  publicClient: PublicClient;
  /** A wallet with a local account (it signs; the node only relays). */
  wallet: WalletClient<Transport, Chain, Account>;
  asset: Address;
  network: string;
  lease: NonceLease;
  /** Most authorizations per transaction; 1 = one transferWithAuthorization per transaction. */
  batchMax: number;
  /** Transactions of this process awaiting their receipt at once. Default 8. */
  pipeline?: number;
  /** How often the receipts' watcher looks for a new block, ms. Default 500. */
  receiptPollMs?: number;
  /** Longest a settlement answered on confirmation may take from queueing (receipts included). */
  timeoutMs: number;
  /** Default `confirmation`. `broadcast` needs `risk` and `record`. */
  answerOn?: AnswerOn;
  risk?: SettlementRisk;
  /** The durable record of answered, unconfirmed settlements. */
  record?: UnconfirmedSettlements;
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
  /** Admitted by the risk caps: answered on broadcast. */
  early: boolean;
  /** Its answer is out (success on broadcast); its end is followed behind. */
  answered: boolean;
  answeredAtMs?: number;
  last?: { reason: string; message: string };
  resolve(response: SettleResponse): void;
}

export interface SettlementStats {
  settled: number;
  failed: number;
  transactions: number;
  /** Transactions carrying more than one authorization. */
  batches: number;
  /** Answered on broadcast, before confirmation. */
  answeredOnBroadcast: number;
  /** Answered on broadcast, then finally failed: the gateway's losses. */
  lost: number;
  lastError?: { atMs: number; reason: string; message: string };
  lastSettledAtMs?: number;
}

/** Gas of one transferWithAuthorization inside aggregate3, with room (USDC's costs about 60-80k); unused gas is not paid. */
const GAS_PER_CALL = 100_000n;
const GAS_PER_TRANSACTION = 60_000n;
/** Sends (fees, signature, broadcast) of this process at once; the nonce lease orders their broadcasts. */
const SENDING = 2;
/** How long fees read from the chain are reused (half a Base block): viem's estimate doubles the base fee, ample for that long. */
const FEES_MS = 1000;
/** How far back a "used" authorization's AuthorizationUsed event is looked for, in blocks. */
const USED_LOOKBACK_BLOCKS = 5000n;

export class SettlementQueue {
  private pending: Item[] = [];
  private sending = 0;
  private confirming = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private feeCache: { atMs: number; fees: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> } | undefined;
  private readonly idle = new Set<() => void>();
  private readonly pipeline: number;
  private readonly answerOn: AnswerOn;
  private readonly receipts: ReceiptWatcher;
  readonly stats: SettlementStats = {
    settled: 0,
    failed: 0,
    transactions: 0,
    batches: 0,
    answeredOnBroadcast: 0,
    lost: 0,
  };

  constructor(private readonly options: SettlementQueueOptions) {
    this.pipeline = options.pipeline ?? 8;
    this.receipts = new ReceiptWatcher(options.publicClient, options.receiptPollMs ?? 500);
    this.answerOn = options.answerOn === 'broadcast' && options.risk && options.record ? 'broadcast' : 'confirmation';
  }

  get answersOn(): AnswerOn {
    return this.answerOn;
  }

  settle(auth: SignedAuthorization): Promise<SettleResponse> {
    return new Promise((resolve) => {
      const early = this.answerOn === 'broadcast' && this.options.risk!.admit(auth.from, auth.value);
      this.riskChanged();
      const validUntilMs = Number(auth.validBefore) * 1000 - 2000;
      this.pending.push({
        auth,
        key: authorizationKey(auth.from, auth.nonce),
        // Answered within the settle timeout, or not at all; once answered, followed while valid.
        deadlineMs: Math.min(Date.now() + this.options.timeoutMs, validUntilMs),
        notBeforeMs: 0,
        attempts: 0,
        broadcasts: [],
        early,
        answered: false,
        resolve,
      });
      this.kick();
    });
  }

  /**
   * Follows settlements a previous run answered and did not see confirmed (the durable record): each is found on
   * chain (confirmed), or settled again while valid, or ends as a loss.
   */
  recover(records: readonly UnconfirmedSettlement[]): void {
    for (const r of records) {
      this.options.risk?.restoreUnconfirmed(r.auth.from, r.auth.value);
      this.pending.push({
        auth: r.auth,
        key: authorizationKey(r.auth.from, r.auth.nonce),
        deadlineMs: Number(r.auth.validBefore) * 1000 - 2000,
        notBeforeMs: 0,
        // Simulated first: a recovered one may be settled already.
        attempts: 1,
        broadcasts: [...r.broadcasts],
        early: true,
        answered: true,
        answeredAtMs: r.answeredAtMs,
        resolve: () => undefined,
      });
    }
    this.riskChanged();
    if (records.length) this.options.logger?.info({ settlements: records.length }, 'x402 settlement: recovering');
    this.kick();
  }

  /** Authorizations waiting, being sent or awaiting their receipt (answered ones included). */
  get backlog(): number {
    return this.pending.length + this.sending + this.confirming;
  }

  private kick(): void {
    if (this.stopped) return;
    const now = Date.now();
    while (this.sending < SENDING && this.sending + this.confirming < this.pipeline) {
      const ready = this.pending.filter((i) => i.notBeforeMs <= now);
      if (!ready.length) break;
      const batch = ready.slice(0, this.options.batchMax);
      const taken = new Set(batch);
      this.pending = this.pending.filter((i) => !taken.has(i));
      this.sending += 1;
      let sent = false;
      const onSent = () => {
        if (sent) return;
        sent = true;
        this.sending -= 1;
        this.confirming += 1;
        this.kick();
      };
      void this.run(batch, onSent).finally(() => {
        if (sent) this.confirming -= 1;
        else this.sending -= 1;
        this.kick();
      });
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length && this.sending + this.confirming < this.pipeline) {
      const next = Math.min(...this.pending.map((i) => i.notBeforeMs));
      this.timer = setTimeout(() => this.kick(), Math.max(1, next - now));
    }
    if (!this.backlog) for (const done of this.idle) done();
  }

  private async run(batch: Item[], onSent: () => void): Promise<void> {
    const now = Date.now();
    let live: Item[] = [];
    for (const i of batch) {
      if (i.deadlineMs > now) live.push(i);
      else await this.expire(i);
    }
    try {
      const retrying = live.some((i) => i.attempts > 0);
      if (retrying && live.length > 1) live = await this.simulate(live);
      if (!live.length) return;
      const { to, data } = settlementTransaction(
        this.options.asset,
        live.map((i) => i.auth),
      );
      const { wallet } = this.options;
      let request;
      try {
        request = retrying
          ? await this.estimated(to, data)
          : {
              to,
              data,
              chainId: wallet.chain.id,
              type: 'eip1559' as const,
              gas: GAS_PER_TRANSACTION + GAS_PER_CALL * BigInt(live.length),
              ...(await this.fees()),
            };
      } catch (err) {
        return await this.retryOrFail(live, `${failureText(err)} ${errorMessage(err)}`);
      }
      const hash = await this.options.lease.withNonce(async (nonce) => {
        const serializedTransaction = await wallet.signTransaction({ ...request, nonce } as Parameters<
          typeof wallet.signTransaction
        >[0]);
        return wallet.sendRawTransaction({ serializedTransaction });
      });
      this.stats.transactions += 1;
      if (live.length > 1) this.stats.batches += 1;
      for (const i of live) i.broadcasts.push(hash);
      await this.answerOnBroadcast(live, hash);
      onSent();
      const timeout = Math.max(1000, Math.min(...live.map((i) => i.deadlineMs)) - Date.now());
      const receipt = await this.receipts.wait(hash, timeout);
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
      // Broadcast or receipt failed: unknown outcome; a retry finds out (a used nonce is checked on chain).
      await this.retryOrFail(live, failureText(err), true);
    }
  }

  /** A retry's transaction, estimated: a lone authorization's estimate reverts with its reason. */
  private async estimated(to: Address, data: Hex) {
    const { wallet } = this.options;
    const prepared = await wallet.prepareTransactionRequest({
      account: wallet.account,
      chain: wallet.chain,
      to,
      data,
      parameters: ['fees', 'gas', 'chainId', 'type'],
    });
    return { ...prepared, gas: ((prepared.gas ?? 0n) * 12n) / 10n };
  }

  /** EIP-1559 fees, read at most once per FEES_MS: a first attempt's only RPC call is then its broadcast. */
  private async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const now = Date.now();
    if (!this.feeCache || now - this.feeCache.atMs > FEES_MS) {
      this.feeCache = {
        atMs: now,
        fees: this.options.publicClient.estimateFeesPerGas().then(
          (f) => ({ maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas }),
          (err: unknown) => {
            this.feeCache = undefined;
            throw err;
          },
        ),
      };
    }
    return this.feeCache.fees;
  }

  /** The admitted ones of a broadcast batch: recorded durably, then answered with the transaction's hash. */
  private async answerOnBroadcast(items: readonly Item[], hash: Hex): Promise<void> {
    const { record, logger } = this.options;
    if (!record) return;
    await Promise.all(
      items
        .filter((i) => i.early)
        .map(async (i) => {
          const answeredAtMs = i.answeredAtMs ?? Date.now();
          try {
            await record.put({ auth: i.auth, broadcasts: i.broadcasts, answeredAtMs });
          } catch (err) {
            if (i.answered) return; // the older record still names the authorization
            // Not durable: not answered before confirmation.
            logger?.warn({ err: errorMessage(err) }, 'x402 settlement: record unavailable, answering on confirmation');
            this.unadmit(i);
            return;
          }
          if (i.answered) return;
          i.answered = true;
          i.answeredAtMs = answeredAtMs;
          i.deadlineMs = Number(i.auth.validBefore) * 1000 - 2000;
          this.stats.answeredOnBroadcast += 1;
          paymentMetrics.answeredOnBroadcast.inc();
          i.resolve(this.success(i, hash));
        }),
    );
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
    const classified = unknownOutcome
      ? { reason: 'invalid_exact_evm_transaction_failed', retry: true }
      : classifyFailure(message);
    for (const i of items) {
      const { reason } = classified;
      // "Used": by one of the transactions carrying it (ours, or another replica's), or cancelled by the payer.
      if (reason === 'invalid_exact_evm_nonce_already_used' && (await this.settledEarlier(i))) continue;
      // An answered payment whose payer lacks the balance now is retried while valid: it may be topped up.
      const retry = classified.retry || (i.answered && reason === 'invalid_exact_evm_insufficient_balance');
      i.last = { reason, message: (message.split('\n')[0] ?? message).slice(0, 300) };
      this.stats.lastError = { atMs: Date.now(), reason, message: i.last.message };
      i.attempts += 1;
      if (retry && Date.now() < i.deadlineMs) {
        i.notBeforeMs = Date.now() + Math.min(2000, 200 * 2 ** (i.attempts - 1));
        this.pending.push(i);
        this.options.logger?.warn(
          { payer: i.auth.from, attempt: i.attempts, reason, err: i.last.message, answered: i.answered },
          'x402 settlement: retrying',
        );
      } else {
        await this.fail(i, reason, i.last.message);
      }
    }
  }

  /** Past its deadline: settled after all (seen on chain), or failed. */
  private async expire(i: Item): Promise<void> {
    if (await this.settledEarlier(i)) return;
    await this.fail(
      i,
      i.last?.reason ?? 'invalid_exact_evm_payload_authorization_valid_before',
      i.last?.message ?? 'settlement deadline passed',
    );
  }

  /** Settled already: by one of its own transactions, or by any transaction (its AuthorizationUsed event). */
  private async settledEarlier(i: Item): Promise<boolean> {
    const { publicClient, asset } = this.options;
    for (const hash of i.broadcasts) {
      const receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt?.status === 'success' && settledAuthorizations(asset, receipt.logs).has(i.key)) {
        this.succeed(i, hash, receipt.blockNumber);
        return true;
      }
    }
    try {
      const head = await publicClient.getBlockNumber();
      const [used] = await publicClient.getLogs({
        address: asset,
        event: AUTHORIZATION_USED,
        args: { authorizer: i.auth.from, nonce: i.auth.nonce },
        fromBlock: head > USED_LOOKBACK_BLOCKS ? head - USED_LOOKBACK_BLOCKS : 0n,
        toBlock: head,
      });
      if (used?.transactionHash && used.blockNumber !== null) {
        this.succeed(i, used.transactionHash, used.blockNumber);
        return true;
      }
    } catch {
      // Not known now: the caller's classification stands.
    }
    return false;
  }

  private success(i: Item, transaction: Hex): SettleResponse {
    return {
      success: true,
      transaction,
      network: this.options.network as SettleResponse['network'],
      payer: i.auth.from,
    };
  }

  private succeed(i: Item, transaction: Hex, block: bigint): void {
    this.stats.settled += 1;
    this.stats.lastSettledAtMs = Date.now();
    this.options.onSettled?.(i.auth, block);
    if (i.early) this.options.risk!.confirmed(i.auth.from, i.auth.value);
    this.riskChanged();
    if (i.answered) {
      this.options.record?.done(i.auth).catch((err: unknown) => {
        this.options.logger?.warn({ err: errorMessage(err) }, 'x402 settlement: record not updated (confirmed)');
      });
      return;
    }
    i.resolve(this.success(i, transaction));
  }

  private async fail(i: Item, reason: string, message: string): Promise<void> {
    this.stats.failed += 1;
    this.options.onFailed?.(i.auth, reason);
    const { logger, record } = this.options;
    if (i.answered) {
      // Answered on broadcast and never settled: the gateway's loss, within the caps.
      const loss = this.options.risk!.lost(i.auth.from, i.auth.value, reason);
      this.riskChanged();
      this.stats.lost += 1;
      paymentMetrics.settlementLosses.inc({ reason });
      paymentMetrics.settlementLostAtomic.inc(Number(i.auth.value));
      logger?.error(
        {
          payer: i.auth.from,
          value_atomic: i.auth.value.toString(),
          reason,
          err: message,
          attempts: i.attempts,
          transactions: i.broadcasts,
        },
        'x402 settlement: answered on broadcast and lost; payer on hold',
      );
      try {
        await record?.loss({ key: i.key, payer: loss.payer, valueAtomic: i.auth.value, reason, atMs: loss.atMs });
        await record?.done(i.auth);
      } catch (err) {
        logger?.warn({ err: errorMessage(err) }, 'x402 settlement: record not updated (loss)');
      }
      return;
    }
    if (i.early) this.unadmit(i);
    logger?.warn({ payer: i.auth.from, reason, err: message, attempts: i.attempts }, 'x402 settlement: failed');
    i.resolve({
      success: false,
      errorReason: reason,
      errorMessage: failureMessage(reason),
      transaction: i.broadcasts.at(-1) ?? '',
      network: this.options.network as SettleResponse['network'],
      payer: i.auth.from,
    });
  }

  /** Admitted but not answered early after all: its exposure is given back, its answer waits for the end. */
  private unadmit(i: Item): void {
    i.early = false;
    this.options.risk?.confirmed(i.auth.from, i.auth.value);
    this.riskChanged();
  }

  private riskChanged(): void {
    const risk = this.options.risk;
    if (risk) paymentMetrics.settlementUnconfirmedAtomic.set(Number(risk.unconfirmedAtomic));
  }

  /** Resolves once nothing is queued, being sent or awaiting its receipt. */
  drained(): Promise<void> {
    if (!this.backlog) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.idle.delete(done);
        resolve();
      };
      this.idle.add(done);
    });
  }

  /**
   * Shutdown: answered settlements still waiting for a retry are left to the durable record (the next start
   * follows them); unanswered ones and transactions in flight are waited for, at most `waitMs`.
   */
  async stop(waitMs: number): Promise<void> {
    this.pending = this.pending.filter((i) => !i.answered);
    this.kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.drained(), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.receipts.stop();
  }
}
