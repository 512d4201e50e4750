/**
 * The catalogue's lists of SKUs, in the order of the spec's route table: the
 * job SKUs (jobs/job-list.ts, which jobs/ owns so the worker loads them without
 * the API), then the telemetry SKUs. A telemetry SKU's entry is its folder's
 * `sku.ts` (api/telemetry/telemetry-sku.ts). Adding a SKU is one folder and
 * one line in its list.
 */
export { JOB_SKUS } from '../../jobs/job-list.js';
import type { TelemetrySku } from '../telemetry/telemetry-sku.js';
import { coverageSku } from '../telemetry/coverage/sku.js';
import { spreadCandlesSku } from '../telemetry/spread-candles/sku.js';
import { dislocationsSku } from '../telemetry/dislocations/sku.js';
import { executionLatencySku } from '../telemetry/execution-latency/sku.js';
import { shadowCapacitySku } from '../telemetry/shadow-capacity/sku.js';
import { impactSimulationSku } from '../telemetry/impact-simulation/sku.js';
import { streamSku } from '../telemetry/stream/sku.js';
import { historySku } from '../telemetry/history/sku.js';

export const TELEMETRY_SKUS: readonly TelemetrySku[] = [
  coverageSku,
  spreadCandlesSku,
  dislocationsSku,
  executionLatencySku,
  shadowCapacitySku,
  impactSimulationSku,
  streamSku,
  historySku,
];
