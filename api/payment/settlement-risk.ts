/**
 * The risk the gateway takes when it answers a paid call on broadcast (PAYMENT_ANSWER_ON=broadcast): the value
 * answered but not yet confirmed on chain, bounded per payer and in total.
 *
 *  - `admit(payer, value)` says whether one more payment may be answered before its settlement is confirmed:
 *    the payer is not on hold, and the payer's unconfirmed value plus what it lost in the hold window stays
 *    within `perPayerAtomic`, and the total unconfirmed value plus every loss in the hold window stays within
 *    `totalAtomic`. An admitted payment is counted until `confirmed` or `lost`. Not admitted: the answer waits
 *    for confirmation, as in PAYMENT_ANSWER_ON=confirmation (nothing is refused here).
 *  - `lost(payer, value, reason)`: a settlement answered on broadcast finally failed (the payer spent its balance
 *    or cancelled the authorization before it was mined, or it expired unmined). The value is a loss; the payer is
 *    put on hold for `holdMs`: its payments are answered only once confirmed until then.
 *
 * Since losses stay counted against the caps for `holdMs`, the gateway loses at most `totalAtomic` in any
 * `holdMs` window, and at most `perPayerAtomic` to one payer, per API process (docs/payment.md, "What the gateway
 * can lose"). The state is this process's; the unconfirmed settlements themselves are durable
 * (unconfirmed-settlements.ts) and are counted again after a restart.
 */

export interface SettlementRiskLimits {
  /** Most value (atomic units) answered but unconfirmed, plus lost within the hold window, per payer. */
  perPayerAtomic: bigint;
  /** The same over every payer. */
  totalAtomic: bigint;
  /** How long a loss keeps its payer on hold and counts against the caps, ms. */
  holdMs: number;
}

export interface SettlementLoss {
  payer: string;
  valueAtomic: bigint;
  reason: string;
  atMs: number;
}

export interface SettlementRiskSnapshot {
  unconfirmed_atomic: string;
  unconfirmed_payers: number;
  payers_on_hold: number;
  losses_in_window: number;
  lost_in_window_atomic: string;
  limits: { per_payer_atomic: string; total_atomic: string; hold_seconds: number };
  last_loss?: { payer: string; value_atomic: string; reason: string; at: string };
}

export class SettlementRisk {
  private readonly unconfirmed = new Map<string, bigint>();
  private unconfirmedTotal = 0n;
  private losses: SettlementLoss[] = [];
  private lostSum = 0n;
  /** Losses in the window per payer: a payer with any is on hold. */
  private readonly holds = new Map<string, number>();

  constructor(
    readonly limits: SettlementRiskLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** May this payment be answered before it is confirmed? If so it is counted as unconfirmed. */
  admit(payer: string, valueAtomic: bigint): boolean {
    const key = payer.toLowerCase();
    this.forgetOldLosses();
    if (this.holds.has(key)) return false;
    const payerExposure = (this.unconfirmed.get(key) ?? 0n) + valueAtomic;
    const totalExposure = this.unconfirmedTotal + this.lostInWindow() + valueAtomic;
    if (payerExposure > this.limits.perPayerAtomic || totalExposure > this.limits.totalAtomic) return false;
    this.unconfirmed.set(key, payerExposure);
    this.unconfirmedTotal += valueAtomic;
    return true;
  }

  /** An admitted payment was confirmed on chain. */
  confirmed(payer: string, valueAtomic: bigint): void {
    this.release(payer.toLowerCase(), valueAtomic);
  }

  /** An admitted payment will never settle: a loss, and its payer on hold. */
  lost(payer: string, valueAtomic: bigint, reason: string): SettlementLoss {
    const key = payer.toLowerCase();
    this.release(key, valueAtomic);
    const loss = { payer: key, valueAtomic, reason, atMs: this.now() };
    this.record(loss);
    return loss;
  }

  /** A loss recorded before a restart (unconfirmed-settlements.ts), still within the window. */
  restoreLoss(loss: SettlementLoss): void {
    if (loss.atMs <= this.now() - this.limits.holdMs) return;
    this.record({ ...loss, payer: loss.payer.toLowerCase() });
    this.losses.sort((a, b) => a.atMs - b.atMs);
  }

  /** A payment answered before a restart and still unconfirmed: counted again (even above the caps). */
  restoreUnconfirmed(payer: string, valueAtomic: bigint): void {
    const key = payer.toLowerCase();
    this.unconfirmed.set(key, (this.unconfirmed.get(key) ?? 0n) + valueAtomic);
    this.unconfirmedTotal += valueAtomic;
  }

  onHold(payer: string): boolean {
    this.forgetOldLosses();
    return this.holds.has(payer.toLowerCase());
  }

  get unconfirmedAtomic(): bigint {
    return this.unconfirmedTotal;
  }

  snapshot(): SettlementRiskSnapshot {
    this.forgetOldLosses();
    const last = this.losses.at(-1);
    return {
      unconfirmed_atomic: this.unconfirmedTotal.toString(),
      unconfirmed_payers: this.unconfirmed.size,
      payers_on_hold: this.holds.size,
      losses_in_window: this.losses.length,
      lost_in_window_atomic: this.lostInWindow().toString(),
      limits: {
        per_payer_atomic: this.limits.perPayerAtomic.toString(),
        total_atomic: this.limits.totalAtomic.toString(),
        hold_seconds: Math.round(this.limits.holdMs / 1000),
      },
      ...(last
        ? {
            last_loss: {
              payer: last.payer,
              value_atomic: last.valueAtomic.toString(),
              reason: last.reason,
              at: new Date(last.atMs).toISOString(),
            },
          }
        : {}),
    };
  }

  private release(key: string, valueAtomic: bigint): void {
    const left = (this.unconfirmed.get(key) ?? 0n) - valueAtomic;
    if (left > 0n) this.unconfirmed.set(key, left);
    else this.unconfirmed.delete(key);
    this.unconfirmedTotal = this.unconfirmedTotal > valueAtomic ? this.unconfirmedTotal - valueAtomic : 0n;
  }

  private record(loss: SettlementLoss): void {
    this.losses.push(loss);
    this.lostSum += loss.valueAtomic;
    this.holds.set(loss.payer, (this.holds.get(loss.payer) ?? 0) + 1);
  }

  private lostInWindow(): bigint {
    return this.lostSum;
  }

  /** Losses are kept in time order: the old ones leave from the front. */
  private forgetOldLosses(): void {
    const since = this.now() - this.limits.holdMs;
    let n = 0;
    for (; n < this.losses.length && this.losses[n]!.atMs <= since; n++) {
      const { payer, valueAtomic } = this.losses[n]!;
      this.lostSum -= valueAtomic;
      const left = (this.holds.get(payer) ?? 1) - 1;
      if (left > 0) this.holds.set(payer, left);
      else this.holds.delete(payer);
    }
    if (n) this.losses = this.losses.slice(n);
  }
}
