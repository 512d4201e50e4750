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

const clean = (s: string) =>
  s
    .replace(/^\s*(?:[-*•‣▪]|\d{1,2}[.)])\s+/u, '')
    .replace(/\s+/gu, ' ')
    .trim();

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

/**
 * Lays out `parts` in `format` within `maxWords` words. With the `input` it summarises, the summary is also never
 * longer than that input: at most as many words (the budget is capped at the input's word count, so a short text's
 * executive digest cannot outgrow it by its `Key points:` label) and its text (without list markers, label and line
 * breaks: `summaryText`) at most as many characters: trailing points are dropped, then the last one cut, until it fits.
 */
export function composeSummary(
  format: SummaryFormat,
  parts: SummaryParts,
  maxWords: number,
  model: string,
  input?: string,
): SummaryResult {
  if (input === undefined) return layOut(format, parts, maxWords, model);
  const budget = Math.min(maxWords, countWords(input));
  let r = layOut(format, parts, budget, model);
  if (textLength(r) <= input.length) return r;
  // Over the input's characters: fewer points, then a shorter last one.
  const trimmed: SummaryParts = { ...parts, points: [...parts.points] };
  for (let words = budget; textLength(r) > input.length && words > 0;) {
    if (trimmed.points.length > (format === 'executive' && !trimmed.headline ? 1 : 0)) trimmed.points.pop();
    else words = Math.min(words, r.word_count) - 1;
    r = layOut(format, trimmed, words, model);
  }
  return r;
}

/** Characters of a summary's text, without its layout (list markers, the `Key points:` label, line breaks). */
export function summaryText(summary: string): string {
  return summary
    .split('\n')
    .map((l) => l.replace(/^- /, '').trim())
    .filter((l) => l && l !== KEY_POINTS)
    .join(' ');
}

const textLength = (r: SummaryResult) => summaryText(r.summary).length;

function layOut(format: SummaryFormat, parts: SummaryParts, maxWords: number, model: string): SummaryResult {
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
