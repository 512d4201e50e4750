/**
 * What a telemetry SKU is: a function from the pairs catalogue and the config
 * (its input schema names the pairs and the venue) to the SKU's contract and
 * runtime. Each one is a folder, `api/telemetry/<route>/sku.ts`, listed in
 * api/catalogue/sku-list.ts after the job SKUs.
 */
import type { Config } from '../../core/config.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import type { Sku } from '../catalogue/sku.js';

export interface TelemetrySkuDeps {
  pairs: PairsCatalogue;
  config: Pick<Config, 'CEX_EXCHANGE'>;
}

export type TelemetrySku = (deps: TelemetrySkuDeps) => Sku;

/** The `source` of the documented example bodies (a live install's label; the simulator says `(simulated)`). */
export const LIVE_SOURCE_EXAMPLE = 'coinbase+uniswap_v3_base (live)';
