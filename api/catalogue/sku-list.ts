/**
 * The catalogue's list of job SKUs, in the order of the spec's route table
 * (the telemetry SKUs follow them: telemetry-skus.ts). Each entry is a SKU
 * folder's `job.ts` (jobs/job-sku.ts): adding a SKU is one folder under jobs/
 * and one line here. The api role builds the catalogue from this list and the
 * worker role serves its processors (roles/process.ts hands both the same list).
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
