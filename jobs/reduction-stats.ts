/** Output fields of the SKUs that shrink a text for an LLM (rag-shrink, code-denoise): sizes in and out, tokens saved. */
import { z } from 'zod';

export const reductionFields = {
  original_length: z.number().int().describe('Characters in'),
  shrunk_length: z.number().int().describe('Characters out'),
  reduction_pct: z.number().describe('(1 - out / in) x 100'),
};

/** Tokens estimated as one per 4 characters (jobs/rag-shrink/README.md). */
export const tokensSavedField = z.number().int().describe('Estimated LLM tokens saved: ceil(in / 4) - ceil(out / 4)');
