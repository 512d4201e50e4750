/**
 * Detector lifecycle on hand-written quotes (test/helpers/market-fixtures.ts):
 * open, revise, close, expire, durations, deterministic ids, and idempotent
 * reprocessing; then determinism on the seeded simulator.
 */
import { describe, expect, it } from 'vitest';
import {
  applyQuote,
  emptyPairState,
  materialMove,
  numericId,
  opportunityId,
  REVISION_RULE,
  type DetectorOutput,
  type PairState,
} from '../../aggregate/dislocation-detector.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { T, dexQuote, cexAt, dexAt } from '../helpers/market-fixtures.js';

const OPTS = { maxQuoteAgeMs: 30_000 };
const PAIR = 'ETH/USD';

function run(state: PairState, quotes: QuoteEvent[]): DetectorOutput[] {
  return quotes.map((q) => applyQuote(state, q, OPTS));
}

describe('dislocation detector', () => {
  it('opens an opportunity with a deterministic id when a venue sells above the other buys', () => {
    const state = emptyPairState(PAIR);
    const [first, second] = run(state, [dexAt(0), cexAt(100)]);
    expect(first!.dislocations).toEqual([]);
    expect(first!.samples).toEqual([]); // no counterpart yet
    const [d] = second!.dislocations;
    const id = opportunityId(PAIR, 'uniswap_v3_base', 'coinbase', 'cex-100');
    expect(d).toMatchObject({
      event_id: `${id}:0`,
      opportunity_id: id,
      id: numericId(id),
      revision: 0,
      pair: PAIR,
      buy_venue: 'uniswap_v3_base',
      sell_venue: 'coinbase',
      buy_price: 2000,
      sell_price: 2010,
      status: 'OPPORTUNITY',
      opened_at_ms: T + 100,
      updated_at_ms: T + 100,
      duration_ms: 0,
      closed_at_ms: null,
      net_size_usd: 1000,
      profit_size_usd: 10000,
      source: 'simulated',
    });
    expect(d!.raw_spread_bps).toBeCloseTo(50, 10);
    expect(d!.net_spread_bps).toBeCloseTo(35, 10);
    expect(d!.est_profit_usd).toBeCloseTo(24.465034965, 8);
    expect(d!.capacity_usd).toBeCloseTo(26522.974143, 4); // test/unit/spread-math.test.ts
    expect(d!.liquidity_depth_usd).toBe(50000);
    expect(d!.liquidity_depth_capped).toBe(true); // neither fixture quote measured its depth: the largest rung is a lower bound
    expect(d).toMatchObject({
      peak_raw_spread_bps: d!.raw_spread_bps,
      peak_net_spread_bps: d!.net_spread_bps,
      peak_profit_usd: d!.est_profit_usd,
      peak_size_usd: 10000,
    });
    expect(Number.isSafeInteger(d!.id)).toBe(true);
    expect(opportunityId(PAIR, 'uniswap_v3_base', 'coinbase', 'cex-100')).toBe(id);
    expect(second!.samples).toHaveLength(1);
    expect(second!.samples[0]).toMatchObject({
      sample_id: 'cex-100|uniswap_v3_base',
      seq: 1,
      ts_ms: T + 100,
      buy_venue: 'uniswap_v3_base',
      sell_venue: 'coinbase',
    });
  });

  it('revises when the numbers change, not when they repeat, and closes with the last open numbers', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(600, 0), cexAt(1100, 2), cexAt(1600, -10.5)]);
    const revisions = outs.flatMap((o) => o.dislocations);
    expect(revisions.map((r) => [r.revision, r.status, r.updated_at_ms - T, r.duration_ms])).toEqual([
      [0, 'OPPORTUNITY', 100, 0],
      // 600: same prices -> no revision
      [1, 'OPPORTUNITY', 1100, 1000],
      [2, 'CLOSED', 1600, 1500],
    ]);
    const [, rev1, closed] = revisions as [unknown, (typeof revisions)[0], (typeof revisions)[0]];
    expect(rev1.raw_spread_bps).toBeCloseTo(60, 10); // (2012 - 2000) / 2000
    expect(rev1.peak_net_spread_bps).toBeCloseTo(45, 10);
    // The close keeps what the opportunity had, not the spread that closed it.
    expect(closed.raw_spread_bps).toBeCloseTo(60, 10);
    expect(closed.closed_at_ms).toBe(T + 1600);
    expect(closed.opportunity_id).toBe(revisions[0]!.opportunity_id);
    // capacity x time: rev0 capacity from 100 to 1100, rev1 capacity from 1100 to 1600
    expect(closed.capacity_usd_ms).toBeCloseTo(revisions[0]!.capacity_usd * 1000 + rev1.capacity_usd * 500, 6);
    expect(state.open).toEqual({});
    // Every evaluation is sampled, also the closing one (its raw spread is the better direction's).
    expect(outs.map((o) => o.samples.length)).toEqual([0, 1, 1, 1, 1]);
    expect(outs[4]!.samples[0]!.raw_spread_bps).toBeCloseTo(((1999.5 - 2000) / 2000) * 1e4, 8);
    expect(outs[4]!.samples[0]!.buy_venue).toBe('uniswap_v3_base');
  });

  it('revises on a material move, or on any change once the last revision is maxQuietMs old; the close keeps the last revision', () => {
    const state = emptyPairState(PAIR);
    // +$0.10 on a $2,000 ask is 0.5 bps: below REVISION_RULE.minSpreadMoveBps (1) and a 1-2 % move of profit and capacity.
    const outs = run(state, [
      dexAt(0),
      cexAt(100),
      cexAt(600, 0.1),
      cexAt(1100, 0.15),
      cexAt(5100, 0.12),
      cexAt(5600, 0.3),
      cexAt(6100, -10.5),
    ]);
    expect(outs.map((o) => o.dislocations.map((d) => [d.revision, d.status, d.updated_at_ms - T]))).toEqual([
      [],
      [[0, 'OPPORTUNITY', 100]],
      [], // 50.5 bps: 0.5 bps from revision 0
      [], // 50.75 bps
      [[1, 'OPPORTUNITY', 5100]], // 50.6 bps: small, but revision 0 is 5 s old
      [], // 51.5 bps: 0.9 bps from revision 1
      [[2, 'CLOSED', 6100]],
    ]);
    const [rev1, closed] = [outs[4]!.dislocations[0]!, outs[6]!.dislocations[0]!];
    expect(rev1.raw_spread_bps).toBeCloseTo(50.6, 10);
    // The close keeps the last revision's numbers (50.6), not the unrevised 51.5 bps evaluation.
    expect(closed.raw_spread_bps).toBeCloseTo(50.6, 10);
    expect(closed.capacity_usd_ms).toBeCloseTo(
      outs[1]!.dislocations[0]!.capacity_usd * 5000 + rev1.capacity_usd * 1000,
      6,
    );
    // Every evaluation is still a spread sample.
    expect(outs.map((o) => o.samples.length)).toEqual([0, 1, 1, 1, 1, 1, 1]);
    expect(outs[5]!.samples[0]!.raw_spread_bps).toBeCloseTo(51.5, 10);
  });

  it('counts a move of 1 bp, of 5 % in profit, capacity or depth, any move to or from zero, and a new ladder size as material', () => {
    const last = {
      buy_price: 2000,
      sell_price: 2010,
      raw_spread_bps: 50,
      net_spread_bps: 35,
      net_size_usd: 1000,
      est_profit_usd: 20,
      profit_size_usd: 10000,
      capacity_usd: 1000,
      capacity_capped: false,
      liquidity_depth_usd: 50000,
      liquidity_depth_capped: false,
      fees_bps: 15,
      gas_usd: 0.5,
    };
    const moved = (change: Partial<typeof last>) => materialMove(last, { ...last, ...change });
    expect(moved({})).toBe(false);
    expect(moved({ raw_spread_bps: 50.99, net_spread_bps: 34.01, buy_price: 2000.1, gas_usd: 0.6, fees_bps: 16 })).toBe(
      false,
    );
    expect(moved({ raw_spread_bps: 51 })).toBe(true);
    expect(moved({ net_spread_bps: 34 })).toBe(true);
    expect(moved({ est_profit_usd: 20.99 })).toBe(false);
    expect(moved({ est_profit_usd: 21 })).toBe(true);
    expect(moved({ capacity_usd: 951 })).toBe(false);
    expect(moved({ capacity_usd: 950 })).toBe(true);
    expect(moved({ liquidity_depth_usd: 47500 })).toBe(true);
    expect(moved({ profit_size_usd: 50000 })).toBe(true);
    expect(moved({ net_size_usd: 10000 })).toBe(true);
    expect(moved({ capacity_capped: true })).toBe(true);
    expect(moved({ liquidity_depth_capped: true })).toBe(true);
    expect(materialMove({ ...last, capacity_usd: 0 }, { ...last, capacity_usd: 0.01 })).toBe(true);
    expect(materialMove({ ...last, est_profit_usd: 0.01 }, { ...last, est_profit_usd: 0 })).toBe(true);
    expect(REVISION_RULE).toEqual({ minSpreadMoveBps: 1, minRelativeMove: 0.05, maxQuietMs: 5000 });
  });

  it('opens only when the net spread pays: a raw crossing below the costs stays a spread sample', () => {
    const state = emptyPairState(PAIR);
    // CEX bid 2010.5 over a DEX ask of 2008 (+12.4 bps raw), but 10 bps of CEX fee and 5 bps of gas at 1k: net < 0.
    const dex = dexQuote({
      event_id: 'dex-0',
      ask: 2008,
      bid: 2007,
      ladder: [
        { size_usd: 1000, buy_price: 2008, sell_price: 2007 },
        { size_usd: 10000, buy_price: 2009, sell_price: 2006 },
      ],
    });
    const outs = run(state, [dex, cexAt(100, 0.5)]);
    expect(outs[1]!.samples[0]!.raw_spread_bps).toBeGreaterThan(0);
    expect(outs[1]!.samples[0]!.net_spread_bps).toBeLessThan(0);
    expect(outs.flatMap((o) => o.dislocations)).toEqual([]);
    // A threshold above the net spread keeps even a paying opportunity closed; at 0 it opens.
    const strict = emptyPairState(PAIR);
    expect(applyQuote(strict, dexAt(0), { ...OPTS, minNetBps: 40 }).dislocations).toEqual([]);
    expect(applyQuote(strict, cexAt(100), { ...OPTS, minNetBps: 40 }).dislocations).toEqual([]); // net 35 <= 40
    expect(applyQuote(strict, cexAt(600, 10), { ...OPTS, minNetBps: 40 }).dislocations.map((d) => d.status)).toEqual([
      'OPPORTUNITY',
    ]); // net 85
    // ... and closes once the net falls back to the threshold, though the raw spread is still positive.
    const closed = applyQuote(strict, cexAt(1100), { ...OPTS, minNetBps: 40 }).dislocations;
    expect(closed.map((d) => d.status)).toEqual(['CLOSED']);
  });

  it('keeps the peaks of an opportunity beside its current numbers', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(600, 6), cexAt(1100, 1), cexAt(1600, -10.5)]);
    const revisions = outs.flatMap((o) => o.dislocations);
    expect(revisions.map((r) => r.status)).toEqual(['OPPORTUNITY', 'OPPORTUNITY', 'OPPORTUNITY', 'CLOSED']);
    const peak = revisions[1]!; // +6 USD: the widest revision
    for (const r of revisions.slice(1)) {
      expect(r.peak_raw_spread_bps).toBe(peak.raw_spread_bps);
      expect(r.peak_net_spread_bps).toBe(peak.net_spread_bps);
      expect(r.peak_profit_usd).toBe(peak.est_profit_usd);
      expect(r.peak_size_usd).toBe(peak.profit_size_usd);
      expect(r.peak_capacity_usd).toBe(Math.max(...revisions.slice(0, 3).map((x) => x.capacity_usd)));
    }
    for (const r of revisions) {
      expect(r.peak_raw_spread_bps).toBeGreaterThanOrEqual(r.raw_spread_bps);
      expect(r.peak_net_spread_bps).toBeGreaterThanOrEqual(r.net_spread_bps);
      expect(r.peak_profit_usd).toBeGreaterThanOrEqual(r.est_profit_usd);
    }
  });

  it('gives the same numeric id from a state saved before the id was kept in it', () => {
    const state = emptyPairState(PAIR);
    const [opened] = run(state, [dexAt(0), cexAt(100)]).flatMap((o) => o.dislocations);
    const old = JSON.parse(JSON.stringify(state)) as PairState;
    for (const o of Object.values(old.open)) delete o.id;
    const [fromNew] = applyQuote(state, cexAt(600, 2), OPTS).dislocations;
    const [fromOld] = applyQuote(old, cexAt(600, 2), OPTS).dislocations;
    expect(fromNew!.id).toBe(numericId(opened!.opportunity_id));
    expect(fromOld).toEqual(fromNew);
  });

  it('opens the opposite direction when the other venue becomes the cheap one', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(600, -15)]);
    const [closed, reverse] = outs[2]!.dislocations;
    expect(closed).toMatchObject({ status: 'CLOSED', buy_venue: 'uniswap_v3_base', sell_venue: 'coinbase' });
    expect(reverse).toMatchObject({
      status: 'OPPORTUNITY',
      revision: 0,
      buy_venue: 'coinbase',
      sell_venue: 'uniswap_v3_base',
      buy_price: 1996,
      sell_price: 1999,
    });
    expect(reverse!.raw_spread_bps).toBeCloseTo(((1999 - 1996) / 1996) * 1e4, 8);
    expect(Object.keys(state.open)).toEqual(['coinbase>uniswap_v3_base']);
  });

  it('opens a new opportunity with a new id after a close', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(600, -10.5), cexAt(1100)]);
    const opened = outs.flatMap((o) => o.dislocations).filter((d) => d.revision === 0);
    expect(opened.map((d) => d.opportunity_id)).toEqual([
      opportunityId(PAIR, 'uniswap_v3_base', 'coinbase', 'cex-100'),
      opportunityId(PAIR, 'uniswap_v3_base', 'coinbase', 'cex-1100'),
    ]);
  });

  it('expires an opportunity when the counterpart goes stale, at the instant it reached the maximum age', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(20_000, 1), cexAt(45_000, 1)]);
    const all = outs.flatMap((o) => o.dislocations);
    expect(all.map((d) => [d.revision, d.status])).toEqual([
      [0, 'OPPORTUNITY'],
      [1, 'OPPORTUNITY'],
      [2, 'EXPIRED'],
    ]);
    expect(all[2]).toMatchObject({ updated_at_ms: T + 30_000, closed_at_ms: T + 30_000, duration_ms: 29_900 });
    expect(outs[3]!.samples).toEqual([]); // a stale counterpart is not compared
    expect(state.open).toEqual({});
    // A fresh DEX quote brings it back as a new opportunity.
    const back = applyQuote(state, dexAt(46_000), OPTS);
    expect(back.dislocations).toHaveLength(1);
    expect(back.dislocations[0]).toMatchObject({
      revision: 0,
      opened_at_ms: T + 46_000,
      opportunity_id: opportunityId(PAIR, 'uniswap_v3_base', 'coinbase', 'dex-46000'),
    });
  });

  it('ignores quotes not newer than the one held for their venue', () => {
    const state = emptyPairState(PAIR);
    run(state, [dexAt(0), cexAt(100), cexAt(600, 1)]);
    const before = structuredClone(state);
    for (const q of [cexAt(100), cexAt(600, 1), cexAt(300, 5), dexAt(0)]) {
      const out = applyQuote(state, q, OPTS);
      expect(out).toEqual({ applied: false, dislocations: [], samples: [], stale: [] });
    }
    expect(state).toEqual(before);
    // Same time, larger event id: newer (a tie-break, not a duplicate).
    expect(applyQuote(state, cexAt(600, 1, 'cex-600b'), OPTS).applied).toBe(true);
  });

  it('reprocessing from any checkpoint gives exactly the same output as one pass', () => {
    const quotes = [
      dexAt(0),
      cexAt(100),
      cexAt(600, 2),
      dexAt(2000),
      cexAt(2100, -10.5),
      cexAt(2600, 3),
      dexAt(4000),
      cexAt(40_000, 3),
      dexAt(41_000),
    ];
    const once = emptyPairState(PAIR);
    const expected = run(once, quotes);
    for (let cut = 0; cut <= quotes.length; cut++) {
      const state = emptyPairState(PAIR);
      const head = run(state, quotes.slice(0, cut));
      const checkpoint = JSON.parse(JSON.stringify(state)) as PairState; // what detector_state stores
      // A crash after the checkpoint: the whole batch comes again.
      const replayed = run(checkpoint, quotes);
      expect([...head, ...replayed.slice(cut)]).toEqual(expected);
      expect(replayed.slice(0, cut).every((o) => !o.applied)).toBe(true);
      expect(checkpoint).toEqual(once);
    }
  });

  it('is deterministic on the simulator: same events, same output', () => {
    const pairs = loadPairs();
    const simulate = () => {
      const sim = new MarketSimulator(pairs, {
        seed: 42,
        startMs: T,
        cexVenue: 'coinbase',
        ladderUsd: [1000, 10000, 50000, 100000],
      });
      const states = new Map<string, PairState>();
      const out: DetectorOutput[] = [];
      for (const e of sim.generate(T + 10 * 60_000)) {
        if (e.topic !== 'md.quotes.v1') continue;
        let s = states.get(e.event.pair);
        if (!s) states.set(e.event.pair, (s = emptyPairState(e.event.pair)));
        out.push(applyQuote(s, e.event, OPTS));
      }
      return out;
    };
    const a = simulate();
    const b = simulate();
    expect(b).toEqual(a);
    const dislocations = a.flatMap((o) => o.dislocations);
    const opened = dislocations.filter((d) => d.revision === 0);
    expect(opened.length).toBeGreaterThan(10);
    // Lifecycle invariants: one open per revision 0, durations from event times, closes once.
    const byId = new Map<string, typeof dislocations>();
    for (const d of dislocations) byId.set(d.opportunity_id, [...(byId.get(d.opportunity_id) ?? []), d]);
    for (const [, revs] of byId) {
      expect(revs.map((r) => r.revision)).toEqual(revs.map((_, i) => i));
      expect(revs.slice(0, -1).every((r) => r.status === 'OPPORTUNITY')).toBe(true);
      for (const r of revs) expect(r.duration_ms).toBe(r.updated_at_ms - revs[0]!.opened_at_ms);
      // Every revision (a close keeps the last open numbers) pays after fees, gas and slippage.
      expect(revs.every((r) => r.net_spread_bps > 0 && r.capacity_usd > 0 && r.est_profit_usd > 0)).toBe(true);
    }
  });
});
