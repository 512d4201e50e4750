/**
 * The contract of every topic of the product: its value schema (the zod
 * schema producers and consumers use), its schema version, what its key is,
 * who writes and who reads it. docs/events/<topic>.json (JSON Schema) and
 * the topic table of docs/events.md are generated from here
 * (`npm run events:docs`); every message published through the product's bus
 * carries its topic's version in the `schema_version` header
 * (core/bus/schema-version-header.ts).
 *
 * Versions are `<major>.<minor>`: the major is the topic's own version (the
 * `.v1` of `md.quotes.v1`); the minor grows with every backward-compatible
 * change (a new optional field, a widened range). A breaking change is a new
 * topic (`.v2`), published next to the old one while consumers move
 * (docs/events.md, "Compatibility").
 */
import type { z } from 'zod';
import { HeartbeatEvent } from './heartbeat.js';
import { BookEvent, DislocationEvent, LatencyEvent, QuoteEvent } from './market.js';
import { TOPICS, type TopicName } from '../topics.js';

/** Header carrying the schema version of the value, on every message the product publishes. */
export const SCHEMA_VERSION_HEADER = 'schema_version';

export interface TopicContract {
  topic: TopicName;
  /** Name of the zod schema (core/events/*). */
  schemaName: string;
  schema: z.ZodType;
  schemaVersion: string;
  /** What the message key is (it picks the partition: one key's messages stay in order). */
  key: string;
  description: string;
  producers: string;
  consumers: string;
  /** Descriptions of the value's fields (JSON Schema `description`); nested ones as `ladder[].size_usd`. */
  fields: Record<string, string>;
}

const envelopeFields = {
  event_id:
    'Deterministic id of the event (same input, same id): consumers deduplicate on it; a replay never counts twice.',
  pair: '`<BASE>/USD` (USDC is the USD leg), e.g. `ETH/USD`, `cbBTC/USD`.',
  venue:
    'Venue id: the CEX id from ccxt (e.g. `coinbase`) or `<protocol>_base` for Base pools (e.g. `uniswap_v3_base`).',
  event_time_ms: 'Time at the venue (ms since the epoch): the book update, the block, the probe.',
  ingest_time_ms: 'Time the ingestor read it (ms since the epoch).',
  source:
    '`live` (real venues) or `simulated` (the seeded market simulator); every response built from the event says which.',
};

export const TOPIC_CONTRACTS: Record<TopicName, TopicContract> = {
  [TOPICS.quotes]: {
    topic: TOPICS.quotes,
    schemaName: 'QuoteEvent',
    schema: QuoteEvent,
    schemaVersion: '1.1',
    key: 'pair (`ETH/USD`)',
    description:
      'Top of book plus executable buy/sell prices for each ladder size (DEX_LADDER_USD), one schema for CEX and DEX quotes.',
    producers: 'ingest (cex, dex, simulator)',
    consumers: 'aggregate.quotes (quotes table, dislocation detector)',
    fields: {
      ...envelopeFields,
      venue_kind: '`cex` or `dex`.',
      bid: 'Best bid (USD per base unit).',
      ask: 'Best ask (USD per base unit).',
      bid_size: 'Size at the best bid in base units (CEX); null for pools.',
      ask_size: 'Size at the best ask in base units (CEX); null for pools.',
      ladder: 'Executable prices per order size, smallest first.',
      'ladder[].size_usd': 'Order size in USD notional.',
      'ladder[].buy_price':
        'Average price paid per base unit to buy `size_usd` worth (CEX: VWAP through the book; DEX: quoter amounts); null when not fillable.',
      'ladder[].sell_price': 'Average price received per base unit to sell `size_usd` worth; null when not fillable.',
      fee_bps: 'CEX taker fee or DEX pool fee, in bps.',
      fee_included: 'True when the ladder prices already include the fee (DEX quoter amounts).',
      gas_usd: 'DEX only: gas cost of one swap in USD; null for the CEX.',
      gas_price_gwei: 'DEX only: the gas price the swap cost came from; null for the CEX.',
      sequence: 'CEX book sequence or DEX block number, when known.',
      depth:
        'Measured depth (since 1.1; absent when not measured, and then the ladder\'s largest size is only a lower bound): per side, the largest USD notional whose average execution price (fee excluded) stays within `impact_bps` of the mid (docs/metrics.md, "Depth").',
      'depth.impact_bps': 'The price-impact bound of the measurement, in bps.',
      'depth.buy_usd': 'Depth on the buy side (a taker buying), USD notional.',
      'depth.sell_usd': 'Depth on the sell side (a taker selling), USD notional.',
      'depth.buy_capped':
        'True when the buy-side search stopped at its limit (DEX: the documented hard maximum; CEX: the end of the top-N book): the depth is at least the value.',
      'depth.sell_capped': 'Same for the sell side.',
      'depth.buy_points':
        "Executable buy prices measured beside the ladder, `[size_usd, price]`, ascending by size, on the ladder's fee basis.",
      'depth.sell_points': 'Executable sell prices measured beside the ladder, same form.',
    },
  },
  [TOPICS.books]: {
    topic: TOPICS.books,
    schemaName: 'BookEvent',
    schema: BookEvent,
    schemaVersion: '1.0',
    key: 'pair (`ETH/USD`)',
    description: 'Top-N level-2 snapshot of the CEX book (CEX_BOOK_DEPTH levels per side).',
    producers: 'ingest (cex, simulator)',
    consumers: 'aggregate.raw (book_snapshots table: impact-simulation, paper executions)',
    fields: {
      ...envelopeFields,
      bids: '`[price, size in base units]` levels, best (highest) first.',
      asks: '`[price, size in base units]` levels, best (lowest) first.',
      sequence: 'CEX book sequence, when known.',
    },
  },
  [TOPICS.latency]: {
    topic: TOPICS.latency,
    schemaName: 'LatencyEvent',
    schema: LatencyEvent,
    schemaVersion: '1.0',
    key: 'venue (`coinbase`, `base_rpc`)',
    description: 'One measured round trip: a CEX public REST call or a Base RPC call.',
    producers: 'ingest (cex probe, dex, simulator)',
    consumers: 'aggregate.raw (latency_samples table: execution-latency)',
    fields: {
      event_id: envelopeFields.event_id,
      venue: envelopeFields.venue,
      venue_kind: '`cex` or `dex`.',
      kind: '`cex_rest` (CEX REST time endpoint) or `dex_rpc` (Base JSON-RPC call).',
      endpoint: 'What was timed (the endpoint or RPC method).',
      rtt_ms: 'Round-trip time in ms.',
      ok: 'False when the call failed (rtt_ms is then the time to the failure).',
      event_time_ms: 'Time of the measurement (ms since the epoch).',
      ingest_time_ms: envelopeFields.ingest_time_ms,
      source: envelopeFields.source,
    },
  },
  [TOPICS.dislocations]: {
    topic: TOPICS.dislocations,
    schemaName: 'DislocationEvent',
    schema: DislocationEvent,
    schemaVersion: '1.1',
    key: 'pair (`ETH/USD`)',
    description:
      'One revision of a CEX/DEX dislocation: when it opens (net spread after fees and gas above DISLOCATION_MIN_NET_BPS at some ladder size), when its numbers move (1 bp / 5 %, or after 5 s), when it closes (docs/metrics.md section 2).',
    producers: 'aggregate.quotes (the detector)',
    consumers: 'downstream consumers (the dislocations table is written by the same batch)',
    fields: {
      event_id: '`<opportunity_id>:<revision>`: one event per state change.',
      opportunity_id:
        'Deterministic id of the opportunity: a hash of pair, buy venue, sell venue and the quote that opened it.',
      revision: '0 when it opens, then +1 per published change.',
      pair: envelopeFields.pair,
      buy_venue: 'Venue to buy on (the cheaper one).',
      sell_venue: 'Venue to sell on.',
      buy_price: "Buy venue's ask, top of book (USD per base unit; docs/metrics.md section 1).",
      sell_price: "Sell venue's bid, top of book.",
      raw_spread_bps: '`(sell bid - buy ask) / buy ask`, top of book, before costs, in bps.',
      net_spread_bps: 'Best spread over the ladder sizes after slippage, fees and gas, in bps.',
      est_profit_usd: 'Best profit over the ladder sizes after costs, in USD.',
      capacity_usd:
        'Size at which the net spread falls to zero on the measured prices, at most the depth (USD notional; docs/metrics.md section 1).',
      liquidity_depth_usd:
        "Smaller of the two measured depths the direction trades (buy venue's buy side, sell venue's sell side), in USD (docs/metrics.md section 1b); before 1.1, the largest ladder size fillable on both venues.",
      status:
        "`OPPORTUNITY` (open or revised), `CLOSED` (spread gone) or `EXPIRED` (a venue's quote too old to compare).",
      opened_at_ms: 'Event time it opened (ms since the epoch).',
      updated_at_ms: 'Event time of this revision.',
      duration_ms: '`updated_at_ms - opened_at_ms`.',
      source: envelopeFields.source,
      capacity_capped:
        'Since 1.1: true when the capacity reached the measured depth with the net spread still positive, so `capacity_usd` is a lower bound.',
      liquidity_depth_capped:
        "Since 1.1: true when a venue's depth measurement stopped at its limit, so `liquidity_depth_usd` is a lower bound.",
      peak_raw_spread_bps: 'Since 1.1: highest raw spread over the revisions so far, in bps.',
      peak_net_spread_bps: 'Since 1.1: highest net spread over the revisions so far, in bps.',
      peak_profit_usd: 'Since 1.1: highest estimated profit over the revisions so far, in USD.',
      peak_size_usd: 'Since 1.1: ladder size of the peak profit, USD notional.',
    },
  },
  [TOPICS.heartbeat]: {
    topic: TOPICS.heartbeat,
    schemaName: 'HeartbeatEvent',
    schema: HeartbeatEvent,
    schemaVersion: '1.0',
    key: 'source (the publishing ingest process, `host:pid`)',
    description:
      'Pipeline canary: each ingest process publishes one every HEARTBEAT_INTERVAL_MS; /health reads its age and event-to-store latency back from the store.',
    producers: 'ingest (every process)',
    consumers: 'aggregate.heartbeats (pipeline_heartbeats table: /health `pipeline`)',
    fields: {
      event_id: '`<source>:<seq>`.',
      source: 'The publishing process.',
      seq: 'Sequence number within the process, from 0.',
      emitted_at_ms: 'Publish time (ms since the epoch).',
    },
  },
};

/** The schema version of a topic's values (plain topic name), or undefined for a topic without a contract. */
export function schemaVersionOf(topic: string): string | undefined {
  return (TOPIC_CONTRACTS as Record<string, TopicContract | undefined>)[topic]?.schemaVersion;
}
