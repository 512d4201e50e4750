-- Issue 30: views for analysts (docs/querying-the-store.md), named as the telemetry routes serve their fields
-- (formulas in docs/metrics.md). Values are full doubles (the routes round them when serving).
-- Duplicates: a replayed event is a second identical row until a ReplacingMergeTree merge. Every view collapses it
-- by grouping on the table's sorting key (the event's identity; any() of the other columns, identical in every copy)
-- or with aggregates a duplicate cannot change (argMax by revision, max, uniqExact), so a plain count() over a view
-- is right before merges. Not FINAL: ClickHouse 18.16 pushes a filter on a view's grouping columns (pair, opening
-- time) down into the table read (enable_optimize_predicate_expression, set in the analyst's profile), never into
-- a subquery that reads with FINAL, and it does not count rows read through FINAL against max_rows_to_read or the
-- read_rows quota.
-- ClickHouse 18.16: no CREATE OR REPLACE VIEW (IF NOT EXISTS makes a re-run safe), one JOIN per SELECT, and an
-- alias must not reuse a column name of its own SELECT (aliases are substituted everywhere): aggregates are
-- named latest_*/sample_*/... inside and renamed outside.

-- One 15-minute candle per pair and slice (GET /api/v1/crypto/spread-candles, interval 15m; section 3).
CREATE VIEW IF NOT EXISTS spread_candles_15m AS
SELECT
  pair,
  slice_start_ms,
  toDateTime(intDiv(slice_start_ms, 1000)) AS slice_start,
  open_raw_spread_bps,
  high_raw_spread_bps,
  low_raw_spread_bps,
  close_raw_spread_bps,
  avg_net_spread_bps,
  max_net_spread_bps,
  volume_depth_usd,
  volume_depth_capped,
  dislocation_count,
  sample_count,
  sources AS source
FROM (
  SELECT
    pair,
    intDiv(ts_ms, 900000) * 900000 AS slice_start_ms,
    argMin(sample_raw_bps, sample_seq) AS open_raw_spread_bps,
    max(sample_raw_bps) AS high_raw_spread_bps,
    min(sample_raw_bps) AS low_raw_spread_bps,
    argMax(sample_raw_bps, sample_seq) AS close_raw_spread_bps,
    avg(sample_net_bps) AS avg_net_spread_bps,
    max(sample_net_bps) AS max_net_spread_bps,
    avg(sample_depth_usd) AS volume_depth_usd,
    max(sample_depth_capped) AS volume_depth_capped,
    count() AS sample_count,
    if(min(sample_source) = max(sample_source), min(sample_source), 'live+simulated') AS sources
  FROM (
    SELECT
      pair,
      ts,
      ts_ms,
      sample_id,
      any(seq) AS sample_seq,
      any(raw_spread_bps) AS sample_raw_bps,
      any(net_spread_bps) AS sample_net_bps,
      any(liquidity_depth_usd) AS sample_depth_usd,
      any(liquidity_depth_capped) AS sample_depth_capped,
      any(source) AS sample_source
    FROM spread_samples
    GROUP BY pair, ts, ts_ms, sample_id
  )
  GROUP BY pair, slice_start_ms
) ANY LEFT JOIN (
  SELECT pair, intDiv(opened_at_ms, 900000) * 900000 AS slice_start_ms, uniqExact(opportunity_id) AS dislocation_count
  FROM dislocations
  GROUP BY pair, slice_start_ms
) USING (pair, slice_start_ms);

-- One row per opportunity at its latest revision, with its peaks (an item of GET /api/v1/crypto/dislocations;
-- section 2). The opening time and the venues are the same in every revision: they are grouping keys, so a
-- filter on pair, opened_at or opened_at_ms reaches the table's index.
CREATE VIEW IF NOT EXISTS dislocation_opportunities AS
SELECT
  latest_id AS id,
  opportunity_id,
  pair,
  opened_at AS timestamp,
  opened_at_ms,
  intDiv(opened_at_ms, 900000) * 900000 AS slice_start_ms,
  buy_venue,
  sell_venue,
  latest_buy_price AS buy_price,
  latest_sell_price AS sell_price,
  latest_raw_spread_bps AS raw_spread_bps,
  latest_net_spread_bps AS net_spread_bps,
  latest_est_profit_usd AS est_profit_usd,
  latest_liquidity_depth_usd AS liquidity_depth_usd,
  latest_liquidity_depth_capped AS liquidity_depth_capped,
  latest_capacity_usd AS capacity_usd,
  latest_capacity_capped AS capacity_capped,
  latest_status AS status,
  latest_duration_ms AS duration_ms,
  latest_peak_raw_bps AS peak_raw_spread_bps,
  latest_peak_net_bps AS peak_net_spread_bps,
  latest_peak_profit_usd AS peak_profit_usd,
  latest_peak_size_usd AS peak_size_usd,
  latest_peak_capacity_usd AS peak_capacity_usd,
  latest_revision + 1 AS revision_count,
  toDateTime(intDiv(latest_updated_at_ms, 1000)) AS updated_at,
  latest_updated_at_ms AS updated_at_ms,
  latest_source AS source
FROM (
  SELECT
    opportunity_id,
    pair,
    opened_at,
    opened_at_ms,
    buy_venue,
    sell_venue,
    argMax(id, revision) AS latest_id,
    argMax(buy_price, revision) AS latest_buy_price,
    argMax(sell_price, revision) AS latest_sell_price,
    argMax(raw_spread_bps, revision) AS latest_raw_spread_bps,
    argMax(net_spread_bps, revision) AS latest_net_spread_bps,
    argMax(est_profit_usd, revision) AS latest_est_profit_usd,
    argMax(liquidity_depth_usd, revision) AS latest_liquidity_depth_usd,
    argMax(liquidity_depth_capped, revision) AS latest_liquidity_depth_capped,
    argMax(capacity_usd, revision) AS latest_capacity_usd,
    argMax(capacity_capped, revision) AS latest_capacity_capped,
    argMax(status, revision) AS latest_status,
    argMax(duration_ms, revision) AS latest_duration_ms,
    argMax(peak_raw_bps, revision) AS latest_peak_raw_bps,
    argMax(peak_net_bps, revision) AS latest_peak_net_bps,
    argMax(peak_profit_usd, revision) AS latest_peak_profit_usd,
    argMax(peak_size_usd, revision) AS latest_peak_size_usd,
    argMax(peak_capacity_usd, revision) AS latest_peak_capacity_usd,
    max(revision) AS latest_revision,
    max(updated_at_ms) AS latest_updated_at_ms,
    argMax(source, revision) AS latest_source
  FROM dislocations
  GROUP BY opportunity_id, pair, opened_at, opened_at_ms, buy_venue, sell_venue
);

-- Every revision of every opportunity, once (the `revisions` of GET /api/v1/crypto/dislocations?revisions=true);
-- grouped on the table's sorting key (pair, opened_at, opportunity_id, revision).
CREATE VIEW IF NOT EXISTS dislocation_revisions AS
SELECT
  revision_id AS id,
  opportunity_id,
  pair,
  opened_at_ms,
  revision,
  revision_status AS status,
  revision_ts AS updated_at,
  revision_updated_at_ms AS updated_at_ms,
  buy_venue,
  sell_venue,
  revision_buy_price AS buy_price,
  revision_sell_price AS sell_price,
  revision_raw_spread_bps AS raw_spread_bps,
  revision_net_spread_bps AS net_spread_bps,
  revision_est_profit_usd AS est_profit_usd,
  revision_profit_size_usd AS profit_size_usd,
  revision_capacity_usd AS capacity_usd,
  revision_capacity_capped AS capacity_capped,
  revision_liquidity_depth_usd AS liquidity_depth_usd,
  revision_liquidity_depth_capped AS liquidity_depth_capped,
  revision_source AS source
FROM (
  SELECT
    pair,
    opened_at,
    opened_at_ms,
    opportunity_id,
    revision,
    buy_venue,
    sell_venue,
    any(id) AS revision_id,
    any(status) AS revision_status,
    any(ts) AS revision_ts,
    any(updated_at_ms) AS revision_updated_at_ms,
    any(buy_price) AS revision_buy_price,
    any(sell_price) AS revision_sell_price,
    any(raw_spread_bps) AS revision_raw_spread_bps,
    any(net_spread_bps) AS revision_net_spread_bps,
    any(est_profit_usd) AS revision_est_profit_usd,
    any(profit_size_usd) AS revision_profit_size_usd,
    any(capacity_usd) AS revision_capacity_usd,
    any(capacity_capped) AS revision_capacity_capped,
    any(liquidity_depth_usd) AS revision_liquidity_depth_usd,
    any(liquidity_depth_capped) AS revision_liquidity_depth_capped,
    any(source) AS revision_source
  FROM dislocations
  GROUP BY pair, opened_at, opened_at_ms, opportunity_id, revision, buy_venue, sell_venue
);

-- Round-trip statistics of the successful latency samples per 15-minute slice, every venue, with the fill rate of
-- the paper executions decided in it (GET /api/v1/crypto/execution-latency without `venue`; section 4).
-- Percentiles by nearest rank (quantileExact). Samples grouped on the table's sorting key (kind, ts, venue, event_id).
CREATE VIEW IF NOT EXISTS execution_latency_15m AS
SELECT
  slice_start_ms,
  toDateTime(intDiv(slice_start_ms, 1000)) AS slice_start,
  sample_count,
  p50_latency_ms,
  p90_latency_ms,
  p99_latency_ms,
  min_latency_ms,
  max_latency_ms,
  avg_latency_ms,
  if(executions > 0, 100 * filled_executions / executions, NULL) AS fill_rate_pct,
  cex_rest_ms,
  dex_base_ms,
  sources AS source
FROM (
  SELECT
    intDiv(ts_ms, 900000) * 900000 AS slice_start_ms,
    count() AS sample_count,
    quantileExact(0.5)(sample_rtt_ms) AS p50_latency_ms,
    quantileExact(0.9)(sample_rtt_ms) AS p90_latency_ms,
    quantileExact(0.99)(sample_rtt_ms) AS p99_latency_ms,
    min(sample_rtt_ms) AS min_latency_ms,
    max(sample_rtt_ms) AS max_latency_ms,
    avg(sample_rtt_ms) AS avg_latency_ms,
    avg(if(kind = 'cex_rest', sample_rtt_ms, NULL)) AS cex_rest_ms,
    avg(if(kind = 'dex_rpc', sample_rtt_ms, NULL)) AS dex_base_ms,
    if(min(sample_source) = max(sample_source), min(sample_source), 'live+simulated') AS sources
  FROM (
    SELECT kind, ts, ts_ms, venue, event_id, any(rtt_ms) AS sample_rtt_ms, any(source) AS sample_source
    FROM latency_samples
    WHERE ok = 1
    GROUP BY kind, ts, ts_ms, venue, event_id
  )
  GROUP BY slice_start_ms
) ANY LEFT JOIN (
  SELECT
    intDiv(decided_at_ms, 900000) * 900000 AS slice_start_ms,
    uniqExact(opportunity_id) AS executions,
    uniqExactIf(opportunity_id, filled = 1) AS filled_executions
  FROM paper_executions
  WHERE outcome IN ('filled', 'missed')
  GROUP BY slice_start_ms
) USING slice_start_ms;

-- Shadow capacity per pair and 15-minute slice: the opportunities opened in it at their latest revision, with their
-- paper executions (GET /api/v1/crypto/shadow-capacity with `pair`, or one entry of its `pairs`; section 6).
-- The nested served fields are flattened: capital_required_usd.cex -> capital_required_cex_usd,
-- capital_split_usd.base_dex.quote_usd -> capital_split_base_dex_quote_usd, and so on.
CREATE VIEW IF NOT EXISTS shadow_capacity_15m AS
SELECT
  pair,
  slice_start_ms,
  toDateTime(intDiv(slice_start_ms, 1000)) AS slice_start,
  count() AS opportunities,
  sum(peak_cap > 0) AS actionable_opportunities,
  sum(peak_cap) AS available_volume_usd,
  sum(captured) AS captured_volume_usd,
  sum(peak_cap - captured) AS uncaptured_volume_usd,
  if(sum(peak_cap) > 0, 100 * sum(captured) / sum(peak_cap), NULL) AS capture_rate_pct,
  sum(greatest(0, peak_profit - realised)) AS est_uncaptured_profit_usd,
  if(sum(peak_cap > 0) > 0, sum(peak_cap) / sum(peak_cap > 0), 0) AS avg_capacity_usd,
  max(peak_cap) AS max_capacity_usd,
  if(max(peak_cap) > 0, argMax(peak_cap_capped, (peak_cap, peak_cap_capped)), 0) AS max_capacity_capped,
  sum(cap_ms) / 900000 AS time_weighted_capacity_usd,
  sum(if(endsWith(buy, '_base'), 0, peak_cap - captured)) + sum(if(endsWith(sell, '_base'), 0, peak_cap - captured))
    AS capital_required_cex_usd,
  sum(if(endsWith(buy, '_base'), peak_cap - captured, 0)) + sum(if(endsWith(sell, '_base'), peak_cap - captured, 0))
    AS capital_required_base_dex_usd,
  sum(if(endsWith(buy, '_base'), 0, peak_cap - captured)) AS capital_split_cex_quote_usd,
  sum(if(endsWith(sell, '_base'), 0, peak_cap - captured)) AS capital_split_cex_base_usd,
  sum(if(endsWith(buy, '_base'), peak_cap - captured, 0)) AS capital_split_base_dex_quote_usd,
  sum(if(endsWith(sell, '_base'), peak_cap - captured, 0)) AS capital_split_base_dex_base_usd,
  if(min(src) = max(src), min(src), 'live+simulated') AS source
FROM (
  SELECT
    pair,
    intDiv(opened_at_ms, 900000) * 900000 AS slice_start_ms,
    buy,
    sell,
    peak_cap,
    peak_cap_capped,
    peak_profit,
    cap_ms,
    src,
    if(execution_outcome = 'filled', least(execution_size_usd, peak_cap), 0) AS captured,
    if(execution_outcome = 'filled', greatest(0, execution_profit_usd), 0) AS realised
  FROM (
    SELECT
      opportunity_id,
      pair,
      opened_at_ms,
      argMax(buy_venue, revision) AS buy,
      argMax(sell_venue, revision) AS sell,
      argMax(peak_capacity_usd, revision) AS peak_cap,
      argMax(peak_capacity_capped, revision) AS peak_cap_capped,
      argMax(peak_profit_usd, revision) AS peak_profit,
      argMax(capacity_usd_ms, revision) AS cap_ms,
      argMax(source, revision) AS src
    FROM dislocations
    GROUP BY opportunity_id, pair, opened_at_ms
  ) ANY LEFT JOIN (
    SELECT
      opportunity_id,
      any(outcome) AS execution_outcome,
      any(size_usd) AS execution_size_usd,
      any(ifNull(realised_profit_usd, 0)) AS execution_profit_usd
    FROM paper_executions
    GROUP BY opportunity_id
  ) USING opportunity_id
)
GROUP BY pair, slice_start_ms;
