/**
 * The three summary formats and the word budget, the same for both adapters:
 * whatever the local ranker selects or the remote model writes goes through
 * `composeSummary`, which lays it out and cuts it to `maxWords` words
 * (countWords, core/ai/text.ts):
 *  - `bullets`: Markdown list items (`- ...`), one per point;
 *  - `paragraph`: one paragraph of sentences;
 *  - `executive`: a lead sentence (the bottom line), a blank line, then
 *    `Key points:` and list items. The label counts toward the budget.
 * Over budget, whole points or sentences are dropped from the end; when not
 * even the first fits, it is cut at a word boundary and ends with `…`.
 */
import type { SummaryFormat, SummaryResult } from './ai-provider.js';
import { countWords, truncateWords } from './text.js';

const KEY_POINTS = 'Key points:';

export interface SummaryParts {
  /** Executive lead sentence; for other formats it becomes the first point. */
  headline?: string;
  /** Points (bullets, executive key points) or sentences (paragraph), in output order. */
  points: string[];
}

const clean = (s: string) => s.replace(/^\s*(?:[-*•‣▪]|\d{1,2}[.)])\s+/u, '').replace(/\s+/gu, ' ').trim();

function cut(text: string, words: number): string {
  const t = truncateWords(text, words).replace(/[\s,;:.-]+$/u, '');
  return t.length < text.length ? `${t}…` : t;
}

/** Keeps points from the start while they fit in `budget` words; the first is cut when even it does not fit. */
function fit(points: string[], budget: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const p of points) {
    const w = countWords(p);
    if (w === 0) continue;
    if (used + w <= budget) {
      out.push(p);
      used += w;
    } else if (!out.length && budget > 0) {
      out.push(cut(p, budget));
      break;
    } else break;
  }
  return out;
}

/** Lays out `parts` in `format` within `maxWords` words. */
export function composeSummary(format: SummaryFormat, parts: SummaryParts, maxWords: number, model: string): SummaryResult {
  const points = parts.points.map(clean).filter(Boolean);
  const headline = parts.headline ? clean(parts.headline) : undefined;
  if (format === 'executive') {
    const lead = headline ?? points.shift();
    if (!lead) return { format, summary: '', bullets: [], headline: '', word_count: 0, model };
    const leadKept = fit([lead], maxWords)[0] ?? '';
    const remaining = maxWords - countWords(leadKept) - countWords(KEY_POINTS);
    const kept = remaining > 0 ? fit(points, remaining).filter((p) => !p.endsWith('…') || remaining >= 6) : [];
    const summary = kept.length ? `${leadKept}\n\n${KEY_POINTS}\n${kept.map((p) => `- ${p}`).join('\n')}` : leadKept;
    return { format, summary, bullets: kept, headline: leadKept, word_count: countWords(summary), model };
  }
  const all = headline ? [headline, ...points] : points;
  const kept = fit(all, maxWords);
  if (format === 'bullets') {
    const summary = kept.map((p) => `- ${p}`).join('\n');
    return { format, summary, bullets: kept, word_count: countWords(summary), model };
  }
  const summary = kept.join(' ');
  return { format, summary, bullets: [], word_count: countWords(summary), model };
}

/** Splits a paragraph written by a model into sentences for `composeSummary`. */
export function paragraphSentences(paragraph: string): string[] {
  return paragraph
    .split(/(?<=[.!?。！？])\s+/u)
    .map((s) => s.trim())
    .filter(Boolean);
}
