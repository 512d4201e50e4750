/**
 * Furniture in summaries (issue 23, item 6), measured on the extraction corpora: each page is read as stealth-dom
 * reads it (jobs/stealth-dom/extract.ts, `text`: Readability's article with whatever furniture came along:
 * captions, credits, bylines, `Advertisement`, `Continue reading…`), summarised, and every sentence the summary
 * picked is judged against the page's expected article text, which this project did not write: a sentence is
 * furniture when it has fewer than five words or when fewer than 60 % of its words occur in the expected text
 * (it is not part of the article). The judge shares nothing with the summariser's own filter
 * (core/ai/local/summary-sentences.ts). Also counted: summaries that cut a sentence (`…`), which a budget that is a
 * maximum never needs.
 */
import type { AiProvider, SummaryFormat } from '../../core/ai/ai-provider.js';
import { countWords } from '../../core/ai/text.js';
import { extractHtml } from '../../jobs/stealth-dom/extract.js';
import { bagOfWords, type ArticlePage } from './extraction-quality.js';

/** The summaries each page gets: the budgets of the measurement. */
export const FURNITURE_RUNS: readonly { format: SummaryFormat; maxWords: number }[] = [
  { format: 'executive', maxWords: 30 },
  { format: 'bullets', maxWords: 60 },
  { format: 'paragraph', maxWords: 60 },
];

export interface FurnitureScore {
  /** Sentences picked (points, the executive lead, the sentences of a paragraph). */
  picked: number;
  furniture: number;
  /** Summaries with a sentence cut mid-way (ending with `…`). */
  cut: number;
  summaries: number;
  /** Furniture picked, for the report (at most 12). */
  examples: string[];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Whether a picked sentence is furniture, judged against the expected article's words. */
export function isFurniture(sentence: string, article: ReadonlyMap<string, number>): boolean {
  const words = sentence.toLowerCase().match(WORD) ?? [];
  if (countWords(sentence) < 5) return true;
  const inArticle = words.filter((w) => article.has(w)).length;
  return inArticle < 0.6 * words.length;
}

/** The sentences of a summary: its points, or a paragraph's sentences. */
function picked(summary: string, bullets: string[], headline: string | undefined, format: SummaryFormat): string[] {
  if (format === 'bullets') return bullets;
  if (format === 'executive') return [headline ?? '', ...bullets].filter(Boolean);
  return summary.split(/(?<=[.!?…]["”’)]?)\s+(?=[\p{Lu}\p{N}"“(])/u).filter(Boolean);
}

export async function scoreSummaryFurniture(ai: AiProvider, pages: readonly ArticlePage[]): Promise<FurnitureScore> {
  const score: FurnitureScore = { picked: 0, furniture: 0, cut: 0, summaries: 0, examples: [] };
  const page = new URL('https://example.com/article.html');
  for (const p of pages) {
    const text = extractHtml(p.html, page, 'text').content;
    if (countWords(text) < 80) continue;
    const article = bagOfWords(p.expected);
    for (const { format, maxWords } of FURNITURE_RUNS) {
      const r = await ai.summarize(text, { format, maxWords });
      score.summaries += 1;
      if (r.summary.includes('…')) score.cut += 1;
      for (const s of picked(r.summary, r.bullets, r.headline, format)) {
        score.picked += 1;
        if (isFurniture(s, article)) {
          score.furniture += 1;
          if (score.examples.length < 12) score.examples.push(`${p.id} ${format}: ${s.slice(0, 80)}`);
        }
      }
    }
  }
  return score;
}
