/**
 * The simulated market has a pulse (ingest/simulator/): over hours of
 * simulated time, prices move together as calibrated, the CEX spread and
 * depth move with volatility, pools lag and dislocate with a heavy tail, gas
 * and latency vary with outliers, venues go down now and then; and it stays
 * seeded, reproducible, labelled simulated, with ids unique to the run.
 */
import { describe, expect, it } from 'vitest';
import type { LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator, type SimEvent } from '../../ingest/simulator/market-simulator.js';

const LADDER = [1000, 10000, 50000, 100000];
const T = Date.UTC(2025, 3, 1);
const HOUR = 3_600_000;
const full = loadPairs();
const some = (pairs: string[]): PairsCatalogue => ({
  ...full,
  pairs: full.pairs.filter((p) => pairs.includes(p.pair)),
});

function run(catalogue: PairsCatalogue, hours: number, seed = 99, startMs = T, cexTickMs = 1000): SimEvent[] {
  return [
    ...new MarketSimulator(catalogue, {
      seed,
      startMs,
      cexVenue: 'coinbase',
      ladderUsd: LADDER,
      cexTickMs,
      bookEveryTicks: 1_000_000,
    }).generate(startMs + hours * HOUR),
  ];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
const corr = (a: number[], b: number[]) => mean(a.map((x, i) => (x - mean(a)) * (b[i]! - mean(b)))) / (sd(a) * sd(b));
const quantile = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.floor(q * (xs.length - 1))]!;

const market = run(some(['ETH/USD', 'cbBTC/USD', 'DEGEN/USD', 'AERO/USD']), 8);
const quotes = market.filter((e) => e.topic === TOPICS.quotes).map((e) => e.event as QuoteEvent);
const cex = (pair: string) => quotes.filter((q) => q.pair === pair && q.venue_kind === 'cex');
const dex = (pair: string) => quotes.filter((q) => q.pair === pair && q.venue_kind === 'dex');
const mid = (q: QuoteEvent) => (q.bid + q.ask) / 2;

/** Mid at the end of each minute. */
function minuteMids(list: QuoteEvent[]): number[] {
  const out = new Map<number, number>();
  for (const q of list) out.set(Math.floor(q.event_time_ms / 60_000), mid(q));
  return [...out.values()];
}
const returns = (xs: number[]) => xs.slice(1).map((x, i) => Math.log(x / xs[i]!));

describe('the simulated market', () => {
  it('moves pairs together as calibrated: majors close to beta^2 = 0.81, a small cap less', () => {
    const [eth, btc, degen] = ['ETH/USD', 'cbBTC/USD', 'DEGEN/USD'].map((p) => returns(minuteMids(cex(p))));
    const majors = corr(eth!, btc!);
    const small = corr(eth!, degen!);
    expect(majors).toBeGreaterThan(0.65);
    expect(majors).toBeLessThan(0.95);
    expect(small).toBeLessThan(majors);
    expect(small).toBeGreaterThan(0.3);
  });

  it('widens the CEX spread and thins its depth as volatility rises', () => {
    const list = cex('ETH/USD');
    const byMinute = new Map<number, QuoteEvent[]>();
    for (const q of list)
      byMinute.set(Math.floor(q.event_time_ms / 60_000), [
        ...(byMinute.get(Math.floor(q.event_time_ms / 60_000)) ?? []),
        q,
      ]);
    const rows = [...byMinute.values()].map((qs) => ({
      vol: sd(returns(qs.map(mid))),
      spread: mean(qs.map((q) => ((q.ask - q.bid) / mid(q)) * 1e4)),
      depth: mean(qs.map((q) => q.depth!.buy_usd)),
    }));
    expect(
      corr(
        rows.map((r) => r.vol),
        rows.map((r) => r.spread),
      ),
    ).toBeGreaterThan(0.2);
    expect(
      corr(
        rows.map((r) => r.vol),
        rows.map((r) => r.depth),
      ),
    ).toBeLessThan(-0.1);
    const spreads = list.map((q) => ((q.ask - q.bid) / mid(q)) * 1e4);
    expect(sd(spreads) / mean(spreads)).toBeGreaterThan(0.15); // not a constant per pair
    const depths = list.map((q) => q.depth!.buy_usd);
    expect(sd(depths) / mean(depths)).toBeGreaterThan(0.1);
  });

  it('lets pools lag the CEX and dislocate with a heavy tail; pool depth moves too', () => {
    for (const pair of ['ETH/USD', 'AERO/USD']) {
      const c = cex(pair);
      let i = 0;
      const gaps: number[] = [];
      for (const d of dex(pair)) {
        while (i + 1 < c.length && c[i + 1]!.event_time_ms <= d.event_time_ms) i++;
        gaps.push(Math.abs(Math.log(mid(d) / mid(c[i]!))) * 1e4);
      }
      const p50 = quantile(gaps, 0.5);
      const p999 = quantile(gaps, 0.999);
      expect(p999 / p50, pair).toBeGreaterThan(4);
      const m = mean(gaps);
      const kurtosis = mean(gaps.map((g) => (g - m) ** 4)) / sd(gaps) ** 4;
      expect(kurtosis, pair).toBeGreaterThan(5);
      const depths = dex(pair).map((q) => q.depth!.buy_usd);
      expect(sd(depths) / mean(depths), pair).toBeGreaterThan(0.05);
    }
  });

  it('varies gas above the Base floor, and venue latency with outliers', () => {
    const gwei = dex('ETH/USD').map((q) => q.gas_price_gwei!);
    expect(Math.min(...gwei)).toBeGreaterThanOrEqual(0.005);
    expect(Math.max(...gwei) / Math.min(...gwei)).toBeGreaterThan(2);
    const rtt = market
      .filter((e) => e.topic === TOPICS.latency)
      .map((e) => e.event as LatencyEvent)
      .filter((l) => l.kind === 'dex_rpc' && l.ok)
      .map((l) => l.rtt_ms);
    expect(quantile(rtt, 0.99) / quantile(rtt, 0.5)).toBeGreaterThan(3);
  });

  it("has rare outages: failed probes and a gap in the venue's quotes", () => {
    const day = run(some(['ETH/USD']), 48, 7);
    const failed = day.filter((e) => e.topic === TOPICS.latency && !(e.event as LatencyEvent).ok);
    expect(failed.length).toBeGreaterThan(0);
    const times = day
      .filter((e) => e.topic === TOPICS.quotes && (e.event as QuoteEvent).venue_kind === 'cex')
      .map((e) => e.event.event_time_ms);
    let longestGap = 0;
    for (let i = 1; i < times.length; i++) longestGap = Math.max(longestGap, times[i]! - times[i - 1]!);
    expect(longestGap).toBeGreaterThan(5_000);
  });

  it('is seeded and labelled: the same run gives the same events, another start never reuses an id', () => {
    const pairs = some(['ETH/USD', 'AERO/USD']);
    const a = run(pairs, 0.25);
    expect(run(pairs, 0.25)).toEqual(a);
    expect(a.every((e) => e.event.source === 'simulated')).toBe(true);
    const ids = a.map((e) => e.event.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    const restarted = run(pairs, 0.25, 99, T + 1).map((e) => e.event.event_id);
    expect(restarted.filter((id) => ids.includes(id))).toEqual([]);
  });
});
