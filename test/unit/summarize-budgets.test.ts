/**
 * Issue 14, item 5: summarize honours its budgets in every format, through
 * the real processor on the local AI provider: never longer than its input
 * (words, and characters of its text without list markers and label), and on inputs longer than the budget never
 * over it, with whole sentences only (issue 23: the budget is a maximum, not a target; no sentence is cut to pad
 * the summary) and at least one of them. Inputs: article texts of the public article-extraction
 * corpus (test/corpus/article-extraction), whole and cut to a few sentences.
 */
import { describe, expect, it } from 'vitest';
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import { summaryText } from '../../core/ai/summary-format.js';
import { countWords } from '../../core/ai/text.js';
import { createSummarizeProcessor } from '../../jobs/summarize/processor.js';
import { loadArticleCorpus } from '../helpers/extraction-quality.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';

const deps = processorDeps({}, { AI_PROVIDER: 'local' });
const ai = await createAiProvider(deps.config, deps.logger);
const summarize = await createSummarizeProcessor({ ...deps, ai });
const articles = loadArticleCorpus(12)
  .map((p) => p.expected.replace(/\s+/g, ' ').trim())
  .filter((t) => countWords(t) > 400);
const FORMATS = ['bullets', 'paragraph', 'executive'] as const;

describe('summarize budgets', () => {
  it('is never longer than a short input, in words or characters', async () => {
    for (const text of articles.slice(0, 6)) {
      const sentences = text.match(/[^.!?]+[.!?]+/g) ?? [text];
      for (const n of [1, 2, 3, 5]) {
        const short = sentences.slice(0, n).join(' ').trim();
        for (const format of FORMATS) {
          const r = await summarize.handle({ text: short, format }, jobContext());
          const where = `${format} on ${n} sentence(s): ${JSON.stringify(r.summary)}`;
          expect(r.word_count, where).toBe(countWords(r.summary));
          expect(r.word_count, where).toBeLessThanOrEqual(countWords(short));
          expect(summaryText(r.summary).length, where).toBeLessThanOrEqual(short.length);
          expect(r.word_count, where).toBeGreaterThan(0);
        }
      }
    }
  });

  it('stays within the word budget on long inputs, in whole sentences', async () => {
    for (const text of articles.slice(0, 6)) {
      for (const maxLength of [30, 60, 150]) {
        for (const format of FORMATS) {
          const r = await summarize.handle({ text, format, maxLength }, jobContext());
          const where = `${format} maxLength ${maxLength}: ${r.word_count} words: ${JSON.stringify(r.summary)}`;
          expect(r.word_count, where).toBeLessThanOrEqual(maxLength);
          expect(r.word_count, where).toBeGreaterThanOrEqual(5);
          expect(r.summary, where).not.toContain('…');
        }
      }
    }
  });
});
