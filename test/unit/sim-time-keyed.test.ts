/**
 * The simulated market is a function of (seed, time) (ingest/simulator/random.ts,
 * time-keyed.ts): one seed gives one market, another seed another, and a
 * simulator started later (or a backfill of a window) shows exactly the
 * market an earlier start showed in that window, whatever the catalogue
 * around the pair. Only the ids (which name the run) and the run's own
 * counters (sequence) differ.
 */
import { describe, expect, it } from 'vitest';
import type { QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator, type SimEvent } from '../../ingest/simulator/market-simulator.js';

const T = Date.UTC(2025, 5, 2, 9);
const MINUTE = 60_000;
const full = loadPairs();
const some = (pairs: string[]): PairsCatalogue => ({
  ...full,
  pairs: full.pairs.filter((p) => pairs.includes(p.pair)),
});
const PAIRS = some(['ETH/USD', 'cbBTC/USD', 'cbETH/USD']);

function run(seed: number, fromMs: number, untilMs: number, catalogue = PAIRS, cexTickMs = 500): SimEvent[] {
  return [
    ...new MarketSimulator(catalogue, {
      seed,
      startMs: fromMs,
      cexVenue: 'coinbase',
      ladderUsd: [1000, 10000],
      cexTickMs,
      bookDepth: 10,
      bookEveryTicks: 20,
    }).generate(untilMs),
  ];
}

/** What the market says, without what names the run (ids, the run's tick and block counters). */
const content = (events: SimEvent[]) =>
  events.map((e) => {
    const { event_id: _id, ...rest } = e.event as QuoteEvent;
    return { topic: e.topic, key: e.key, ...rest, sequence: undefined };
  });

const mids = (events: SimEvent[], pair: string) =>
  events
    .filter((e) => e.topic === TOPICS.quotes && e.key === pair && (e.event as QuoteEvent).venue_kind === 'cex')
    .map((e) => ((e.event as QuoteEvent).bid + (e.event as QuoteEvent).ask) / 2);

describe('a market keyed by seed and time', () => {
  const early = run(402, T - 150 * MINUTE, T + 20 * MINUTE);

  it('a later start (not on the tick grid) shows exactly the market of the earlier start in the same window', () => {
    const laterStart = T + 7 * MINUTE + 123;
    const later = run(402, laterStart, T + 20 * MINUTE);
    const window = early.filter((e) => e.event.event_time_ms >= laterStart);
    expect(later.length).toBeGreaterThan(1000);
    expect(content(later)).toEqual(content(window));
    // Another run: no id in common.
    const ids = new Set(window.map((e) => e.event.event_id));
    expect(later.some((e) => ids.has(e.event.event_id))).toBe(false);
  });

  it('agrees too when the tick does not divide the block time (blocks seen at the first tick after them)', () => {
    const a = run(7, T - 30 * MINUTE, T + 5 * MINUTE, PAIRS, 1500);
    const laterStart = T + 2 * MINUTE + 700;
    const b = run(7, laterStart, T + 5 * MINUTE, PAIRS, 1500);
    expect(b.filter((e) => e.topic === TOPICS.latency).length).toBeGreaterThan(50);
    expect(content(b)).toEqual(content(a.filter((e) => e.event.event_time_ms >= laterStart)));
  });

  it('one seed, one path: the same run twice gives the same events', () => {
    expect(run(402, T, T + 5 * MINUTE)).toEqual(run(402, T, T + 5 * MINUTE));
  });

  it('two seeds, two markets: different prices at every pair', () => {
    const a = run(402, T, T + 10 * MINUTE);
    const b = run(403, T, T + 10 * MINUTE);
    for (const pair of ['ETH/USD', 'cbBTC/USD', 'cbETH/USD']) {
      const [ma, mb] = [mids(a, pair), mids(b, pair)];
      expect(ma.length).toBe(mb.length);
      expect(ma.filter((x, i) => x === mb[i]).length, pair).toBeLessThan(ma.length / 100);
    }
  });

  it("a pair's market does not depend on the other pairs in the catalogue", () => {
    const alone = run(402, T, T + 5 * MINUTE, some(['ETH/USD']));
    const among = run(402, T, T + 5 * MINUTE).filter((e) => e.key === 'ETH/USD' || e.topic === TOPICS.latency);
    expect(mids(alone, 'ETH/USD')).toEqual(mids(among, 'ETH/USD'));
  });

  it('a window years away starts at once, near the reference prices', () => {
    const far = Date.UTC(2031, 2, 14, 3);
    const t0 = performance.now();
    const events = run(402, far, far + MINUTE);
    // Generous ceiling: the anchors are evaluated from a year back, not from Unix time 0.
    expect(performance.now() - t0).toBeLessThan(20_000);
    const eth = mids(events, 'ETH/USD');
    expect(eth.length).toBeGreaterThan(0);
    expect(eth[0]!).toBeGreaterThan(3000 / 3);
    expect(eth[0]!).toBeLessThan(3000 * 3);
    const cbEth = mids(events, 'cbETH/USD');
    // cbETH is staked ETH: its exchange rate (1.1 in 2025, +3 %/year) and a premium of a few bps.
    const ratio = cbEth[0]! / eth[0]!;
    expect(ratio).toBeGreaterThan(1.1 * Math.exp(0.03 * 6) * 0.99);
    expect(ratio).toBeLessThan(1.1 * Math.exp(0.03 * 6.3) * 1.01);
  });
});
