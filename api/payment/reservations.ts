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
 *
 * Per payer, a running total of the unsettled reservations (constant time
 * per payment), plus the settled ones until a balance read covers them.
 */

interface Reservation {
  value: bigint;
  expiresAtMs: number;
  /** The block of the settlement that spent it, once settled. */
  settledIn?: bigint;
}

interface PayerReservations {
  entries: Map<string, Reservation>;
  /** Sum of the entries not yet settled. */
  unsettled: bigint;
  /** Nonces of settled entries, until a balance read at or after their block. */
  settled: Set<string>;
}

export class Reservations {
  private readonly byPayer = new Map<string, PayerReservations>();

  reserve(payer: string, nonce: string, value: bigint, expiresAtMs: number): void {
    const key = payer.toLowerCase();
    let p = this.byPayer.get(key);
    if (!p) this.byPayer.set(key, (p = { entries: new Map(), unsettled: 0n, settled: new Set() }));
    const n = nonce.toLowerCase();
    if (p.entries.has(n)) this.drop(p, n);
    p.entries.set(n, { value, expiresAtMs });
    p.unsettled += value;
  }

  /** The settlement mined in `block`: the amount stays reserved until balances are read at that block or later. */
  settled(payer: string, nonce: string, block: bigint): void {
    const p = this.byPayer.get(payer.toLowerCase());
    const n = nonce.toLowerCase();
    const entry = p?.entries.get(n);
    if (!p || !entry || entry.settledIn !== undefined) return;
    entry.settledIn = block;
    p.unsettled -= entry.value;
    p.settled.add(n);
  }

  release(payer: string, nonce: string): void {
    const key = payer.toLowerCase();
    const p = this.byPayer.get(key);
    if (!p) return;
    this.drop(p, nonce.toLowerCase());
    if (p.entries.size === 0) this.byPayer.delete(key);
  }

  /** This authorization (payer, nonce) is verified here and not released: in flight, or settled very recently. */
  holds(payer: string, nonce: string): boolean {
    return this.byPayer.get(payer.toLowerCase())?.entries.has(nonce.toLowerCase()) ?? false;
  }

  /** What is still to come off the payer's balance as read at `balanceBlock`. */
  reserved(payer: string, balanceBlock: bigint): bigint {
    const p = this.byPayer.get(payer.toLowerCase());
    if (!p) return 0n;
    let total = p.unsettled;
    for (const n of p.settled) {
      const entry = p.entries.get(n)!;
      if (entry.settledIn! <= balanceBlock) this.drop(p, n);
      else total += entry.value;
    }
    return total;
  }

  /** Drops expired reservations (an authorization past validBefore can no longer be settled). */
  sweep(nowMs = Date.now()): void {
    for (const [payer, p] of this.byPayer) {
      for (const [n, r] of p.entries) if (r.expiresAtMs <= nowMs) this.drop(p, n);
      if (p.entries.size === 0) this.byPayer.delete(payer);
    }
  }

  get payers(): number {
    return this.byPayer.size;
  }

  private drop(p: PayerReservations, nonce: string): void {
    const entry = p.entries.get(nonce);
    if (!entry) return;
    p.entries.delete(nonce);
    if (entry.settledIn === undefined) p.unsettled -= entry.value;
    else p.settled.delete(nonce);
  }
}
