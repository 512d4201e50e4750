/**
 * The caps of answering on broadcast (api/payment/settlement-risk.ts) and their durable record
 * (api/payment/unconfirmed-settlements.ts, file adapter): per payer, in total, losses counted against the caps
 * for the hold window, holds that end with it, and a record that survives a restart and a line cut by a crash.
 */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SettlementRisk } from '../../api/payment/settlement-risk.js';
import { FileUnconfirmedSettlements } from '../../api/payment/unconfirmed-settlements.js';
import type { SignedAuthorization } from '../../api/payment/settlement-calls.js';

const A = '0x00000000000000000000000000000000000000aA';
const B = '0x00000000000000000000000000000000000000bB';

function riskAt(clock: { now: number }) {
  return new SettlementRisk({ perPayerAtomic: 30n, totalAtomic: 50n, holdMs: 1000 }, () => clock.now);
}

describe('settlement risk caps', () => {
  it('admits per payer up to its cap and in total up to the total cap; a confirmation frees the room', () => {
    const risk = riskAt({ now: 0 });
    expect([risk.admit(A, 10n), risk.admit(A, 20n), risk.admit(A, 1n)]).toEqual([true, true, false]);
    expect([risk.admit(B, 20n), risk.admit(B, 1n)]).toEqual([true, false]); // total 50 reached
    risk.confirmed(A, 20n);
    expect(risk.admit(B, 10n)).toBe(true);
    expect(risk.unconfirmedAtomic).toBe(40n);
  });

  it('counts a loss against both caps and holds its payer for the window, then forgets it', () => {
    const clock = { now: 0 };
    const risk = riskAt(clock);
    expect(risk.admit(A, 25n)).toBe(true);
    risk.lost(A, 25n, 'invalid_exact_evm_insufficient_balance');
    expect(risk.onHold(A)).toBe(true);
    expect(risk.admit(A, 1n)).toBe(false);
    expect(risk.admit(B, 26n)).toBe(false); // 25 lost + 26 > 50
    expect(risk.admit(B, 25n)).toBe(true);
    expect(risk.snapshot()).toMatchObject({ losses_in_window: 1, lost_in_window_atomic: '25', payers_on_hold: 1 });
    clock.now = 1001;
    expect(risk.onHold(A)).toBe(false);
    expect(risk.admit(A, 25n)).toBe(true);
    expect(risk.snapshot()).toMatchObject({ losses_in_window: 0, payers_on_hold: 0, unconfirmed_atomic: '50' });
  });

  it('counts restored losses and unconfirmed value again after a restart', () => {
    const risk = riskAt({ now: 5000 });
    risk.restoreLoss({ payer: A, valueAtomic: 10n, reason: 'r', atMs: 4500 });
    risk.restoreLoss({ payer: B, valueAtomic: 10n, reason: 'r', atMs: 3000 }); // outside the window
    risk.restoreUnconfirmed(B, 30n);
    expect(risk.onHold(A)).toBe(true);
    expect(risk.onHold(B)).toBe(false);
    expect(risk.admit(B, 1n)).toBe(false); // its cap is full
    expect(risk.snapshot()).toMatchObject({ lost_in_window_atomic: '10', unconfirmed_atomic: '30' });
  });
});

const auth = (nonce: string): SignedAuthorization => ({
  from: A,
  to: B,
  value: 15000n,
  validAfter: 0n,
  validBefore: 2_000_000_000n,
  nonce: `0x${nonce.padStart(64, '0')}`,
  signature: `0x${'11'.repeat(65)}`,
});

describe('the durable record of unconfirmed settlements (file)', () => {
  it('gives back what is unconfirmed and the recent losses after a restart, compacted, past a cut line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'unconfirmed-'));
    try {
      const path = join(dir, 'record.jsonl');
      const first = new FileUnconfirmedSettlements(path);
      await first.put({ auth: auth('1'), broadcasts: ['0xaa'], answeredAtMs: 1 });
      await first.put({ auth: auth('2'), broadcasts: ['0xbb'], answeredAtMs: 2 });
      await first.put({ auth: auth('2'), broadcasts: ['0xbb', '0xcc'], answeredAtMs: 2 });
      await first.put({ auth: auth('3'), broadcasts: ['0xdd'], answeredAtMs: 3 });
      await first.done(auth('1'));
      await first.loss({ key: 'k3', payer: A, valueAtomic: 15000n, reason: 'r', atMs: 100 });
      await first.done(auth('3'));
      await first.loss({ key: 'old', payer: A, valueAtomic: 1n, reason: 'r', atMs: 10 });
      await first.close();
      await appendFile(path, '{"op":"put","key":"cut'); // a crash mid-line

      const second = new FileUnconfirmedSettlements(path);
      const left = await second.load(50);
      expect(left.unconfirmed.map((u) => [u.auth.nonce.slice(-1), u.broadcasts])).toEqual([['2', ['0xbb', '0xcc']]]);
      expect(left.unconfirmed[0]!.auth.value).toBe(15000n);
      expect(left.losses).toEqual([{ key: 'k3', payer: A, valueAtomic: 15000n, reason: 'r', atMs: 100 }]);
      expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(2);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
