/**
 * airgap-scrub on the public labelled PII corpus (test/corpus/pii,
 * PROVENANCE.md there): per kind, the measure the issue states:
 *  - recall: a labelled entity is found when one redaction covers all of it
 *    and that redaction's label is the entity's kind (the value is gone and
 *    the right label stands in its place);
 *  - precision: redactions labelled K that overlap a labelled K entity, over
 *    all redactions labelled K (a redaction in a text with nothing to redact
 *    is a false positive of its label);
 *  - F1 their harmonic mean.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redaction } from '../../jobs/airgap-scrub/spans.js';

export const PII_CORPUS_FILE = fileURLToPath(new URL('../corpus/pii/corpus.jsonl', import.meta.url));

export interface LabelledEntity {
  kind: string;
  start: number;
  end: number;
  value: string;
}

export interface LabelledText {
  text: string;
  entities: LabelledEntity[];
  source: string;
}

export function loadPiiCorpus(file = PII_CORPUS_FILE): LabelledText[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as LabelledText);
}

export interface KindScore {
  kind: string;
  labelled: number;
  found: number;
  predicted: number;
  correct: number;
  recall: number;
  precision: number;
  f1: number;
}

export interface PiiScore {
  kinds: KindScore[];
  misses: string[];
  falsePositives: string[];
}

export function scorePii(
  corpus: readonly LabelledText[],
  redact: (text: string) => readonly Redaction[],
  kinds: readonly string[],
): PiiScore {
  const stats = new Map(kinds.map((k) => [k, { labelled: 0, found: 0, predicted: 0, correct: 0 }]));
  const misses: string[] = [];
  const falsePositives: string[] = [];
  for (const r of corpus) {
    const redactions = redact(r.text);
    for (const g of r.entities) {
      const s = stats.get(g.kind);
      if (!s) continue;
      s.labelled++;
      if (redactions.some((x) => x.start <= g.start && x.end >= g.end && x.kind === g.kind)) s.found++;
      else
        misses.push(
          `${g.kind} ${JSON.stringify(g.value)} in ${JSON.stringify(r.text)} -> ${JSON.stringify(redactions.map((x) => `${x.kind}:${r.text.slice(x.start, x.end)}`))}`,
        );
    }
    for (const x of redactions) {
      const s = stats.get(x.kind);
      if (!s) continue;
      s.predicted++;
      if (r.entities.some((g) => g.kind === x.kind && x.start < g.end && g.start < x.end)) s.correct++;
      else
        falsePositives.push(`${x.kind} ${JSON.stringify(r.text.slice(x.start, x.end))} in ${JSON.stringify(r.text)}`);
    }
  }
  const table = kinds.map((kind) => {
    const s = stats.get(kind)!;
    const recall = s.labelled ? s.found / s.labelled : 1;
    const precision = s.predicted ? s.correct / s.predicted : 1;
    return {
      kind,
      ...s,
      recall,
      precision,
      f1: recall + precision ? (2 * recall * precision) / (recall + precision) : 0,
    };
  });
  return { kinds: table, misses, falsePositives };
}
