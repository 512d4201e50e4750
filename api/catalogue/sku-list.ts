/**
 * The catalogue's lists of SKUs, in the order of the spec's route table: the
 * job SKUs, then the telemetry SKUs. A job SKU's entry is its folder's
 * `job.ts` (jobs/job-sku.ts); a telemetry SKU's, its folder's `sku.ts`
 * (api/telemetry/telemetry-sku.ts). Adding a SKU is one folder and one line
 * here. The api role builds the catalogue from these lists and the worker role
 * serves the job SKUs' processors (roles/process.ts hands both the same list).
 */
import type { JobSku } from '../../jobs/job-sku.js';
import { stealthDomJob } from '../../jobs/stealth-dom/job.js';
import { airgapScrubJob } from '../../jobs/airgap-scrub/job.js';
import { ragShrinkJob } from '../../jobs/rag-shrink/job.js';
import { codeDenoiseJob } from '../../jobs/code-denoise/job.js';
import { domainCheckJob } from '../../jobs/domain-check/job.js';
import { dexPriceSummaryJob } from '../../jobs/dex-price-summary/job.js';
import { xSentimentJob } from '../../jobs/x-sentiment/job.js';
import { imageOcrShrinkJob } from '../../jobs/image-ocr-shrink/job.js';
import { embedTextJob } from '../../jobs/embed-text/job.js';
import { embedMultilingualJob } from '../../jobs/embed-multilingual/job.js';
import { summarizeJob } from '../../jobs/summarize/job.js';
import type { TelemetrySku } from '../telemetry/telemetry-sku.js';
import { coverageSku } from '../telemetry/coverage/sku.js';
import { spreadCandlesSku } from '../telemetry/spread-candles/sku.js';
import { dislocationsSku } from '../telemetry/dislocations/sku.js';
import { executionLatencySku } from '../telemetry/execution-latency/sku.js';
import { shadowCapacitySku } from '../telemetry/shadow-capacity/sku.js';
import { impactSimulationSku } from '../telemetry/impact-simulation/sku.js';

export const JOB_SKUS: readonly JobSku[] = [
  stealthDomJob,
  airgapScrubJob,
  ragShrinkJob,
  codeDenoiseJob,
  domainCheckJob,
  dexPriceSummaryJob,
  xSentimentJob,
  imageOcrShrinkJob,
  embedTextJob,
  embedMultilingualJob,
  summarizeJob,
];

export const TELEMETRY_SKUS: readonly TelemetrySku[] = [
  coverageSku,
  spreadCandlesSku,
  dislocationsSku,
  executionLatencySku,
  shadowCapacitySku,
  impactSimulationSku,
];
