/**
 * Issue 14's corpus thresholds, on public corpora this project did not write
 * (test/corpus/*\/PROVENANCE.md); `npm run bench:utility` prints the same
 * tables with timings.
 *  - airgap-scrub on test/corpus/pii: recall >= 0.97 for every kind and
 *    precision >= 0.98 (test/helpers/pii-quality.ts defines both); on
 *    test/corpus/pii-documents (tuning and kept-aside parts): the thresholds
 *    of DOCUMENT_THRESHOLDS and the hard negatives kept;
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
import { loadPiiCorpus, loadPiiDocuments, scoreNegatives, scorePii } from '../helpers/pii-quality.js';

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

/**
 * Thresholds on the messy-document corpus (test/corpus/pii-documents; issue 23 item 6), just under what the
 * detectors reach: per kind recall and precision, overall recall, and the most hard negatives (identifiers,
 * versions, timestamps, IMEIs, tracking numbers, IPs, ISBNs, UUIDs, amounts) a part may lose. The kept-aside part
 * was measured only after tuning; its misses are not printed here either.
 */
const DOCUMENT_THRESHOLDS = {
  tuning: {
    recall: { EMAIL: 0.99, CREDIT_CARD: 0.98, SSN: 0.98, PHONE: 0.98, ADDRESS: 0.98, ZIP: 0.98 },
    overallRecall: 0.99,
    precision: 0.99,
    negativesDestroyed: 5,
  },
  'kept-aside': {
    recall: { EMAIL: 0.98, CREDIT_CARD: 0.96, SSN: 0.95, PHONE: 0.82, ADDRESS: 0.79, ZIP: 0.91 },
    overallRecall: 0.87,
    precision: 0.99,
    negativesDestroyed: 5,
  },
} as const;

describe('airgap-scrub on the messy-document corpus', () => {
  for (const split of ['tuning', 'kept-aside'] as const) {
    it(`${split} part: recall and precision per kind, hard negatives kept`, () => {
      const docs = loadPiiDocuments(split);
      expect(docs.length).toBeGreaterThan(50);
      const redactions = (t: string) => redact(t, 'US').redactions;
      const score = scorePii(docs, redactions, STANDARD_KINDS);
      const negatives = scoreNegatives(docs, redactions);
      const want = DOCUMENT_THRESHOLDS[split];
      console.table(
        score.kinds.map((k) => ({
          kind: k.kind,
          labelled: k.labelled,
          recall: +k.recall.toFixed(3),
          precision: +k.precision.toFixed(3),
        })),
      );
      console.log(`${split}: hard negatives destroyed ${negatives.destroyed} of ${negatives.total}`);
      if (split === 'tuning')
        console.log(`misses:\n  ${score.misses.join('\n  ')}\nnegatives:\n  ${negatives.examples.join('\n  ')}`);
      for (const k of score.kinds) {
        expect(k.recall, `${k.kind} recall`).toBeGreaterThanOrEqual(want.recall[k.kind as keyof typeof want.recall]);
        expect(k.precision, `${k.kind} precision`).toBeGreaterThanOrEqual(want.precision);
      }
      const labelled = score.kinds.reduce((a, k) => a + k.labelled, 0);
      const found = score.kinds.reduce((a, k) => a + k.found, 0);
      expect(found / labelled, 'overall recall').toBeGreaterThanOrEqual(want.overallRecall);
      expect(negatives.total).toBeGreaterThan(500);
      expect(negatives.destroyed).toBeLessThanOrEqual(want.negativesDestroyed);
    });
  }
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
