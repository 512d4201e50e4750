/** Hand-written QuoteEvents for unit tests (numbers explained in test/unit/spread-math.test.ts). */
import type { QuoteEvent } from '../../core/events/market.js';

export const T = Date.UTC(2025, 0, 1);

export function cexQuote(over: Partial<QuoteEvent> = {}): QuoteEvent {
  return {
    event_id: 'cex-quote-1',
    pair: 'ETH/USD',
    venue: 'coinbase',
    venue_kind: 'cex',
    event_time_ms: T,
    ingest_time_ms: T + 5,
    source: 'simulated',
    bid: 2010,
    ask: 2011,
    bid_size: 10,
    ask_size: 10,
    ladder: [
      { size_usd: 1000, buy_price: 2011, sell_price: 2010 },
      { size_usd: 10000, buy_price: 2012, sell_price: 2009 },
      { size_usd: 50000, buy_price: 2015, sell_price: 2005 },
    ],
    fee_bps: 10,
    fee_included: false,
    gas_usd: null,
    gas_price_gwei: null,
    sequence: 1,
    ...over,
  };
}

export function dexQuote(over: Partial<QuoteEvent> = {}): QuoteEvent {
  return {
    event_id: 'dex-quote-1',
    pair: 'ETH/USD',
    venue: 'uniswap_v3_base',
    venue_kind: 'dex',
    event_time_ms: T,
    ingest_time_ms: T + 50,
    source: 'simulated',
    bid: 1999,
    ask: 2000,
    bid_size: null,
    ask_size: null,
    ladder: [
      { size_usd: 1000, buy_price: 2000, sell_price: 1999 },
      { size_usd: 10000, buy_price: 2002, sell_price: 1997 },
      { size_usd: 50000, buy_price: 2010, sell_price: 1990 },
    ],
    fee_bps: 5,
    fee_included: true,
    gas_usd: 0.5,
    gas_price_gwei: 0.01,
    sequence: 100,
    ...over,
  };
}

/** A CEX quote at T + dt whose bid/ask (and ladder) are shifted by `shift` USD (0: sells 10 USD above the DEX). */
export function cexAt(dt: number, shift = 0, id = `cex-${dt}`): QuoteEvent {
  const base = cexQuote();
  return cexQuote({
    event_id: id,
    event_time_ms: T + dt,
    bid: base.bid + shift,
    ask: base.ask + shift,
    ladder: base.ladder.map((s) => ({
      size_usd: s.size_usd,
      buy_price: s.buy_price! + shift,
      sell_price: s.sell_price! + shift,
    })),
  });
}

/** The DEX quote at T + dt. */
export const dexAt = (dt: number, id = `dex-${dt}`): QuoteEvent => dexQuote({ event_id: id, event_time_ms: T + dt });
