/**
 * The event published on md.dislocations.v1 for a detector revision
 * (aggregate/quote-consumer.ts `dislocationEvent`): exactly what zod's parse
 * of the record gives (its DislocationEvent fields, nothing else), and a
 * record the schema refuses never becomes an event.
 */
import { describe, expect, it } from 'vitest';
import { applyQuote, emptyPairState, type DislocationRecord } from '../../aggregate/dislocation-detector.js';
import { dislocationEvent } from '../../aggregate/quote-consumer.js';
import { DislocationEvent, type QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';

const START = Date.UTC(2025, 0, 1);
const full = loadPairs();
const catalogue = { ...full, pairs: full.pairs.filter((p) => p.pair === 'ETH/USD') };

function records(): DislocationRecord[] {
  const state = emptyPairState('ETH/USD');
  const out: DislocationRecord[] = [];
  for (const e of new MarketSimulator(catalogue, {
    seed: 3,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: [1000, 10000, 50000],
    bookDepth: 5,
  }).generate(START + 20 * 60_000)) {
    if (e.topic === TOPICS.quotes)
      out.push(...applyQuote(state, e.event as QuoteEvent, { maxQuoteAgeMs: 30_000 }).dislocations);
  }
  return out;
}

describe('published dislocation events', () => {
  const all = records();

  it('equal zod parse of every record (opened, revised, closed)', () => {
    expect(new Set(all.map((d) => d.status))).toEqual(new Set(['OPPORTUNITY', 'CLOSED']));
    for (const d of all) {
      const event = dislocationEvent(d);
      expect(event).toEqual(DislocationEvent.parse(d));
      expect(Object.keys(event).sort()).toEqual(Object.keys(DislocationEvent.parse(d)).sort());
      expect(event).not.toHaveProperty('id');
    }
  });

  it('refuses a record the schema refuses, naming the field', () => {
    const d = all[0]!;
    expect(() => dislocationEvent({ ...d, buy_price: -1 })).toThrow(/buy_price/);
    expect(() => dislocationEvent({ ...d, status: 'MAYBE' as DislocationRecord['status'] })).toThrow(/status/);
    expect(d.id).toBeTypeOf('number'); // the record itself is left as it was
  });
});
