-- Issue 13: measured depth on quotes, capped markers and peaks on dislocations, capped depth on spread samples
-- (formulas in docs/metrics.md). Rows written before this migration read the defaults: not measured (NULL / empty),
-- not capped (0), peaks 0.

-- QuoteEvent.depth: per side the notional within the impact bound, whether it is a lower bound, and the measured
-- price points beside the ladder ([size, price] as two parallel arrays, ascending by size).
ALTER TABLE quotes ADD COLUMN depth_impact_bps Nullable(Float64);
ALTER TABLE quotes ADD COLUMN depth_buy_usd Nullable(Float64);
ALTER TABLE quotes ADD COLUMN depth_sell_usd Nullable(Float64);
ALTER TABLE quotes ADD COLUMN depth_buy_capped UInt8 DEFAULT 0;
ALTER TABLE quotes ADD COLUMN depth_sell_capped UInt8 DEFAULT 0;
ALTER TABLE quotes ADD COLUMN depth_buy_sizes Array(Float64);
ALTER TABLE quotes ADD COLUMN depth_buy_prices Array(Float64);
ALTER TABLE quotes ADD COLUMN depth_sell_sizes Array(Float64);
ALTER TABLE quotes ADD COLUMN depth_sell_prices Array(Float64);

ALTER TABLE spread_samples ADD COLUMN liquidity_depth_capped UInt8 DEFAULT 0;

ALTER TABLE dislocations ADD COLUMN capacity_capped UInt8 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN liquidity_depth_capped UInt8 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_raw_bps Float64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_size_usd Float64 DEFAULT 0;
ALTER TABLE dislocations ADD COLUMN peak_capacity_capped UInt8 DEFAULT 0;
