-- Market data written by the aggregate role (aggregate/raw-sinks.ts, aggregate/dislocation-consumer.ts,
-- aggregate/paper-execution.ts); formulas in docs/metrics.md.
-- Every table has the event's own id as PRIMARY KEY: the store inserts with INSERT OR IGNORE, so a replayed
-- event is a no-op. detector_state is the exception: it is upserted (core/store/tables/detector-state.ts).
-- Event times: `ts` (TIMESTAMP, second precision, for ranges) next to `*_ms` (BIGINT, exact).

-- Raw QuoteEvents (md.quotes.v1): top of book and the executable ladder; absent ladder prices are NULL.
CREATE TABLE IF NOT EXISTS quotes (
  event_id VARCHAR PRIMARY KEY,
  pair VARCHAR,
  venue VARCHAR,
  venue_kind VARCHAR,
  ts TIMESTAMP,
  ts_ms BIGINT,
  ingest_time_ms BIGINT,
  source VARCHAR,
  bid DOUBLE,
  ask DOUBLE,
  bid_size DOUBLE,
  ask_size DOUBLE,
  ladder_size_usd DOUBLE[],
  ladder_buy_price DOUBLE[],
  ladder_sell_price DOUBLE[],
  fee_bps DOUBLE,
  fee_included UTINYINT,
  gas_usd DOUBLE,
  gas_price_gwei DOUBLE,
  sequence BIGINT
);

-- Raw BookEvents (md.books.v1): top-N level-2 snapshots as parallel price/size arrays, best first.
CREATE TABLE IF NOT EXISTS book_snapshots (
  event_id VARCHAR PRIMARY KEY,
  pair VARCHAR,
  venue VARCHAR,
  ts TIMESTAMP,
  ts_ms BIGINT,
  ingest_time_ms BIGINT,
  source VARCHAR,
  sequence BIGINT,
  best_bid DOUBLE,
  best_ask DOUBLE,
  bid_prices DOUBLE[],
  bid_sizes DOUBLE[],
  ask_prices DOUBLE[],
  ask_sizes DOUBLE[]
);

-- Raw LatencyEvents (md.latency.v1): one CEX REST or Base RPC round trip.
CREATE TABLE IF NOT EXISTS latency_samples (
  event_id VARCHAR PRIMARY KEY,
  venue VARCHAR,
  venue_kind VARCHAR,
  kind VARCHAR,
  endpoint VARCHAR,
  rtt_ms DOUBLE,
  ok UTINYINT,
  ts TIMESTAMP,
  ts_ms BIGINT,
  ingest_time_ms BIGINT,
  source VARCHAR
);

-- One row per detector evaluation (a quote against a fresh counterpart), the better direction: feeds the candles.
CREATE TABLE IF NOT EXISTS spread_samples (
  sample_id VARCHAR PRIMARY KEY,
  pair VARCHAR,
  seq BIGINT,
  ts TIMESTAMP,
  ts_ms BIGINT,
  buy_venue VARCHAR,
  sell_venue VARCHAR,
  raw_spread_bps DOUBLE,
  net_spread_bps DOUBLE,
  est_profit_usd DOUBLE,
  capacity_usd DOUBLE,
  liquidity_depth_usd DOUBLE,
  quote_event_id VARCHAR,
  counterpart_event_id VARCHAR,
  source VARCHAR
);

-- One row per dislocation revision (event_id = opportunity_id:revision); the latest revision is the opportunity's state.
CREATE TABLE IF NOT EXISTS dislocations (
  event_id VARCHAR PRIMARY KEY,
  opportunity_id VARCHAR,
  id BIGINT,
  revision INTEGER,
  pair VARCHAR,
  buy_venue VARCHAR,
  sell_venue VARCHAR,
  buy_price DOUBLE,
  sell_price DOUBLE,
  raw_spread_bps DOUBLE,
  net_spread_bps DOUBLE,
  net_size_usd DOUBLE,
  est_profit_usd DOUBLE,
  profit_size_usd DOUBLE,
  capacity_usd DOUBLE,
  liquidity_depth_usd DOUBLE,
  fees_bps DOUBLE,
  gas_usd DOUBLE,
  status VARCHAR,
  opened_at TIMESTAMP,
  opened_at_ms BIGINT,
  ts TIMESTAMP,
  updated_at_ms BIGINT,
  duration_ms BIGINT,
  closed_at_ms BIGINT,
  peak_capacity_usd DOUBLE,
  peak_profit_usd DOUBLE,
  peak_net_bps DOUBLE,
  capacity_usd_ms DOUBLE,
  trigger_event_id VARCHAR,
  source VARCHAR
);

-- One paper execution per opportunity that became profitable (aggregate/paper-execution.ts).
CREATE TABLE IF NOT EXISTS paper_executions (
  opportunity_id VARCHAR PRIMARY KEY,
  id BIGINT,
  revision INTEGER,
  pair VARCHAR,
  buy_venue VARCHAR,
  sell_venue VARCHAR,
  ts TIMESTAMP,
  decided_at_ms BIGINT,
  size_usd DOUBLE,
  quoted_buy_price DOUBLE,
  quoted_sell_price DOUBLE,
  quoted_net_bps DOUBLE,
  buy_latency_ms DOUBLE,
  sell_latency_ms DOUBLE,
  buy_arrival_ms BIGINT,
  sell_arrival_ms BIGINT,
  buy_quote_event_id VARCHAR,
  sell_quote_event_id VARCHAR,
  fill_buy_price DOUBLE,
  fill_sell_price DOUBLE,
  realised_raw_bps DOUBLE,
  realised_net_bps DOUBLE,
  realised_profit_usd DOUBLE,
  outcome VARCHAR,
  filled UTINYINT,
  source VARCHAR
);

-- Detector state checkpoint per (consumer group, pair): one row per key, replaced by a higher version only.
CREATE TABLE IF NOT EXISTS detector_state (
  scope VARCHAR,
  pair VARCHAR,
  version BIGINT,
  saved_at_ms BIGINT,
  state VARCHAR NOT NULL,
  PRIMARY KEY (scope, pair)
);
