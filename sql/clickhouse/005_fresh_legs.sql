-- Issue 27 item 3, fresh legs only: one row per detector evaluation not made because a leg was older than its venue's
-- maximum quote age (DEX_MAX_QUOTE_AGE_MS, CEX_MAX_QUOTE_AGE_MS) at the evaluation's event time; the id is the spread
-- sample id the evaluation would have had. Served as `stale_legs` (docs/metrics.md, "Fresh legs only").
CREATE TABLE IF NOT EXISTS stale_evaluations (
  evaluation_id String,
  pair String,
  ts DateTime,
  ts_ms UInt64,
  stale_venue String,
  stale_venue_kind String,
  fresh_venue String,
  leg_age_ms UInt64,
  max_age_ms UInt64,
  quote_event_id String,
  counterpart_event_id String,
  source String,
  methodology String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (pair, ts, evaluation_id);

-- Issue 27 item 6, the inputs behind each number. Per revision, its legs (the CEX and DEX quotes it was evaluated on:
-- event ids and times, the DEX block number) and its costs beside fees_bps and gas_usd (each leg's fee, slippage at
-- the profit's ladder size); per revision and per spread sample, the methodology version of the detector that wrote
-- the row (aggregate/methodology.ts). Rows written before read methodology '1' and empty legs / zero costs.
ALTER TABLE dislocations ADD COLUMN cex_event_id String DEFAULT '';
ALTER TABLE dislocations ADD COLUMN cex_event_time_ms UInt64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN dex_event_id String DEFAULT '';
ALTER TABLE dislocations ADD COLUMN dex_event_time_ms UInt64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN dex_block_number Nullable(UInt64);
ALTER TABLE dislocations ADD COLUMN cex_fee_bps Float64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN dex_fee_bps Float64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN slippage_bps Float64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN methodology String DEFAULT '1';
ALTER TABLE spread_samples ADD COLUMN methodology String DEFAULT '1';
