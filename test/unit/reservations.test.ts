/** What a payer's concurrent payments may spend together, in one process. */
import { describe, expect, it } from 'vitest';
import { Reservations } from '../../api/payment/reservations.js';

describe('payer reservations', () => {
  it('counts verified payments until the balance read reflects their settlement, and releases failed ones', () => {
    const r = new Reservations();
    const later = Date.now() + 60_000;
    r.reserve('0xAbC', '0x01', 100n, later);
    r.reserve('0xabc', '0x02', 50n, later);
    r.reserve('0xdef', '0x01', 7n, later);
    expect(r.reserved('0xABC', 10n)).toBe(150n);
    // Settled in block 12: still reserved against a balance read at block 11, gone from block 12 on.
    r.settled('0xabc', '0x01', 12n);
    expect(r.reserved('0xabc', 11n)).toBe(150n);
    expect(r.reserved('0xabc', 12n)).toBe(50n);
    r.release('0xabc', '0x02');
    expect(r.reserved('0xabc', 12n)).toBe(0n);
    expect(r.reserved('0xdef', 0n)).toBe(7n);
  });

  it('forgets expired reservations, and counts a nonce reserved twice once', () => {
    const r = new Reservations();
    const now = Date.now();
    r.reserve('0xa', '0x01', 10n, now + 1000);
    r.reserve('0xa', '0x01', 10n, now + 1000);
    r.reserve('0xa', '0x02', 5n, now + 5000);
    r.reserve('0xb', '0x01', 10n, now + 1000);
    expect(r.reserved('0xa', 0n)).toBe(15n);
    r.sweep(now + 2000);
    expect(r.reserved('0xa', 0n)).toBe(5n);
    expect(r.payers).toBe(1);
    r.settled('0xa', '0x02', 3n);
    r.sweep(now + 6000);
    expect(r.payers).toBe(0);
  });
});
