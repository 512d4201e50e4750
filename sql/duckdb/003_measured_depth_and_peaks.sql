-- Issue 13: measured depth on quotes, capped markers and peaks on dislocations, capped depth on spread samples
-- (formulas in docs/metrics.md). Rows written before this migration read the defaults: not measured (NULL / empty),
-- not capped (0), peaks 0.

-- The point arrays have no DEFAULT: DuckDB refuses a second list column with a default added in one transaction to a
-- table with a primary key and rows ("Duplicate key"); rows written before read NULL there (no measurement).
-- QuoteEvent.depth: per side the notional within the impact bound, whether it is a lower bound, and the measured
-- price points beside the ladder ([size, price] as two parallel arrays, ascending by size).
ALTER TABLE quotes ADD COLUMN depth_impact_bps DOUBLE;
ALTER TABLE quotes ADD COLUMN depth_buy_usd DOUBLE;
ALTER TABLE quotes ADD COLUMN depth_sell_usd DOUBLE;
ALTER TABLE quotes ADD COLUMN depth_buy_capped UTINYINT DEFAULT 0;
ALTER TABLE quotes ADD COLUMN depth_sell_capped UTINYINT DEFAULT 0;
ALTER TABLE quotes ADD COLUMN depth_buy_sizes DOUBLE[];
ALTER TABLE quotes ADD COLUMN depth_buy_prices DOUBLE[];
ALTER TABLE quotes ADD COLUMN depth_sell_sizes DOUBLE[];
ALTER TABLE quotes ADD COLUMN depth_sell_prices DOUBLE[];

ALTER TABLE spread_samples ADD COLUMN liquidity_depth_capped UTINYINT DEFAULT 0;

ALTER TABLE dislocations ADD COLUMN capacity_capped UTINYINT DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN liquidity_depth_capped UTINYINT DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_raw_bps DOUBLE DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_size_usd DOUBLE DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_capacity_capped UTINYINT DEFAULT 0;
