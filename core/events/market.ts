/**
 * Market-data events on the bus (versioned topics in core/topics.ts), keyed by
 * pair. Every event carries an `event_id` derived from what it is (venue,
 * pair, sequence or block, event time, and a digest of its content: see
 * core/events/event-id.ts), so a replay never counts twice and no id names two
 * different events across restarts and replicas; the event time at the venue
 * and the ingest time; and `source` (`live` or `simulated`), which surfaces in
 * every response built from it.
 */
import { z } from 'zod';

/** `<BASE>/USD`, e.g. `ETH/USD`, `cbBTC/USD`. */
export const Pair = z.string().regex(/^[A-Za-z0-9]{1,15}\/USD$/, 'pair must look like BASE/USD');
export const DataSource = z.enum(['live', 'simulated']);
export const VenueKind = z.enum(['cex', 'dex']);
/** Venue identifiers: the CEX id from ccxt (e.g. `coinbase`), or `<protocol>_base` for Base pools (e.g. `uniswap_v3_base`). */
export const Venue = z.string().regex(/^[a-z0-9_]{2,40}$/);

const envelope = {
  event_id: z.string().min(8).max(128),
  pair: Pair,
  venue: Venue,
  event_time_ms: z.number().int().positive(),
  ingest_time_ms: z.number().int().positive(),
  source: DataSource,
};

/**
 * Executable prices for one order size: what a taker pays per base unit to buy
 * `size_usd` worth, and receives per base unit to sell it. CEX: the VWAP of a
 * walk through the book. DEX: the on-chain quoter's amounts (pool fee
 * included, see `fee_included`). Absent side: not fillable at that size.
 */
export const LadderStep = z.object({
  size_usd: z.number().positive(),
  buy_price: z.number().positive().nullable(),
  sell_price: z.number().positive().nullable(),
});
export type LadderStep = z.infer<typeof LadderStep>;

/** An executable price measured at a size: [size_usd, price per base unit], on the ladder's fee basis. */
export const PricePoint = z.tuple([z.number().positive(), z.number().positive()]);

/**
 * Measured depth of one venue (docs/metrics.md, "Depth"): per side, the
 * largest USD notional a taker order trades with its average execution price
 * (fee excluded) within `impact_bps` of the venue's mid. DEX: found by
 * searching the quoter (ingest/dex/depth-search.ts); CEX: by walking the
 * level-2 book (ingest/cex/book-math.ts). `*_capped`: the search stopped at
 * its limit (DEX: the documented hard maximum; CEX: the end of the top-N
 * book), so the depth is at least the value: never a silent cap.
 * `*_points`: executable prices measured beside the ladder (the search's
 * probes, the depth itself), ascending by size, on the ladder's fee basis.
 */
export const QuoteDepth = z.object({
  impact_bps: z.number().positive(),
  buy_usd: z.number().nonnegative(),
  sell_usd: z.number().nonnegative(),
  buy_capped: z.boolean(),
  sell_capped: z.boolean(),
  buy_points: z.array(PricePoint).max(32),
  sell_points: z.array(PricePoint).max(32),
});
export type QuoteDepth = z.infer<typeof QuoteDepth>;

export const QuoteEvent = z.object({
  ...envelope,
  venue_kind: VenueKind,
  bid: z.number().positive(),
  ask: z.number().positive(),
  /** Size at the best level in base units (CEX); pool-equivalent depth is in the ladder (DEX). */
  bid_size: z.number().nonnegative().nullable(),
  ask_size: z.number().nonnegative().nullable(),
  ladder: z.array(LadderStep).max(16),
  /** CEX taker fee or DEX pool fee, in bps. */
  fee_bps: z.number().nonnegative(),
  /** True when ladder prices already include the fee (DEX quoter amounts). */
  fee_included: z.boolean(),
  /** DEX only: gas cost of one swap in USD, and the gas price it came from. */
  gas_usd: z.number().nonnegative().nullable(),
  gas_price_gwei: z.number().nonnegative().nullable(),
  /** CEX book sequence/nonce or DEX block number, when known. */
  sequence: z.number().int().nonnegative().nullable(),
  /** Measured depth; absent when the producer did not measure it (then the ladder's largest size is a lower bound). */
  depth: QuoteDepth.optional(),
});
export type QuoteEvent = z.infer<typeof QuoteEvent>;

/** Top-N level-2 snapshot, [price, size in base units], best first. */
export const BookEvent = z.object({
  ...envelope,
  bids: z.array(z.tuple([z.number().positive(), z.number().nonnegative()])).max(200),
  asks: z.array(z.tuple([z.number().positive(), z.number().nonnegative()])).max(200),
  sequence: z.number().int().nonnegative().nullable(),
});
export type BookEvent = z.infer<typeof BookEvent>;

/** One measured round trip: a CEX public REST call, or a Base RPC call. */
export const LatencyEvent = z.object({
  event_id: z.string().min(8).max(128),
  venue: Venue,
  venue_kind: VenueKind,
  /** `cex_rest` or `dex_rpc`. */
  kind: z.enum(['cex_rest', 'dex_rpc']),
  endpoint: z.string().max(200),
  rtt_ms: z.number().nonnegative(),
  ok: z.boolean(),
  event_time_ms: z.number().int().positive(),
  ingest_time_ms: z.number().int().positive(),
  source: DataSource,
});
export type LatencyEvent = z.infer<typeof LatencyEvent>;

export const DislocationStatus = z.enum(['OPPORTUNITY', 'CLOSED', 'EXPIRED']);

/**
 * The numbers of a dislocation at one revision (docs/metrics.md sections 1
 * and 2), defined once under their wire names: the event below, the stored
 * revision (core/store/tables/dislocations.ts), the detector's evaluation
 * (aggregate/spread-math.ts) and the dislocations route's item and revision
 * (api/telemetry/dislocations/) are derived from it.
 */
export const DislocationNumbers = z.object({
  /** Top of book: the buy venue's ask and the sell venue's bid (USD per base unit). */
  buy_price: z.number().positive(),
  sell_price: z.number().positive(),
  raw_spread_bps: z.number(),
  /** Best net spread over the ladder sizes, after slippage, fees and gas. */
  net_spread_bps: z.number(),
  est_profit_usd: z.number(),
  /** Size at which the net spread falls to zero on the measured prices, at most the depth (USD notional). */
  capacity_usd: z.number().nonnegative(),
  /** The capacity reached the measured depth with the net spread still positive: a lower bound. */
  capacity_capped: z.boolean(),
  liquidity_depth_usd: z.number().nonnegative(),
  /** A venue's depth measurement stopped at its limit: the depth is a lower bound. */
  liquidity_depth_capped: z.boolean(),
});
export type DislocationNumbers = z.infer<typeof DislocationNumbers>;

/**
 * What a revision also records of its evaluation, beside the published
 * numbers (stored, not published): the ladder sizes of the best net spread and
 * of the best profit, and the two legs' costs.
 */
export const RevisionNumbers = DislocationNumbers.extend({
  net_size_usd: z.number().nonnegative(),
  profit_size_usd: z.number().nonnegative(),
  fees_bps: z.number().nonnegative(),
  gas_usd: z.number().nonnegative(),
});
export type RevisionNumbers = z.infer<typeof RevisionNumbers>;

/**
 * The inputs behind a revision's numbers (stored, not published): its two
 * legs, the CEX and DEX quotes it was evaluated on (event ids and times, the
 * DEX block number: QuoteEvent.sequence), and its costs beside `fees_bps`
 * and `gas_usd`: each leg's fee (the CEX taker fee, paid on top of its
 * prices; the DEX pool fee tier, already inside its quoter prices) and the
 * slippage at the ladder size of the profit (raw_top - raw(size),
 * aggregate/spread-math.ts). Empty ids and zero costs on revisions written
 * before they were stored.
 */
export const RevisionLegs = z.object({
  cex_event_id: z.string(),
  cex_event_time_ms: z.number().int().nonnegative(),
  dex_event_id: z.string(),
  dex_event_time_ms: z.number().int().nonnegative(),
  dex_block_number: z.number().int().nonnegative().nullable(),
  cex_fee_bps: z.number().nonnegative(),
  dex_fee_bps: z.number().nonnegative(),
  slippage_bps: z.number(),
});
export type RevisionLegs = z.infer<typeof RevisionLegs>;

/** Maxima over an opportunity's revisions so far, and the ladder size of the peak profit. */
export const DislocationPeaks = z.object({
  peak_raw_spread_bps: z.number(),
  peak_net_spread_bps: z.number(),
  peak_profit_usd: z.number(),
  peak_size_usd: z.number().nonnegative(),
});
export type DislocationPeaks = z.infer<typeof DislocationPeaks>;

/**
 * A dislocation's state, published by the aggregator each time it opens,
 * changes, or closes. The key order is the wire order of the published JSON
 * (aggregate/quote-consumer.ts): the 1.0 fields, then those added in 1.1
 * (optional: absent in events before they were published).
 */
export const DislocationEvent = z.object({
  /** `<opportunity_id>:<revision>`: one event per state change. */
  event_id: z.string().min(8).max(160),
  opportunity_id: z.string().min(8).max(128),
  revision: z.number().int().nonnegative(),
  pair: Pair,
  buy_venue: Venue,
  sell_venue: Venue,
  ...DislocationNumbers.pick({
    buy_price: true,
    sell_price: true,
    raw_spread_bps: true,
    net_spread_bps: true,
    est_profit_usd: true,
    capacity_usd: true,
    liquidity_depth_usd: true,
  }).shape,
  status: DislocationStatus,
  opened_at_ms: z.number().int().positive(),
  updated_at_ms: z.number().int().positive(),
  duration_ms: z.number().int().nonnegative(),
  source: DataSource,
  ...DislocationNumbers.pick({ capacity_capped: true, liquidity_depth_capped: true }).partial().shape,
  ...DislocationPeaks.partial().shape,
});
export type DislocationEvent = z.infer<typeof DislocationEvent>;
