/**
 * Issue 14's corpus thresholds, on public corpora this project did not write
 * (test/corpus/*\/PROVENANCE.md); `npm run bench:utility` prints the same
 * tables with timings.
 *  - airgap-scrub on test/corpus/pii: recall >= 0.97 for every kind and
 *    precision >= 0.98 (test/helpers/pii-quality.ts defines both);
 *  - rag-shrink on test/corpus/article-extraction: mean bag-of-words F1 at
 *    least the best baseline's measured in the same run (@mozilla/readability
 *    + turndown in process; trafilatura and readability-lxml when Python has
 *    them, skipped with a note otherwise), and no page below 0.5 where a
 *    baseline scores above 0.8.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../jobs/airgap-scrub/processor.js';
import { shrinkHtml } from '../../jobs/rag-shrink/shrink.js';
import { loadArticleCorpus, pythonBaselines, readabilityTurndown, wordOverlap } from '../helpers/extraction-quality.js';
import { loadPiiCorpus, scorePii } from '../helpers/pii-quality.js';

const STANDARD_KINDS = ['EMAIL', 'CREDIT_CARD', 'SSN', 'PHONE', 'ADDRESS', 'ZIP'];

describe('airgap-scrub on the public PII corpus', () => {
  it('recall >= 0.97 for every kind, precision >= 0.98', () => {
    const corpus = loadPiiCorpus();
    expect(corpus.length).toBeGreaterThan(1000);
    const score = scorePii(corpus, (t) => redact(t, 'US').redactions, STANDARD_KINDS);
    console.table(
      score.kinds.map((k) => ({
        kind: k.kind,
        labelled: k.labelled,
        recall: +k.recall.toFixed(3),
        precision: +k.precision.toFixed(3),
        f1: +k.f1.toFixed(3),
      })),
    );
    console.log(
      `misses (${score.misses.length}):\n  ${score.misses.join('\n  ')}\nfalse positives (${score.falsePositives.length}):\n  ${score.falsePositives.join('\n  ')}`,
    );
    for (const k of score.kinds) {
      expect(k.labelled, k.kind).toBeGreaterThanOrEqual(40);
      expect(k.recall, `${k.kind} recall`).toBeGreaterThanOrEqual(0.97);
      expect(k.precision, `${k.kind} precision`).toBeGreaterThanOrEqual(0.98);
    }
  });
});

describe('rag-shrink on the public article-extraction corpus', () => {
  it(
    'mean F1 at least the best baseline, and no page lost where a baseline reads it well',
    { timeout: 600_000 },
    () => {
      const pages = loadArticleCorpus();
      const ours = pages.map((p) => wordOverlap(shrinkHtml(p.html, { keepLinks: false }).content, p.expected).f1);
      const baselines = [
        { name: 'readability+turndown', f1: pages.map((p) => wordOverlap(readabilityTurndown(p.html), p.expected).f1) },
      ];
      for (const b of pythonBaselines(pages)) {
        if (b.outputs)
          baselines.push({
            name: b.name,
            f1: pages.map((p) => wordOverlap(b.outputs!.get(p.id) ?? '', p.expected).f1),
          });
        else console.log(`${b.name}: ${b.note}`);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      console.table(
        [{ name: 'rag-shrink', f1: ours }, ...baselines].map((r) => ({
          extractor: r.name,
          pages: r.f1.length,
          mean: +mean(r.f1).toFixed(3),
          median: +[...r.f1].sort((a, b) => a - b)[Math.floor(r.f1.length / 2)]!.toFixed(3),
        })),
      );
      const best = Math.max(...baselines.map((b) => mean(b.f1)));
      expect(mean(ours)).toBeGreaterThanOrEqual(best);
      const lost = pages.filter((_, i) => ours[i]! < 0.5 && baselines.some((b) => b.f1[i]! > 0.8)).map((p) => p.url);
      expect(lost).toEqual([]);
    },
  );
});
