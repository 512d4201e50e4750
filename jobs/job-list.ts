/**
 * The job SKUs, in the order of the spec's route table. A job SKU's entry is
 * its folder's `job.ts` (jobs/job-sku.ts); adding one is a folder and a line
 * here. jobs/ owns this list so that the worker role loads the job contracts
 * without the API (its catalogue, payment and discovery code): the api role
 * declares these SKUs and the worker serves their processors from this one list.
 */
import type { JobSku } from './job-sku.js';
import { stealthDomJob } from './stealth-dom/job.js';
import { airgapScrubJob } from './airgap-scrub/job.js';
import { ragShrinkJob } from './rag-shrink/job.js';
import { codeDenoiseJob } from './code-denoise/job.js';
import { domainCheckJob } from './domain-check/job.js';
import { dexPriceSummaryJob } from './dex-price-summary/job.js';
import { xSentimentJob } from './x-sentiment/job.js';
import { imageOcrShrinkJob } from './image-ocr-shrink/job.js';
import { embedTextJob } from './embed-text/job.js';
import { embedMultilingualJob } from './embed-multilingual/job.js';
import { summarizeJob } from './summarize/job.js';

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
