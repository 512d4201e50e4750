-- Market data written by the aggregate role (aggregate/raw-sinks.ts, aggregate/dislocation-consumer.ts,
-- aggregate/paper-execution.ts); formulas in docs/metrics.md.
-- Every table is a ReplacingMergeTree whose sorting key ends in the event's own id: a replayed event
-- collapses, and queries read through FINAL (or aggregates that duplicates cannot change).
-- Event times: `ts` (DateTime, second precision, for partitions and ranges) next to `*_ms` (UInt64, exact).

-- Raw QuoteEvents (md.quotes.v1): top of book and the executable ladder; absent ladder prices are NULL.
CREATE TABLE IF NOT EXISTS quotes (
  event_id String,
  pair String,
  venue String,
  venue_kind String,
  ts DateTime,
  ts_ms UInt64,
  ingest_time_ms UInt64,
  source String,
  bid Float64,
  ask Float64,
  bid_size Nullable(Float64),
  ask_size Nullable(Float64),
  ladder_size_usd Array(Float64),
  ladder_buy_price Array(Nullable(Float64)),
  ladder_sell_price Array(Nullable(Float64)),
  fee_bps Float64,
  fee_included UInt8,
  gas_usd Nullable(Float64),
  gas_price_gwei Nullable(Float64),
  sequence Nullable(UInt64)
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (pair, ts, venue, event_id);

-- Raw BookEvents (md.books.v1): top-N level-2 snapshots as parallel price/size arrays, best first.
CREATE TABLE IF NOT EXISTS book_snapshots (
  event_id String,
  pair String,
  venue String,
  ts DateTime,
  ts_ms UInt64,
  ingest_time_ms UInt64,
  source String,
  sequence Nullable(UInt64),
  best_bid Nullable(Float64),
  best_ask Nullable(Float64),
  bid_prices Array(Float64),
  bid_sizes Array(Float64),
  ask_prices Array(Float64),
  ask_sizes Array(Float64)
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (pair, ts, venue, event_id);

-- Raw LatencyEvents (md.latency.v1): one CEX REST or Base RPC round trip.
CREATE TABLE IF NOT EXISTS latency_samples (
  event_id String,
  venue String,
  venue_kind String,
  kind String,
  endpoint String,
  rtt_ms Float64,
  ok UInt8,
  ts DateTime,
  ts_ms UInt64,
  ingest_time_ms UInt64,
  source String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (kind, ts, venue, event_id);

-- One row per detector evaluation (a quote against a fresh counterpart), the better direction: feeds the candles.
CREATE TABLE IF NOT EXISTS spread_samples (
  sample_id String,
  pair String,
  seq UInt64,
  ts DateTime,
  ts_ms UInt64,
  buy_venue String,
  sell_venue String,
  raw_spread_bps Float64,
  net_spread_bps Float64,
  est_profit_usd Float64,
  capacity_usd Float64,
  liquidity_depth_usd Float64,
  quote_event_id String,
  counterpart_event_id String,
  source String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (pair, ts, sample_id);

-- One row per dislocation revision (event_id = opportunity_id:revision); the latest revision is the opportunity's state.
CREATE TABLE IF NOT EXISTS dislocations (
  event_id String,
  opportunity_id String,
  id UInt64,
  revision UInt32,
  pair String,
  buy_venue String,
  sell_venue String,
  buy_price Float64,
  sell_price Float64,
  raw_spread_bps Float64,
  net_spread_bps Float64,
  net_size_usd Float64,
  est_profit_usd Float64,
  profit_size_usd Float64,
  capacity_usd Float64,
  liquidity_depth_usd Float64,
  fees_bps Float64,
  gas_usd Float64,
  status String,
  opened_at DateTime,
  opened_at_ms UInt64,
  ts DateTime,
  updated_at_ms UInt64,
  duration_ms UInt64,
  closed_at_ms Nullable(UInt64),
  peak_capacity_usd Float64,
  peak_profit_usd Float64,
  peak_net_bps Float64,
  capacity_usd_ms Float64,
  trigger_event_id String,
  source String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(opened_at)
ORDER BY (pair, opened_at, opportunity_id, revision);

-- One paper execution per opportunity that became profitable (aggregate/paper-execution.ts).
CREATE TABLE IF NOT EXISTS paper_executions (
  opportunity_id String,
  id UInt64,
  revision UInt32,
  pair String,
  buy_venue String,
  sell_venue String,
  ts DateTime,
  decided_at_ms UInt64,
  size_usd Float64,
  quoted_buy_price Float64,
  quoted_sell_price Float64,
  quoted_net_bps Float64,
  buy_latency_ms Float64,
  sell_latency_ms Float64,
  buy_arrival_ms UInt64,
  sell_arrival_ms UInt64,
  buy_quote_event_id String,
  sell_quote_event_id String,
  fill_buy_price Nullable(Float64),
  fill_sell_price Nullable(Float64),
  realised_raw_bps Nullable(Float64),
  realised_net_bps Nullable(Float64),
  realised_profit_usd Nullable(Float64),
  outcome String,
  filled UInt8,
  source String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (pair, ts, opportunity_id);

-- Detector state checkpoint per (consumer group, pair); the highest version wins (merges keep one row per key).
CREATE TABLE IF NOT EXISTS detector_state (
  scope String,
  pair String,
  version UInt64,
  saved_at_ms UInt64,
  state String
) ENGINE = ReplacingMergeTree(version)
ORDER BY (scope, pair);
