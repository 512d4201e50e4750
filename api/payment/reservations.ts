/**
 * Amounts this process has promised away from a payer's balance: a verified
 * payment reserves its value until its settlement is reflected in the
 * balance the chain view reads (the balance at a block at or after the one
 * that settled it), or until it is released (its handler failed, its
 * settlement failed) or its authorization expired. Verification checks
 * `balance at block B - reserved(payer, B) >= value`, so one payer's
 * concurrent payments cannot together spend more than the payer holds,
 * within one process. Across API replicas each reserves only its own: an
 * overdraft there is caught by the settlement, which withholds the result.
 */

interface Reservation {
  value: bigint;
  expiresAtMs: number;
  /** The block of the settlement that spent it, once settled. */
  settledIn?: bigint;
}

export class Reservations {
  private readonly byPayer = new Map<string, Map<string, Reservation>>();

  reserve(payer: string, nonce: string, value: bigint, expiresAtMs: number): void {
    const key = payer.toLowerCase();
    let entries = this.byPayer.get(key);
    if (!entries) this.byPayer.set(key, (entries = new Map()));
    entries.set(nonce.toLowerCase(), { value, expiresAtMs });
  }

  /** The settlement mined in `block`: the amount stays reserved until balances are read at that block or later. */
  settled(payer: string, nonce: string, block: bigint): void {
    const entry = this.byPayer.get(payer.toLowerCase())?.get(nonce.toLowerCase());
    if (entry) entry.settledIn = block;
  }

  release(payer: string, nonce: string): void {
    const key = payer.toLowerCase();
    const entries = this.byPayer.get(key);
    entries?.delete(nonce.toLowerCase());
    if (entries?.size === 0) this.byPayer.delete(key);
  }

  /** What is still to come off the payer's balance as read at `balanceBlock`. */
  reserved(payer: string, balanceBlock: bigint, nowMs = Date.now()): bigint {
    const entries = this.byPayer.get(payer.toLowerCase());
    if (!entries) return 0n;
    let total = 0n;
    for (const [nonce, r] of entries) {
      if (r.expiresAtMs <= nowMs || (r.settledIn !== undefined && r.settledIn <= balanceBlock)) entries.delete(nonce);
      else total += r.value;
    }
    if (entries.size === 0) this.byPayer.delete(payer.toLowerCase());
    return total;
  }

  /** Drops expired reservations of every payer (payers that stopped paying are otherwise never looked at again). */
  sweep(nowMs = Date.now()): void {
    for (const [payer, entries] of this.byPayer) {
      for (const [nonce, r] of entries) if (r.expiresAtMs <= nowMs) entries.delete(nonce);
      if (entries.size === 0) this.byPayer.delete(payer);
    }
  }

  get payers(): number {
    return this.byPayer.size;
  }
}
