-- Issue 30: views for analysts (docs/querying-the-store.md), named as the telemetry routes serve their fields
-- (formulas in docs/metrics.md); the same views, columns and meanings as sql/clickhouse/004_analyst_views.sql.
-- DuckDB tables are keyed by the event's id (a replay is not stored twice), so no FINAL is needed; the views
-- aggregate exactly as the ClickHouse ones do. Values are full doubles (the routes round them when serving).
-- Percentiles by nearest rank, as ClickHouse's quantileExact (quantile_disc uses another rank rule).

-- One 15-minute candle per pair and slice (GET /api/v1/crypto/spread-candles, interval 15m; section 3).
CREATE OR REPLACE VIEW spread_candles_15m AS
SELECT
  c.pair,
  c.slice_start_ms,
  epoch_ms(c.slice_start_ms) AS slice_start,
  c.open_raw_spread_bps,
  c.high_raw_spread_bps,
  c.low_raw_spread_bps,
  c.close_raw_spread_bps,
  c.avg_net_spread_bps,
  c.max_net_spread_bps,
  c.volume_depth_usd,
  c.volume_depth_capped,
  coalesce(d.dislocation_count, 0) AS dislocation_count,
  c.sample_count,
  c.source
FROM (
  SELECT
    pair,
    ts_ms // 900000 * 900000 AS slice_start_ms,
    arg_min(raw_spread_bps, seq) AS open_raw_spread_bps,
    max(raw_spread_bps) AS high_raw_spread_bps,
    min(raw_spread_bps) AS low_raw_spread_bps,
    arg_max(raw_spread_bps, seq) AS close_raw_spread_bps,
    avg(net_spread_bps) AS avg_net_spread_bps,
    max(net_spread_bps) AS max_net_spread_bps,
    avg(liquidity_depth_usd) AS volume_depth_usd,
    max(liquidity_depth_capped) AS volume_depth_capped,
    count(*) AS sample_count,
    CASE WHEN min(source) = max(source) THEN min(source) ELSE 'live+simulated' END AS source
  FROM spread_samples
  GROUP BY pair, slice_start_ms
) c LEFT JOIN (
  SELECT pair, opened_at_ms // 900000 * 900000 AS slice_start_ms, count(DISTINCT opportunity_id) AS dislocation_count
  FROM dislocations
  GROUP BY pair, slice_start_ms
) d ON d.pair = c.pair AND d.slice_start_ms = c.slice_start_ms;

-- One row per opportunity at its latest revision, with its peaks (an item of GET /api/v1/crypto/dislocations;
-- section 2). The opening time and the venues are the same in every revision: they are grouping keys.
CREATE OR REPLACE VIEW dislocation_opportunities AS
SELECT
  arg_max(id, revision) AS id,
  opportunity_id,
  pair,
  opened_at AS timestamp,
  opened_at_ms,
  opened_at_ms // 900000 * 900000 AS slice_start_ms,
  buy_venue,
  sell_venue,
  arg_max(buy_price, revision) AS buy_price,
  arg_max(sell_price, revision) AS sell_price,
  arg_max(raw_spread_bps, revision) AS raw_spread_bps,
  arg_max(net_spread_bps, revision) AS net_spread_bps,
  arg_max(est_profit_usd, revision) AS est_profit_usd,
  arg_max(liquidity_depth_usd, revision) AS liquidity_depth_usd,
  arg_max(liquidity_depth_capped, revision) AS liquidity_depth_capped,
  arg_max(capacity_usd, revision) AS capacity_usd,
  arg_max(capacity_capped, revision) AS capacity_capped,
  arg_max(status, revision) AS status,
  arg_max(duration_ms, revision) AS duration_ms,
  arg_max(peak_raw_bps, revision) AS peak_raw_spread_bps,
  arg_max(peak_net_bps, revision) AS peak_net_spread_bps,
  arg_max(peak_profit_usd, revision) AS peak_profit_usd,
  arg_max(peak_size_usd, revision) AS peak_size_usd,
  arg_max(peak_capacity_usd, revision) AS peak_capacity_usd,
  max(revision) + 1 AS revision_count,
  epoch_ms(max(updated_at_ms) // 1000 * 1000) AS updated_at,
  max(updated_at_ms) AS updated_at_ms,
  arg_max(source, revision) AS source
FROM dislocations
GROUP BY opportunity_id, pair, opened_at, opened_at_ms, buy_venue, sell_venue;

-- Every revision of every opportunity, once (the `revisions` of GET /api/v1/crypto/dislocations?revisions=true).
CREATE OR REPLACE VIEW dislocation_revisions AS
SELECT
  id,
  opportunity_id,
  pair,
  opened_at_ms,
  revision,
  status,
  ts AS updated_at,
  updated_at_ms,
  buy_venue,
  sell_venue,
  buy_price,
  sell_price,
  raw_spread_bps,
  net_spread_bps,
  est_profit_usd,
  profit_size_usd,
  capacity_usd,
  capacity_capped,
  liquidity_depth_usd,
  liquidity_depth_capped,
  source
FROM dislocations;

-- Round-trip statistics of the successful latency samples per 15-minute slice, every venue, with the fill rate of
-- the paper executions decided in it (GET /api/v1/crypto/execution-latency without `venue`; section 4).
CREATE OR REPLACE VIEW execution_latency_15m AS
SELECT
  l.slice_start_ms,
  epoch_ms(l.slice_start_ms) AS slice_start,
  l.sample_count,
  l.p50_latency_ms,
  l.p90_latency_ms,
  l.p99_latency_ms,
  l.min_latency_ms,
  l.max_latency_ms,
  l.avg_latency_ms,
  CASE WHEN e.executions > 0 THEN 100.0 * e.filled_executions / e.executions ELSE NULL END AS fill_rate_pct,
  l.cex_rest_ms,
  l.dex_base_ms,
  l.source
FROM (
  SELECT
    ts_ms // 900000 * 900000 AS slice_start_ms,
    count(*) AS sample_count,
    list_sort(list(rtt_ms))[CAST(floor(0.5 * count(*)) AS BIGINT) + 1] AS p50_latency_ms,
    list_sort(list(rtt_ms))[CAST(floor(0.9 * count(*)) AS BIGINT) + 1] AS p90_latency_ms,
    list_sort(list(rtt_ms))[CAST(floor(0.99 * count(*)) AS BIGINT) + 1] AS p99_latency_ms,
    min(rtt_ms) AS min_latency_ms,
    max(rtt_ms) AS max_latency_ms,
    avg(rtt_ms) AS avg_latency_ms,
    avg(CASE WHEN kind = 'cex_rest' THEN rtt_ms ELSE NULL END) AS cex_rest_ms,
    avg(CASE WHEN kind = 'dex_rpc' THEN rtt_ms ELSE NULL END) AS dex_base_ms,
    CASE WHEN min(source) = max(source) THEN min(source) ELSE 'live+simulated' END AS source
  FROM latency_samples
  WHERE ok = 1
  GROUP BY slice_start_ms
) l LEFT JOIN (
  SELECT decided_at_ms // 900000 * 900000 AS slice_start_ms, count(*) AS executions, sum(filled) AS filled_executions
  FROM paper_executions
  WHERE outcome IN ('filled', 'missed')
  GROUP BY slice_start_ms
) e ON e.slice_start_ms = l.slice_start_ms;

-- Shadow capacity per pair and 15-minute slice: the opportunities opened in it at their latest revision, with their
-- paper executions (GET /api/v1/crypto/shadow-capacity with `pair`, or one entry of its `pairs`; section 6).
-- The nested served fields are flattened: capital_required_usd.cex -> capital_required_cex_usd,
-- capital_split_usd.base_dex.quote_usd -> capital_split_base_dex_quote_usd, and so on.
CREATE OR REPLACE VIEW shadow_capacity_15m AS
SELECT
  pair,
  slice_start_ms,
  epoch_ms(slice_start_ms) AS slice_start,
  count(*) AS opportunities,
  sum(CASE WHEN peak_cap > 0 THEN 1 ELSE 0 END) AS actionable_opportunities,
  sum(peak_cap) AS available_volume_usd,
  sum(captured) AS captured_volume_usd,
  sum(peak_cap - captured) AS uncaptured_volume_usd,
  CASE WHEN sum(peak_cap) > 0 THEN 100 * sum(captured) / sum(peak_cap) ELSE NULL END AS capture_rate_pct,
  sum(greatest(0, peak_profit - realised)) AS est_uncaptured_profit_usd,
  CASE WHEN sum(CASE WHEN peak_cap > 0 THEN 1 ELSE 0 END) > 0
    THEN sum(peak_cap) / sum(CASE WHEN peak_cap > 0 THEN 1 ELSE 0 END) ELSE 0 END AS avg_capacity_usd,
  max(peak_cap) AS max_capacity_usd,
  CASE WHEN max(peak_cap) > 0 THEN arg_max(peak_cap_capped, (peak_cap, peak_cap_capped)) ELSE 0 END AS max_capacity_capped,
  sum(cap_ms) / 900000 AS time_weighted_capacity_usd,
  sum(CASE WHEN ends_with(buy, '_base') THEN 0 ELSE peak_cap - captured END)
    + sum(CASE WHEN ends_with(sell, '_base') THEN 0 ELSE peak_cap - captured END) AS capital_required_cex_usd,
  sum(CASE WHEN ends_with(buy, '_base') THEN peak_cap - captured ELSE 0 END)
    + sum(CASE WHEN ends_with(sell, '_base') THEN peak_cap - captured ELSE 0 END) AS capital_required_base_dex_usd,
  sum(CASE WHEN ends_with(buy, '_base') THEN 0 ELSE peak_cap - captured END) AS capital_split_cex_quote_usd,
  sum(CASE WHEN ends_with(sell, '_base') THEN 0 ELSE peak_cap - captured END) AS capital_split_cex_base_usd,
  sum(CASE WHEN ends_with(buy, '_base') THEN peak_cap - captured ELSE 0 END) AS capital_split_base_dex_quote_usd,
  sum(CASE WHEN ends_with(sell, '_base') THEN peak_cap - captured ELSE 0 END) AS capital_split_base_dex_base_usd,
  CASE WHEN min(src) = max(src) THEN min(src) ELSE 'live+simulated' END AS source
FROM (
  SELECT
    o.pair,
    o.opened_at_ms // 900000 * 900000 AS slice_start_ms,
    o.buy,
    o.sell,
    o.peak_cap,
    o.peak_cap_capped,
    o.peak_profit,
    o.cap_ms,
    o.src,
    CASE WHEN p.outcome = 'filled' THEN least(p.size_usd, o.peak_cap) ELSE 0 END AS captured,
    CASE WHEN p.outcome = 'filled' THEN greatest(0, coalesce(p.realised_profit_usd, 0)) ELSE 0 END AS realised
  FROM (
    SELECT
      opportunity_id,
      pair,
      opened_at_ms,
      arg_max(buy_venue, revision) AS buy,
      arg_max(sell_venue, revision) AS sell,
      arg_max(peak_capacity_usd, revision) AS peak_cap,
      arg_max(peak_capacity_capped, revision) AS peak_cap_capped,
      arg_max(peak_profit_usd, revision) AS peak_profit,
      arg_max(capacity_usd_ms, revision) AS cap_ms,
      arg_max(source, revision) AS src
    FROM dislocations
    GROUP BY opportunity_id, pair, opened_at_ms
  ) o LEFT JOIN paper_executions p ON p.opportunity_id = o.opportunity_id
)
GROUP BY pair, slice_start_ms;
