/**
 * Fresh legs only (aggregate/dislocation-detector.ts): a leg older than its
 * venue's maximum quote age at the evaluation's event time is not evaluated,
 * and every such evaluation is counted. Driven through a simulated Base RPC
 * outage (DEX blocks every 2 s stop for 30 s while the CEX ticks every
 * 500 ms) and a CEX outage, on hand-written quotes whose crossing pays
 * (test/helpers/market-fixtures.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  applyQuote,
  DEFAULT_QUOTE_AGE_LIMITS,
  emptyPairState,
  type DetectorOptions,
  type DetectorOutput,
} from '../../aggregate/dislocation-detector.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { T, cexAt, dexAt } from '../helpers/market-fixtures.js';

const PAIR = 'ETH/USD';
const FRESH: DetectorOptions = { maxQuoteAgeMs: { cex: 5000, dex: 4000 } };

/** Quotes in event-time order: CEX every 500 ms over [0, endMs), DEX every 2 s except in [downFrom, downTo). */
function market(
  endMs: number,
  dexDown: [number, number] | null,
  cexDown: [number, number] | null = null,
): QuoteEvent[] {
  const quotes: QuoteEvent[] = [];
  const down = (w: [number, number] | null, t: number) => w !== null && t >= w[0] && t < w[1];
  for (let t = 0; t < endMs; t += 500) {
    if (t % 2000 === 0 && !down(dexDown, t)) quotes.push(dexAt(t));
    if (!down(cexDown, t)) quotes.push(cexAt(t + 100));
  }
  return quotes;
}

function run(quotes: QuoteEvent[], options: DetectorOptions): { quote: QuoteEvent; out: DetectorOutput }[] {
  const state = emptyPairState(PAIR);
  return quotes.map((quote) => ({ quote, out: applyQuote(state, quote, options) }));
}

describe('fresh legs only', () => {
  it('stops evaluating when the DEX leg is older than two blocks, counts every skipped evaluation, and resumes on recovery', () => {
    const outage: [number, number] = [10_002, 40_000]; // the last block before it is at 10 000, the first after at 40 000
    const steps = run(market(60_000, outage), FRESH);
    const lastBlockBefore = T + 10_000;

    // Expected from the quotes alone: a CEX quote is skipped when the newest DEX quote is more than 4 s older.
    let lastDex = -Infinity;
    let expectedStale = 0;
    for (const { quote } of steps) {
      if (quote.venue_kind === 'dex') lastDex = quote.event_time_ms;
      else if (quote.event_time_ms - lastDex > 4000) expectedStale += 1;
    }
    expect(expectedStale).toBeGreaterThan(40); // 25.5 s of 500 ms CEX ticks

    const stale = steps.flatMap((s) => s.out.stale);
    expect(stale).toHaveLength(expectedStale);
    for (const s of stale) {
      expect(s).toMatchObject({
        pair: PAIR,
        stale_venue: 'uniswap_v3_base',
        stale_venue_kind: 'dex',
        fresh_venue: 'coinbase',
      });
      expect(s.max_age_ms).toBe(4000);
      expect(s.leg_age_ms).toBe(s.ts_ms - lastBlockBefore);
      expect(s.leg_age_ms).toBeGreaterThan(4000);
      expect(s.evaluation_id).toBe(`${s.quote_event_id}|uniswap_v3_base`);
    }
    // No evaluation while stale: no spread sample with a leg older than its maximum, none during the outage past it.
    const samples = steps.flatMap((s) => s.out.samples);
    expect(samples.some((x) => x.ts_ms > lastBlockBefore + 4000 && x.ts_ms < T + outage[1])).toBe(false);
    // A skipped evaluation is a sample not taken: together they are one per CEX quote once both legs exist.
    const cexQuotes = steps.filter((s) => s.quote.venue_kind === 'cex').length;
    const dexQuotes = steps.filter((s) => s.quote.venue_kind === 'dex').length;
    expect(samples.length + stale.length).toBe(cexQuotes + dexQuotes - 1); // the first DEX quote has no counterpart

    // The opportunity open before the outage expires when the DEX leg reached 4 s; one opens again after it.
    const dislocations = steps.flatMap((s) => s.out.dislocations);
    const expired = dislocations.filter((d) => d.status === 'EXPIRED');
    expect(expired).toHaveLength(1);
    expect(expired[0]!.updated_at_ms).toBe(lastBlockBefore + 4000);
    const reopened = dislocations.filter((d) => d.revision === 0 && d.opened_at_ms >= T + outage[1]);
    expect(reopened).toHaveLength(1);
    expect(reopened[0]!.opened_at_ms).toBe(T + outage[1]);
    expect(samples.some((x) => x.ts_ms >= T + outage[1])).toBe(true);
  });

  it('used to compare legs up to 30 s old: the same outage under one 30 s maximum samples throughout', () => {
    const steps = run(market(60_000, [10_002, 40_000]), { maxQuoteAgeMs: 30_000 });
    const samples = steps.flatMap((s) => s.out.samples);
    expect(samples.filter((x) => x.ts_ms > T + 14_000 && x.ts_ms < T + 40_000).length).toBeGreaterThan(40);
    expect(steps.flatMap((s) => s.out.stale)).toEqual([]); // nothing was older than 30 s
  });

  it('holds each venue to its own cadence: a CEX leg stays live for 5 s, a DEX leg for 4 s', () => {
    // CEX silent from 10.1 s to 30 s: DEX blocks keep coming and are compared with a CEX quote up to 5 s old.
    const steps = run(market(40_000, null, [10_500, 30_000]), FRESH);
    const stale = steps.flatMap((s) => s.out.stale);
    const lastCex = T + 10_100;
    // DEX blocks at 12, 14 s (CEX leg 1.9 and 3.9 s old) are evaluated; 16 to 30 s (5.9 s and more) are not (the
    // block at 30 s comes before the first CEX tick after the outage).
    expect(stale.map((s) => s.ts_ms - T)).toEqual([16_000, 18_000, 20_000, 22_000, 24_000, 26_000, 28_000, 30_000]);
    for (const s of stale) {
      expect(s).toMatchObject({ stale_venue: 'coinbase', stale_venue_kind: 'cex', fresh_venue: 'uniswap_v3_base' });
      expect([s.leg_age_ms, s.max_age_ms]).toEqual([s.ts_ms - lastCex, 5000]);
    }
    const samples = steps.flatMap((s) => s.out.samples);
    expect(samples.filter((x) => x.ts_ms > lastCex && x.ts_ms < T + 30_000).map((x) => x.ts_ms - T)).toEqual([
      12_000, 14_000,
    ]);
  });

  it('defaults to two Base blocks and a few CEX seconds', () => {
    expect(DEFAULT_QUOTE_AGE_LIMITS).toEqual({ cex: 5000, dex: 4000 });
  });
});
