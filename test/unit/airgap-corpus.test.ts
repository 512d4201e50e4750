/**
 * airgap-scrub on the labelled PII corpus (test/fixtures/pii/corpus.jsonl:
 * realistic sentences, each entity labelled by kind and exact value, plus
 * hard negatives with nothing to redact), through the real processor (whose
 * redactions come from `redact`, checked to give the same text):
 *  - recall of kind K: labelled K entities wholly removed by a redaction
 *    that counts K among its kinds;
 *  - precision of kind K: redactions labelled K that overlap a labelled K
 *    entity, over all redactions labelled K (a redaction in a hard negative
 *    is a false positive of its label).
 * Prints the table and asserts recall >= 0.95 on SSN, CREDIT_CARD, EMAIL and
 * PHONE, >= 0.9 on ADDRESS and ZIP, precision >= 0.9 everywhere, and no text
 * left unredacted beyond the counted misses. Throughput on ~10 KB texts is a
 * bench figure (npm run bench:utility), not a test.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAirgapScrubProcessor, redact } from '../../jobs/airgap-scrub/processor.js';
import { ENTITY_KINDS, type EntityKind } from '../../jobs/airgap-scrub/spans.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';

interface Labelled {
  text: string;
  entities: { kind: EntityKind; value: string }[];
  note?: string;
}

const CORPUS: Labelled[] = readFileSync(new URL('../fixtures/pii/corpus.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Labelled);

const processor = await createAirgapScrubProcessor(processorDeps());

describe('airgap-scrub: PII corpus', () => {
  it(`has at least 150 labelled entities over every standard kind, and hard negatives (${CORPUS.length} texts)`, () => {
    const labelled = CORPUS.flatMap((r) => r.entities);
    expect(labelled.length).toBeGreaterThanOrEqual(150);
    for (const kind of ['SSN', 'CREDIT_CARD', 'EMAIL', 'PHONE', 'ADDRESS', 'ZIP'])
      expect(labelled.filter((e) => e.kind === kind).length, kind).toBeGreaterThanOrEqual(20);
    expect(CORPUS.filter((r) => r.entities.length === 0).length).toBeGreaterThanOrEqual(30);
    for (const r of CORPUS) for (const e of r.entities) expect(r.text, e.value).toContain(e.value);
  });

  it('measures precision and recall per entity type', async () => {
    const stats = new Map<EntityKind, { labelled: number; found: number; predicted: number; correct: number }>();
    const of = (k: EntityKind) =>
      stats.get(k) ?? (stats.set(k, { labelled: 0, found: 0, predicted: 0, correct: 0 }), stats.get(k)!);
    const misses: string[] = [];
    const falsePositives: string[] = [];
    for (const r of CORPUS) {
      // The processor's answer, and the redactions behind it (the same function the handler calls).
      const body = await processor.handle({ text: r.text }, jobContext());
      const { scrubbed, redactions: ranges } = redact(r.text, 'US');
      expect(body.scrubbed).toBe(scrubbed);
      const gold = r.entities.map((e) => {
        const start = r.text.indexOf(e.value);
        return { kind: e.kind, start, end: start + e.value.length };
      });
      for (const g of gold) {
        of(g.kind).labelled++;
        // Removed, and the kinds the processor reported for this text include it.
        const covered = ranges.some((x) => x.start <= g.start && x.end >= g.end && x.kinds.includes(g.kind));
        if (covered && body.entities_redacted.includes(g.kind) && !body.scrubbed.includes(r.text.slice(g.start, g.end)))
          of(g.kind).found++;
        else misses.push(`${g.kind} ${JSON.stringify(r.text.slice(g.start, g.end))}`);
      }
      for (const x of ranges) {
        of(x.kind).predicted++;
        if (gold.some((g) => g.kind === x.kind && x.start < g.end && g.start < x.end)) of(x.kind).correct++;
        else
          falsePositives.push(`${x.kind} ${JSON.stringify(r.text.slice(x.start, x.end))} in ${JSON.stringify(r.text)}`);
      }
    }
    const table = ENTITY_KINDS.filter((k) => stats.has(k)).map((k) => {
      const s = stats.get(k)!;
      return {
        kind: k,
        labelled: s.labelled,
        recall: +(s.found / s.labelled).toFixed(3),
        precision: +(s.predicted ? s.correct / s.predicted : 1).toFixed(3),
      };
    });
    console.log('airgap-scrub corpus: precision/recall per entity type');
    console.table(table);
    console.log(
      `misses (${misses.length}):\n  ${misses.join('\n  ')}\nfalse positives (${falsePositives.length}):\n  ${falsePositives.join('\n  ')}`,
    );
    const floor: Record<string, number> = {
      SSN: 0.95,
      CREDIT_CARD: 0.95,
      EMAIL: 0.95,
      PHONE: 0.95,
      ADDRESS: 0.9,
      ZIP: 0.9,
    };
    for (const row of table) {
      expect(row.recall, `${row.kind} recall`).toBeGreaterThanOrEqual(floor[row.kind] ?? 0.9);
      expect(row.precision, `${row.kind} precision`).toBeGreaterThanOrEqual(0.9);
    }
  });
});
