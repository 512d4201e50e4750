/**
 * Market signals for x-sentiment from the gateway's own telemetry (the store
 * the aggregate role writes), for a pair of the catalogue:
 *  - window: the AI_SENTIMENT_MARKET_WINDOW_MINUTES ending at the pair's
 *    newest stored quote, if that quote is at most
 *    AI_SENTIMENT_MARKET_MAX_AGE_MINUTES old (otherwise: unavailable);
 *  - price change: median mid of the window's last five minutes against its
 *    first five minutes, on the DEX pools and on the CEX (quoteTopsInRange);
 *  - spread: mean net CEX/DEX spread over the window and its trend (second
 *    half minus first half, from the 15-minute spread candles);
 *  - dislocations: opened in the window, their trend, and the share in which
 *    the DEX was the expensive side (buy on the CEX, sell on the DEX: on-chain
 *    demand) (opportunitiesInSlice).
 * Reading: the price change drives the score (tanh of change / 2%, so 1% is
 * 0.46 and 3% is 0.91); the DEX-premium share adds a little when there are
 * at least three dislocations. A widening spread or more dislocations is a
 * direction-free sign of stress: reported as neutral signals and lowering
 * the confidence.
 */
import type { Config } from '../../core/config.js';
import type { SentimentSignal } from '../../core/ai/ai-provider.js';
import type { PairSpec } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { isDexVenue, opportunitiesInSlice } from '../../core/store/tables/dislocations.js';
import { sourceLabel } from '../../core/store/tables/query-helpers.js';
import { quoteTopsInRange, quoteWatermarks, type QuoteTop } from '../../core/store/tables/quotes.js';
import { spreadCandles } from '../../core/store/tables/spread-samples.js';

const MIN = 60_000;
const EDGE_MS = 5 * MIN;

export interface MarketBlock {
  pair: string;
  window_start: string;
  window_end: string;
  dex_price_change_pct: number | null;
  cex_price_change_pct: number | null;
  avg_net_spread_bps: number | null;
  spread_trend_bps: number | null;
  dislocations: number;
  dislocations_trend: number;
  dex_premium_share: number | null;
  data_source: string;
}

export type MarketReading =
  | { available: true; market: MarketBlock; score: number; confidence: number; signals: SentimentSignal[] }
  | { available: false; reason: string };

const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mid = (q: QuoteTop) => (q.bid + q.ask) / 2;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;

async function priceChangePct(
  store: Store,
  pair: string,
  from: number,
  to: number,
  venues: string[],
): Promise<number | null> {
  if (!venues.length) return null;
  const [first, last] = await Promise.all([
    quoteTopsInRange(store, pair, from, Math.min(to, from + EDGE_MS), venues),
    quoteTopsInRange(store, pair, Math.max(from, to - EDGE_MS), to, venues),
  ]);
  const a = median(first.map(mid));
  const b = median(last.map(mid));
  if (a === null || b === null || a <= 0) return null;
  return ((b - a) / a) * 100;
}

export async function readMarketSignals(
  store: Store,
  config: Config,
  pair: PairSpec,
  nowMs: number,
): Promise<MarketReading> {
  const maxAgeMs = config.AI_SENTIMENT_MARKET_MAX_AGE_MINUTES * MIN;
  const windowMs = config.AI_SENTIMENT_MARKET_WINDOW_MINUTES * MIN;
  const marks = await quoteWatermarks(store, [pair.pair], nowMs - maxAgeMs);
  const newest = Math.max(-Infinity, ...marks.values());
  if (!Number.isFinite(newest)) {
    return {
      available: false,
      reason: `no ${pair.pair} quotes stored in the last ${config.AI_SENTIMENT_MARKET_MAX_AGE_MINUTES} minutes`,
    };
  }
  const to = Math.min(nowMs, newest) + 1;
  const from = to - windowMs;
  const half = from + windowMs / 2;
  const dexVenues = [...new Set(pair.dex.map((d) => d.venue))];
  const [dexChange, cexChange, candles, opportunities] = await Promise.all([
    priceChangePct(store, pair.pair, from, to, dexVenues),
    priceChangePct(store, pair.pair, from, to, [config.CEX_EXCHANGE]),
    spreadCandles(store, pair.pair, from, to, '15m'),
    opportunitiesInSlice(store, from, to, pair.pair),
  ]);

  // Spread over the window and its trend, weighted by samples.
  const weighted = (cs: typeof candles) => {
    const n = cs.reduce((a, c) => a + c.sample_count, 0);
    return n ? cs.reduce((a, c) => a + c.avg_net_spread_bps * c.sample_count, 0) / n : null;
  };
  const avgNet = weighted(candles);
  const firstHalf = weighted(candles.filter((c) => Date.parse(c.slice_start) < half));
  const secondHalf = weighted(candles.filter((c) => Date.parse(c.slice_start) >= half));
  const spreadTrend = firstHalf !== null && secondHalf !== null ? secondHalf - firstHalf : null;

  const opened = opportunities.length;
  const openedLate = opportunities.filter((o) => o.opened_at_ms >= half).length;
  const dislocationsTrend = openedLate - (opened - openedLate);
  const dexRich = opportunities.filter((o) => isDexVenue(o.sell_venue) && !isDexVenue(o.buy_venue)).length;
  const dexCheap = opportunities.filter((o) => isDexVenue(o.buy_venue) && !isDexVenue(o.sell_venue)).length;
  const premiumShare = dexRich + dexCheap > 0 ? dexRich / (dexRich + dexCheap) : null;

  const changes = [dexChange, cexChange].filter((x): x is number => x !== null);
  if (!changes.length && !opened && avgNet === null) {
    return { available: false, reason: `not enough ${pair.pair} telemetry in the window to read a signal` };
  }
  const change = changes.length ? changes.reduce((a, b) => a + b, 0) / changes.length : 0;
  const sPrice = Math.tanh(change / 2);
  const sFlow = premiumShare !== null && opened >= 3 ? (2 * premiumShare - 1) * Math.min(1, opened / 10) : 0;
  const score = Math.max(-1, Math.min(1, 0.85 * sPrice + 0.15 * sFlow));
  const stressed = (spreadTrend !== null && spreadTrend > 5) || dislocationsTrend >= 3;
  let confidence =
    0.3 +
    (changes.length ? 0.35 * Math.min(1, Math.abs(change) / 1.5) : 0) +
    (opened >= 3 ? 0.1 : 0) +
    (changes.length === 2 ? 0.05 : 0);
  if (stressed) confidence -= 0.1;
  confidence = Math.max(0.1, Math.min(0.9, confidence));

  const minutes = config.AI_SENTIMENT_MARKET_WINDOW_MINUTES;
  const dirOf = (x: number, eps: number) =>
    (x > eps ? 'bullish' : x < -eps ? 'bearish' : 'neutral') as SentimentSignal['direction'];
  const raw: { signal: string; direction: SentimentSignal['direction']; magnitude: number }[] = [];
  if (dexChange !== null)
    raw.push({
      signal: `DEX price ${signed(dexChange)}% over ${minutes} min (${dexVenues.join(', ')})`,
      direction: dirOf(dexChange, 0.1),
      magnitude: Math.abs(Math.tanh(dexChange / 2)) + 0.05,
    });
  if (cexChange !== null)
    raw.push({
      signal: `CEX price ${signed(cexChange)}% over ${minutes} min (${config.CEX_EXCHANGE})`,
      direction: dirOf(cexChange, 0.1),
      magnitude: 0.5 * Math.abs(Math.tanh(cexChange / 2)) + 0.05,
    });
  if (premiumShare !== null) {
    raw.push({
      signal: `${opened} dislocation${opened === 1 ? '' : 's'} opened, DEX the expensive side in ${Math.round(premiumShare * 100)}%`,
      direction: opened >= 3 ? dirOf(2 * premiumShare - 1, 0.2) : 'neutral',
      magnitude: 0.15 * Math.abs(sFlow) + 0.05,
    });
  }
  if (spreadTrend !== null) {
    raw.push({
      signal: `net spread ${spreadTrend >= 0 ? 'widening' : 'narrowing'} ${signed(spreadTrend, 1)} bps (second vs first half of the window)`,
      direction: 'neutral',
      magnitude: 0.05,
    });
  }
  if (opened > 0 && dislocationsTrend !== 0) {
    raw.push({
      signal: `dislocations ${dislocationsTrend > 0 ? 'rising' : 'falling'} (${openedLate} vs ${opened - openedLate} per half window)`,
      direction: 'neutral',
      magnitude: 0.05,
    });
  }
  const total = raw.reduce((a, r) => a + r.magnitude, 0) || 1;
  const signals = raw.map((r) => ({
    signal: r.signal,
    direction: r.direction,
    weight: Math.round((r.magnitude / total) * 1000) / 1000,
  }));

  return {
    available: true,
    score: round(score, 3),
    confidence: round(confidence, 3),
    signals,
    market: {
      pair: pair.pair,
      window_start: new Date(from).toISOString(),
      window_end: new Date(to).toISOString(),
      dex_price_change_pct: dexChange === null ? null : round(dexChange, 3),
      cex_price_change_pct: cexChange === null ? null : round(cexChange, 3),
      avg_net_spread_bps: avgNet === null ? null : round(avgNet),
      spread_trend_bps: spreadTrend === null ? null : round(spreadTrend),
      dislocations: opened,
      dislocations_trend: dislocationsTrend,
      dex_premium_share: premiumShare === null ? null : round(premiumShare, 3),
      data_source: sourceLabel([...candles.map((c) => c.source), ...opportunities.map((o) => o.source)]) ?? 'unknown',
    },
  };
}
