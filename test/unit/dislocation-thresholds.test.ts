/**
 * The detector's minimum life and minimum profit (DISLOCATION_MIN_LIFE_MS,
 * DISLOCATION_MIN_PROFIT_USD) on hand-written quotes
 * (test/helpers/market-fixtures.ts): a one-tick blip is no opportunity, a
 * long-enough profitable one opens with its first actionable instant, a
 * profitable-but-tiny one never opens; candidates survive a checkpoint; on
 * the simulator every opportunity has lived the minimum life and pays the
 * minimum profit.
 */
import { describe, expect, it } from 'vitest';
import {
  applyQuote,
  DEFAULT_MIN_LIFE_MS,
  DEFAULT_MIN_PROFIT_USD,
  emptyPairState,
  opportunityId,
  type DetectorOptions,
  type DetectorOutput,
  type PairState,
} from '../../aggregate/dislocation-detector.js';
import { evaluateDirection } from '../../aggregate/spread-math.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { T, cexAt, dexAt } from '../helpers/market-fixtures.js';

const PAIR = 'ETH/USD';
const DEX = 'uniswap_v3_base';
const CEX = 'coinbase';
const THRESHOLDS: DetectorOptions = {
  maxQuoteAgeMs: 30_000,
  minLifeMs: DEFAULT_MIN_LIFE_MS,
  minProfitUsd: DEFAULT_MIN_PROFIT_USD,
};

function run(state: PairState, quotes: QuoteEvent[], options: DetectorOptions = THRESHOLDS): DetectorOutput[] {
  return quotes.map((q) => applyQuote(state, q, options));
}

const revisionsOf = (outs: DetectorOutput[]) => outs.flatMap((o) => o.dislocations);

/** Shift of the CEX quote at which "buy DEX, sell CEX" pays a profit in (0, 0.10) USD at its best size. */
const TINY_SHIFT = -6.9;

describe('dislocation thresholds', () => {
  it('the defaults: one Base block, above the price of the dislocations call', () => {
    expect(DEFAULT_MIN_LIFE_MS).toBe(2000);
    expect(DEFAULT_MIN_PROFIT_USD).toBeGreaterThan(0.075);
  });

  it('a one-tick blip is no opportunity: nothing is emitted, the samples stay', () => {
    const state = emptyPairState(PAIR);
    // Pays at +100 ms, gone at +600 ms (raw spread negative), pays again at +1100 ms, gone at +1600 ms.
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(600, -10.5), cexAt(1100), cexAt(1600, -10.5)]);
    expect(revisionsOf(outs)).toEqual([]);
    expect(outs.slice(1).every((o) => o.samples.length === 1)).toBe(true);
    expect(state.open).toEqual({});
    expect(state.candidates).toEqual({});
    // Without a minimum life the same quotes are two opportunities of 500 ms each.
    const eager = revisionsOf(
      run(emptyPairState(PAIR), [dexAt(0), cexAt(100), cexAt(600, -10.5)], { maxQuoteAgeMs: 30_000 }),
    );
    expect(eager.map((d) => [d.status, d.duration_ms])).toEqual([
      ['OPPORTUNITY', 0],
      ['CLOSED', 500],
    ]);
  });

  it('a long-enough profitable one opens after the minimum life, with its first actionable instant', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [
      dexAt(0),
      cexAt(100),
      cexAt(600, 1),
      cexAt(1100),
      cexAt(2099),
      cexAt(2100),
      cexAt(2600, -10.5),
    ]);
    // Nothing until the evaluation at +2100 ms, 2000 ms after it became actionable.
    expect(outs.slice(0, 5).flatMap((o) => o.dislocations)).toEqual([]);
    const [opened] = outs[5]!.dislocations;
    const id = opportunityId(PAIR, DEX, CEX, 'cex-100');
    expect(opened).toMatchObject({
      opportunity_id: id,
      event_id: `${id}:0`,
      revision: 0,
      status: 'OPPORTUNITY',
      buy_venue: DEX,
      sell_venue: CEX,
      opened_at_ms: T + 100,
      updated_at_ms: T + 2100,
      duration_ms: 2000,
      trigger_event_id: 'cex-2100',
      capacity_usd_ms: 0,
      closed_at_ms: null,
    });
    // Revision 0 carries the numbers of the evaluation that confirmed it, and the peaks start there.
    expect(opened!.est_profit_usd).toBeCloseTo(24.465034965, 8);
    expect(opened!.peak_profit_usd).toBe(opened!.est_profit_usd);
    const [closed] = outs[6]!.dislocations;
    expect(closed).toMatchObject({ opportunity_id: id, revision: 1, status: 'CLOSED', duration_ms: 2500 });
    expect(closed!.capacity_usd_ms).toBeCloseTo(opened!.capacity_usd * 500, 6);
    expect(state.candidates).toEqual({});
  });

  it('a candidate interrupted before the minimum life starts over, with a new id', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(1500, -10.5), cexAt(3000), cexAt(4999), cexAt(5000)]);
    const revisions = revisionsOf(outs);
    expect(revisions).toHaveLength(1);
    expect(revisions[0]).toMatchObject({
      opportunity_id: opportunityId(PAIR, DEX, CEX, 'cex-3000'),
      opened_at_ms: T + 3000,
      updated_at_ms: T + 5000,
      duration_ms: 2000,
    });
  });

  it('a profitable-but-tiny one never opens; one whose profit falls below the minimum closes', () => {
    const tiny = evaluateDirection(dexAt(0), cexAt(100, TINY_SHIFT));
    expect(tiny.net_spread_bps).toBeGreaterThan(0);
    expect(tiny.est_profit_usd).toBeGreaterThan(0);
    expect(tiny.est_profit_usd).toBeLessThan(DEFAULT_MIN_PROFIT_USD);

    const quotes = [dexAt(0), cexAt(100, TINY_SHIFT), cexAt(2500, TINY_SHIFT), cexAt(10_000, TINY_SHIFT)];
    const state = emptyPairState(PAIR);
    expect(revisionsOf(run(state, quotes))).toEqual([]);
    expect(state.candidates ?? {}).toEqual({}); // never a candidate
    // It pays: with no minimum profit the same quotes are an opportunity.
    const noMinimum = revisionsOf(run(emptyPairState(PAIR), quotes, { ...THRESHOLDS, minProfitUsd: 0 }));
    expect(noMinimum.map((d) => d.status)).toEqual(['OPPORTUNITY']);
    expect(noMinimum[0]!.est_profit_usd).toBeLessThan(DEFAULT_MIN_PROFIT_USD);

    // Open at 24 USD, then the profit falls under the minimum though the net spread still pays: it closes.
    const falling = revisionsOf(
      run(emptyPairState(PAIR), [dexAt(0), cexAt(100), cexAt(2100), cexAt(2600, TINY_SHIFT)]),
    );
    expect(falling.map((d) => [d.status, d.updated_at_ms - T])).toEqual([
      ['OPPORTUNITY', 2100],
      ['CLOSED', 2600],
    ]);
    expect(falling.every((d) => d.est_profit_usd >= DEFAULT_MIN_PROFIT_USD)).toBe(true);
  });

  it('a counterpart going stale drops the candidate', () => {
    const state = emptyPairState(PAIR);
    const outs = run(state, [dexAt(0), cexAt(100), cexAt(31_000), dexAt(31_500), cexAt(33_400)]);
    expect(revisionsOf(outs)).toEqual([]);
    // Actionable again from +31,500 ms (the DEX quote is fresh): a new candidate from there, not from +100 ms.
    expect(Object.values(state.candidates ?? {}).map((c) => c.opened_at_ms - T)).toEqual([31_500]);
    const [opened] = applyQuote(state, cexAt(33_500), THRESHOLDS).dislocations;
    expect(opened).toMatchObject({ opened_at_ms: T + 31_500, duration_ms: 2000 });
  });

  it('candidates survive a checkpoint, and a state saved before candidates existed loads', () => {
    const quotes = [
      dexAt(0),
      cexAt(100),
      cexAt(600, 1),
      cexAt(1500, -10.5),
      cexAt(2000),
      dexAt(3000),
      cexAt(4000),
      cexAt(4500, -10.5),
    ];
    const expected = run(emptyPairState(PAIR), quotes);
    expect(revisionsOf(expected).map((d) => d.status)).toEqual(['OPPORTUNITY', 'CLOSED']);
    for (let cut = 0; cut <= quotes.length; cut++) {
      const state = emptyPairState(PAIR);
      const head = run(state, quotes.slice(0, cut));
      const saved = JSON.parse(JSON.stringify(state)) as PairState; // what detector_state stores
      expect([...head, ...run(saved, quotes.slice(cut))]).toEqual(expected);
    }
    // A state saved before this change has no `candidates` key.
    const old = JSON.parse(JSON.stringify({ pair: PAIR, applied: 0, samples: 0, quotes: {}, open: {} })) as PairState;
    expect(run(old, quotes)).toEqual(expected);
  });

  it('on the simulator: every opportunity lived the minimum life and pays the minimum profit while open', () => {
    const pairs = loadPairs();
    const sim = new MarketSimulator(pairs, {
      seed: 42,
      startMs: T,
      cexVenue: CEX,
      ladderUsd: [1000, 10000, 50000, 100000],
    });
    const states = new Map<string, PairState>();
    const eagerStates = new Map<string, PairState>();
    const revisions = [];
    const eager = [];
    for (const e of sim.generate(T + 30 * 60_000)) {
      if (e.topic !== 'md.quotes.v1') continue;
      const pair = e.event.pair;
      if (!states.has(pair)) states.set(pair, emptyPairState(pair));
      if (!eagerStates.has(pair)) eagerStates.set(pair, emptyPairState(pair));
      revisions.push(...applyQuote(states.get(pair)!, e.event, THRESHOLDS).dislocations);
      eager.push(...applyQuote(eagerStates.get(pair)!, e.event, { maxQuoteAgeMs: 30_000 }).dislocations);
    }
    const opened = revisions.filter((d) => d.revision === 0);
    expect(opened.length).toBeGreaterThan(0);
    expect(opened.length).toBeLessThan(eager.filter((d) => d.revision === 0).length);
    for (const d of opened) expect(d.duration_ms).toBeGreaterThanOrEqual(DEFAULT_MIN_LIFE_MS);
    for (const d of revisions) {
      expect(d.est_profit_usd).toBeGreaterThanOrEqual(DEFAULT_MIN_PROFIT_USD);
      expect(d.net_spread_bps).toBeGreaterThan(0);
    }
  });
});
