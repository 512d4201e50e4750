/**
 * Paper execution of one decision on hand-written quotes: buy on the DEX,
 * sell on the CEX, 10 000 USD (test/helpers/market-fixtures.ts prices).
 * Latencies: CEX REST 70 ms (sample at T-5 s), Base RPC 30 ms (T-1 s) + one
 * block (2 s): the CEX leg arrives at T+70, the DEX leg at T+2030.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PAPER_OPTIONS,
  paperExecute,
  quoteWindows,
  type PaperInputs,
} from '../../aggregate/paper-execution.js';
import type { QuoteEvent } from '../../core/events/market.js';
import type { ActionableRevision } from '../../core/store/tables/dislocations.js';
import { T, cexQuote, dexQuote } from '../helpers/market-fixtures.js';

const decision: ActionableRevision = {
  opportunity_id: 'dis_test',
  id: 42,
  revision: 0,
  pair: 'ETH/USD',
  buy_venue: 'uniswap_v3_base',
  sell_venue: 'coinbase',
  opened_at_ms: T,
  decided_at_ms: T,
  profit_size_usd: 10000,
  net_spread_bps: 35,
  source: 'simulated',
};

/** The DEX quote of the next block with every buy price raised by `up` USD. */
function nextBlock(up: number, dt = 2000): QuoteEvent {
  const q = dexQuote();
  return dexQuote({
    event_id: `dex-${dt}`,
    event_time_ms: T + dt,
    ask: q.ask + up,
    ladder: q.ladder.map((s) => ({ ...s, buy_price: s.buy_price! + up })),
  });
}

function inputs(quotes: QuoteEvent[], over: Partial<PaperInputs> = {}): PaperInputs {
  const sorted = [...quotes].sort((a, b) => a.event_time_ms - b.event_time_ms);
  const wm = new Map<string, number>();
  for (const q of sorted) wm.set(q.venue, Math.max(wm.get(q.venue) ?? 0, q.event_time_ms));
  return {
    quotes: sorted,
    latency: new Map([
      ['cex_rest', [{ event_id: 'l1', ts_ms: T - 5000, rtt_ms: 70 }]],
      ['dex_rpc', [{ event_id: 'l2', ts_ms: T - 1000, rtt_ms: 30 }]],
    ]),
    latencyWatermarks: new Map([
      ['cex_rest', T + 5000],
      ['dex_rpc', T + 1000],
    ]),
    quoteWatermarks: wm,
    ...over,
  };
}

const base = [
  dexQuote(),
  cexQuote(),
  cexQuote({ event_id: 'cex-500', event_time_ms: T + 500 }),
  cexQuote({ event_id: 'cex-3000', event_time_ms: T + 3000 }),
];

describe('paper execution', () => {
  it("fills when the spread still pays at the legs' arrival", () => {
    // DEX buy price at 10k rises 2002 -> 2004: raw (2009-2004)/2004 = 24.95 bps, net = 24.95 - 10 - 0.5
    const e = paperExecute(
      decision,
      inputs([...base, nextBlock(2), dexQuote({ event_id: 'dex-4000', event_time_ms: T + 4000 })]),
    )!;
    expect(e).toMatchObject({
      outcome: 'filled',
      filled: 1,
      buy_latency_ms: 2030,
      sell_latency_ms: 70,
      buy_arrival_ms: T + 2030,
      sell_arrival_ms: T + 70,
      buy_quote_event_id: 'dex-2000',
      sell_quote_event_id: 'cex-quote-1',
      quoted_buy_price: 2002,
      quoted_sell_price: 2009,
      fill_buy_price: 2004,
      fill_sell_price: 2009,
      size_usd: 10000,
    });
    expect(e.realised_raw_bps).toBeCloseTo(((2009 - 2004) / 2004) * 1e4, 9);
    expect(e.realised_net_bps).toBeCloseTo(((2009 - 2004) / 2004) * 1e4 - 10 - 0.5, 9);
    expect(e.realised_profit_usd).toBeCloseTo((10000 * e.realised_net_bps!) / 1e4, 9);
  });

  it('misses when the next block took the edge away', () => {
    const e = paperExecute(
      decision,
      inputs([...base, nextBlock(6), dexQuote({ event_id: 'dex-4000', event_time_ms: T + 4000 })]),
    )!;
    // (2009 - 2008) / 2008 = 4.98 bps < 10.5 bps of costs
    expect(e.outcome).toBe('missed');
    expect(e.filled).toBe(0);
    expect(e.realised_net_bps).toBeCloseTo(((2009 - 2008) / 2008) * 1e4 - 10.5, 9);
  });

  it('waits while an input is not complete yet', () => {
    // No DEX quote after the DEX leg's arrival yet.
    expect(paperExecute(decision, inputs([...base, nextBlock(2)]))).toBeUndefined();
    // No latency sample newer than the decision yet.
    const quotes = [...base, nextBlock(2), dexQuote({ event_id: 'dex-4000', event_time_ms: T + 4000 })];
    expect(
      paperExecute(
        decision,
        inputs(quotes, {
          latencyWatermarks: new Map([
            ['cex_rest', T - 5000],
            ['dex_rpc', T + 1000],
          ]),
        }),
      ),
    ).toBeUndefined();
  });

  it('is unmeasured without a recent latency sample, and missed when a venue went silent', () => {
    const quotes = [...base, nextBlock(2), dexQuote({ event_id: 'dex-4000', event_time_ms: T + 4000 })];
    const old = inputs(quotes, {
      latency: new Map([
        ['cex_rest', [{ event_id: 'l0', ts_ms: T - DEFAULT_PAPER_OPTIONS.latencyLookbackMs - 1, rtt_ms: 70 }]],
        ['dex_rpc', [{ event_id: 'l2', ts_ms: T - 1000, rtt_ms: 30 }]],
      ]),
    });
    expect(paperExecute(decision, old)!.outcome).toBe('unmeasured');
    // The DEX stops quoting; the CEX quotes on for more than the maximum quote age.
    const silent = [...base, cexQuote({ event_id: 'cex-40000', event_time_ms: T + 40_000 })];
    const e = paperExecute(decision, inputs(silent))!;
    expect(e.outcome).toBe('missed');
    expect(e.fill_buy_price).toBeNull();
  });
});

describe('quote windows of a run', () => {
  const latency = new Map([
    ['cex_rest', [{ event_id: 'l1', ts_ms: T - 5000, rtt_ms: 70 }]],
    ['dex_rpc', [{ event_id: 'l2', ts_ms: T - 1000, rtt_ms: 30.4 }]],
  ] as const);
  const at = (pair: string, dt: number): ActionableRevision => ({ ...decision, pair, decided_at_ms: T + dt });
  const age = DEFAULT_PAPER_OPTIONS.maxQuoteAgeMs;

  it('spans from the oldest usable quote to the later leg arrival, and merges overlapping windows per pair', () => {
    // The DEX leg arrives last: 30 ms (rounded) + one block of 2,000 ms after the decision.
    const reach = Math.round(30.4 + DEFAULT_PAPER_OPTIONS.dexInclusionMs);
    const windows = quoteWindows(
      [at('ETH/USD', 0), at('ETH/USD', 10_000), at('ETH/USD', 600_000), at('AERO/USD', 0)],
      latency,
      DEFAULT_PAPER_OPTIONS,
    );
    expect(windows).toEqual([
      { pair: 'ETH/USD', fromMs: T - age, toMs: T + 10_000 + reach + 1 },
      { pair: 'ETH/USD', fromMs: T + 600_000 - age, toMs: T + 600_000 + reach + 1 },
      { pair: 'AERO/USD', fromMs: T - age, toMs: T + reach + 1 },
    ]);
  });

  it('still covers the decision itself before any latency sample exists', () => {
    expect(quoteWindows([at('ETH/USD', -10_000)], latency, DEFAULT_PAPER_OPTIONS)).toEqual([
      { pair: 'ETH/USD', fromMs: T - 10_000 - age, toMs: T - 10_000 + 1 },
    ]);
  });
});
