/**
 * GET|POST /api/v1/crypto/dislocations: the dislocations (CEX/DEX arbitrage
 * opportunities) of a pair opened in a 15-minute slice, each at its latest
 * revision (core/store/tables/dislocations.ts, docs/metrics.md section 2).
 * An empty list is a valid answer inside coverage; outside it the pre-flight
 * answers 404 with no charge.
 */
import { z } from 'zod';
import { DislocationStatus } from '../../core/events/market.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { dislocationsInSlice } from '../../core/store/tables/dislocations.js';
import { DateParam, IsoTimestamp, SourceField, TimeParam, pairParam } from '../catalogue/schemas.js';
import type { SkuCall } from '../catalogue/sku.js';
import { pairVenues, sourceText, windowWithinCoverage, type TimeWindow } from './window.js';

export function dislocationsInput(pairs: PairsCatalogue) {
  return z.strictObject({
    pair: pairParam(pairs),
    date: DateParam.optional(),
    time: TimeParam.optional(),
  });
}
export type DislocationsInput = z.output<ReturnType<typeof dislocationsInput>>;

export const DislocationItem = z
  .object({
    id: z.number().int().describe('Public numeric id of the opportunity (52 bits of sha256 of its internal id)'),
    timestamp: IsoTimestamp.describe('When the opportunity opened'),
    pair: z.string(),
    buy_venue: z.string().describe('Venue identifier where the base is bought (CEX id or `<protocol>_base`)'),
    sell_venue: z.string().describe('Venue identifier where the base is sold'),
    buy_price: z.number().describe('Ask on the buy venue (USD per base unit)'),
    sell_price: z.number().describe('Bid on the sell venue (USD per base unit)'),
    raw_spread_bps: z.number().describe('(sell bid - buy ask) / buy ask x 1e4'),
    net_spread_bps: z.number().describe('Best net spread after fees, gas and slippage over the ladder sizes'),
    est_profit_usd: z.number().describe('Profit at the most profitable ladder size (>= 0)'),
    liquidity_depth_usd: z.number().describe('Largest USD size fillable on both venues'),
    status: DislocationStatus.describe('`OPPORTUNITY` while open, then `CLOSED` or `EXPIRED`'),
    duration_ms: z.number().int().describe('Time open so far, or until it closed'),
  });

export const DislocationsOutput = z
  .object({
    pair: z.string(),
    slice_start: IsoTimestamp,
    slice_end: IsoTimestamp,
    count: z.number().int().describe('Length of `dislocations`'),
    dislocations: z.array(DislocationItem).describe('Opportunities opened in the slice, oldest first, at their latest revision'),
    source: SourceField,
  });
export type DislocationsOutput = z.infer<typeof DislocationsOutput>;

export function dislocationsPreflight({ input, runtime }: SkuCall<DislocationsInput>): Promise<TimeWindow> {
  return windowWithinCoverage(runtime.store, input, { pair: input.pair });
}

export async function dislocationsHandler({ input, runtime }: SkuCall<DislocationsInput>, window: TimeWindow): Promise<DislocationsOutput> {
  const slice = await dislocationsInSlice(runtime.store, input.pair, window.fromMs, window.toMs);
  const pools = runtime.pairs.pairs.find((p) => p.pair === input.pair)?.dex ?? [];
  const venues = slice.dislocations.length
    ? slice.dislocations.flatMap((d) => [d.buy_venue, d.sell_venue]).sort((a, b) => Number(b === runtime.config.CEX_EXCHANGE) - Number(a === runtime.config.CEX_EXCHANGE))
    : pairVenues(runtime.config.CEX_EXCHANGE, pools);
  return {
    pair: slice.pair,
    slice_start: slice.slice_start,
    slice_end: slice.slice_end,
    count: slice.count,
    dislocations: slice.dislocations.map((d) => ({
      id: d.id,
      timestamp: d.timestamp,
      pair: d.pair,
      buy_venue: d.buy_venue,
      sell_venue: d.sell_venue,
      buy_price: d.buy_price,
      sell_price: d.sell_price,
      raw_spread_bps: d.raw_spread_bps,
      net_spread_bps: d.net_spread_bps,
      est_profit_usd: d.est_profit_usd,
      liquidity_depth_usd: d.liquidity_depth_usd,
      status: d.status,
      duration_ms: d.duration_ms,
    })),
    source: sourceText(venues, slice.source, runtime.config.MARKET_SOURCE),
  };
}
