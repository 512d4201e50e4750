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

/**
 * The messy-document corpus (test/corpus/pii-documents, PROVENANCE.md there): tickets, CSV exports, e-mail threads,
 * form dumps, JSON records and logs, each with labelled entities and hard negatives (identifiers, versions,
 * timestamps, IMEIs, tracking numbers, IPs, ISBNs, UUIDs, amounts) that must survive. `split` is fixed by the build:
 * "tuning", or "kept-aside" (never looked at while tuning; measured for generalisation).
 */
export const PII_DOCUMENTS_FILE = fileURLToPath(new URL('../corpus/pii-documents/corpus.jsonl', import.meta.url));

export interface LabelledDocument extends LabelledText {
  id: string;
  genre: string;
  template: string;
  split: 'tuning' | 'kept-aside';
  negatives: LabelledEntity[];
}

export function loadPiiDocuments(split: LabelledDocument['split'], file = PII_DOCUMENTS_FILE): LabelledDocument[] {
  return (loadPiiCorpus(file) as LabelledDocument[]).filter((d) => d.split === split);
}

export interface NegativeScore {
  kind: string;
  total: number;
  destroyed: number;
}

/** Hard negatives per kind: `destroyed` when any redaction overlaps one (a part of it replaced is as bad as all). */
export function scoreNegatives(
  corpus: readonly LabelledDocument[],
  redact: (text: string) => readonly Redaction[],
): { kinds: NegativeScore[]; total: number; destroyed: number; examples: string[] } {
  const stats = new Map<string, NegativeScore>();
  const examples: string[] = [];
  for (const d of corpus) {
    const redactions = redact(d.text);
    for (const n of d.negatives) {
      const s = stats.get(n.kind) ?? { kind: n.kind, total: 0, destroyed: 0 };
      stats.set(n.kind, s);
      s.total++;
      const hit = redactions.find((x) => x.start < n.end && n.start < x.end);
      if (hit) {
        s.destroyed++;
        examples.push(
          `${n.kind} ${JSON.stringify(n.value)} taken as ${hit.kind}:${JSON.stringify(d.text.slice(hit.start, hit.end))}`,
        );
      }
    }
  }
  const kinds = [...stats.values()].sort((a, b) => a.kind.localeCompare(b.kind));
  return {
    kinds,
    total: kinds.reduce((a, k) => a + k.total, 0),
    destroyed: kinds.reduce((a, k) => a + k.destroyed, 0),
    examples,
  };
}
