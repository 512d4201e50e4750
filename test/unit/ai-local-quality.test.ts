/**
 * Quality of the local AI adapter on labelled sets kept in test/fixtures/ai/
 * (written by hand for this purpose; see each file's $comment):
 *  - embeddings: a paraphrase pair scores higher than the pair's texts
 *    against every other pair's texts in at least 90% of comparisons, for
 *    embed-text (English) and embed-multilingual (English and 11 other
 *    languages); vectors are unit length, of the asked dimension and
 *    deterministic; long text is chunked and pooled;
 *  - summaries keep their format and word budget and contain the known key
 *    sentence;
 *  - sentiment: at least 80% accuracy on 72 labelled market sentences (and
 *    the figure on a held-out set written after the lexicon was frozen);
 *  - strict-mode entities: names and bio sentences of a labelled set found,
 *    nothing listed as harmless redacted.
 * The measured figures are printed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dot } from '../../core/ai/chunking.js';
import { embedForRoute } from '../../core/ai/embedding-route.js';
import { LocalAiProvider } from '../../core/ai/local/local-provider.js';
import { labelOf } from '../../core/ai/local/sentiment.js';
import { countWords } from '../../core/ai/text.js';
import type { SummaryFormat } from '../../core/ai/ai-provider.js';

const fixture = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../fixtures/ai/${name}`, import.meta.url), 'utf8')) as T;
type Pairs = { pairs: [string, string][] };
const EN = fixture<Pairs>('paraphrases-en.json').pairs;
const ML = fixture<Pairs>('paraphrases-multilingual.json').pairs;
const SUMMARIES = fixture<{ texts: { id: string; key: string; text: string }[] }>('summaries.json').texts;
const SENTIMENT = fixture<{ items: { text: string; label: string }[] }>('sentiment-market.json').items;
const HELDOUT = fixture<{ items: { text: string; label: string }[] }>('sentiment-market-heldout.json').items;
const ENTITIES = fixture<{
  items: { text: string; spans: { text: string; kind: 'NAME' | 'BIO' }[]; absent: string[] }[];
}>('entities.json').items;

let ai: LocalAiProvider;

beforeAll(async () => {
  const t0 = performance.now();
  ai = await LocalAiProvider.create({ vocabulary: 100_000 });
  console.log(`local provider ready in ${Math.round(performance.now() - t0)} ms`);
}, 60_000);
afterAll(async () => {
  await ai?.close();
});

/** Share of comparisons where sim(a_i, b_i) beats sim(a_i, b_j) and sim(b_i, a_j), over all j ≠ i. */
async function paraphraseWinRate(route: 'text' | 'multilingual', dimensions: number, pairs: [string, string][]) {
  const { vectors } = await ai.embed(pairs.flat(), { route, dimensions });
  let wins = 0;
  let total = 0;
  let posSum = 0;
  let negSum = 0;
  for (let i = 0; i < pairs.length; i++) {
    const a = vectors[2 * i]!;
    const b = vectors[2 * i + 1]!;
    const pos = dot(a, b);
    posSum += pos;
    for (let j = 0; j < pairs.length; j++) {
      if (j === i) continue;
      for (const neg of [dot(a, vectors[2 * j + 1]!), dot(b, vectors[2 * j]!)]) {
        total += 1;
        negSum += neg;
        if (pos > neg) wins += 1;
      }
    }
  }
  return {
    rate: wins / total,
    comparisons: total,
    meanParaphrase: posSum / pairs.length,
    meanUnrelated: negSum / total,
  };
}

describe('local embeddings', () => {
  it('unit vectors of the asked dimension, deterministic across rebuilds, different per route', async () => {
    const text = 'Arbitrage between Coinbase and Uniswap on Base';
    const a = (await ai.embed([text], { route: 'text', dimensions: 768 })).vectors[0]!;
    const m = (await ai.embed([text], { route: 'multilingual', dimensions: 1024 })).vectors[0]!;
    expect(a.length).toBe(768);
    expect(m.length).toBe(1024);
    expect(Math.sqrt(dot(a, a))).toBeCloseTo(1, 5);
    expect(Math.sqrt(dot(m, m))).toBeCloseTo(1, 5);
    await ai.close(); // drops the built embedders: the next call rebuilds them from their seeds
    const again = (await ai.embed([text], { route: 'text', dimensions: 768 })).vectors[0]!;
    expect(Array.from(again)).toEqual(Array.from(a));
    const other = (
      await ai.embed(['Completely different words about cooking pasta'], { route: 'text', dimensions: 768 })
    ).vectors[0]!;
    expect(dot(a, other)).toBeLessThan(0.5);
  });

  it('embed-text: paraphrases beat unrelated pairs in at least 90% of comparisons (English)', async () => {
    const r = await paraphraseWinRate('text', 768, EN);
    console.log(
      `embed-text (768) on ${EN.length} English pairs: ${(r.rate * 100).toFixed(1)}% of ${r.comparisons} comparisons; mean cosine paraphrase ${r.meanParaphrase.toFixed(3)}, unrelated ${r.meanUnrelated.toFixed(3)}`,
    );
    expect(r.rate).toBeGreaterThanOrEqual(0.9);
  });

  it('embed-multilingual: paraphrases beat unrelated pairs in at least 90% of comparisons (non-English, and mixed with English)', async () => {
    const foreign = await paraphraseWinRate('multilingual', 1024, ML);
    const all = await paraphraseWinRate('multilingual', 1024, [...EN, ...ML]);
    console.log(
      `embed-multilingual (1024) on ${ML.length} non-English pairs: ${(foreign.rate * 100).toFixed(1)}% of ${foreign.comparisons}; mean cosine paraphrase ${foreign.meanParaphrase.toFixed(3)}, unrelated ${foreign.meanUnrelated.toFixed(3)}`,
    );
    console.log(
      `embed-multilingual (1024) on all ${EN.length + ML.length} pairs: ${(all.rate * 100).toFixed(1)}% of ${all.comparisons}`,
    );
    expect(foreign.rate).toBeGreaterThanOrEqual(0.9);
    expect(all.rate).toBeGreaterThanOrEqual(0.9);
  });

  it('a text beyond the context limit is chunked and pooled; the pooled vector stays close to its content', async () => {
    const inside = SUMMARIES.slice(0, 6).map((t) => t.text);
    const outside = SUMMARIES.slice(6).map((t) => t.text);
    const long = inside.join('\n\n');
    const r = await embedForRoute(ai, [long, ...inside, ...outside], {
      route: 'multilingual',
      dimensions: 1024,
      contextTokens: 128,
    });
    expect(r.count).toBe(1 + inside.length + outside.length);
    expect(r.data[0]!.chunks).toBeGreaterThanOrEqual(6);
    expect(r.data[0]!.embedding).toHaveLength(1024);
    const pooled = r.data[0]!.embedding;
    const toInside = inside.map((_, i) => dot(pooled, r.data[1 + i]!.embedding));
    const toOutside = outside.map((_, i) => dot(pooled, r.data[1 + inside.length + i]!.embedding));
    console.log(
      `long text: ${r.data[0]!.chunks} chunks of <= 128 tokens; cosine to its ${inside.length} parts ${toInside.map((x) => x.toFixed(2)).join(', ')}; to texts not in it ${toOutside.map((x) => x.toFixed(2)).join(', ')}`,
    );
    expect(Math.min(...toInside)).toBeGreaterThan(Math.max(...toOutside));
  });
});

describe('local summaries', () => {
  const formats: SummaryFormat[] = ['bullets', 'paragraph', 'executive'];

  it('keep their format and word budget', async () => {
    for (const t of SUMMARIES) {
      for (const format of formats) {
        for (const maxWords of [12, 40, 150]) {
          const r = await ai.summarize(t.text, { format, maxWords });
          const where = `${t.id} ${format} ${maxWords}`;
          expect(r.format, where).toBe(format);
          expect(r.word_count, where).toBe(countWords(r.summary));
          expect(r.word_count, where).toBeLessThanOrEqual(maxWords);
          expect(r.word_count, where).toBeGreaterThan(0);
          if (format === 'bullets') {
            expect(
              r.summary.split('\n').every((l) => l.startsWith('- ')),
              where,
            ).toBe(true);
            expect(r.bullets.length, where).toBe(r.summary.split('\n').length);
          } else if (format === 'paragraph') {
            expect(r.summary, where).not.toContain('\n');
            expect(r.bullets, where).toEqual([]);
          } else {
            expect(r.summary.startsWith(r.headline!), where).toBe(true);
            if (r.bullets.length) expect(r.summary, where).toContain('\n\nKey points:\n- ');
          }
          if (maxWords === 150) expect(r.word_count, where).toBeGreaterThan(Math.min(60, countWords(t.text) / 2));
        }
      }
    }
  });

  it('contain the key sentence of texts whose key sentence is known', async () => {
    // A 40-word budget is about 40% of these 81-130-word texts: two or three sentences.
    let kept = 0;
    let tight = 0;
    let leads = 0;
    for (const t of SUMMARIES) {
      expect(t.text).toContain(t.key);
      for (const format of formats) {
        const r = await ai.summarize(t.text, { format, maxWords: 40 });
        if (r.summary.includes(t.key)) kept += 1;
        else console.log(`key sentence missing: ${t.id} ${format}: ${r.summary}`);
        if (format === 'executive' && r.headline === t.key) leads += 1;
      }
      const short = await ai.summarize(t.text, { format: 'bullets', maxWords: countWords(t.key) + 5 });
      if (short.bullets.includes(t.key)) tight += 1;
    }
    console.log(
      `summaries: key sentence kept in ${kept}/${SUMMARIES.length * formats.length} summaries of 40 words; ` +
        `as the executive lead in ${leads}/${SUMMARIES.length}; alone in a key+5-word budget in ${tight}/${SUMMARIES.length}`,
    );
    expect(kept).toBe(SUMMARIES.length * formats.length);
  });
});

describe('local sentiment', () => {
  const accuracy = async (items: { text: string; label: string }[]) => {
    let ok = 0;
    const confusion: Record<string, number> = {};
    for (const it of items) {
      const r = await ai.sentiment([it.text]);
      const label = labelOf(r.score);
      if (label === it.label) ok += 1;
      confusion[`${it.label}->${label}`] = (confusion[`${it.label}->${label}`] ?? 0) + 1;
    }
    return { accuracy: ok / items.length, confusion };
  };

  it('at least 80% accuracy on the labelled market sentences', async () => {
    const main = await accuracy(SENTIMENT);
    const held = await accuracy(HELDOUT);
    console.log(
      `sentiment: ${(main.accuracy * 100).toFixed(1)}% on ${SENTIMENT.length} labelled sentences; ${(held.accuracy * 100).toFixed(1)}% on ${HELDOUT.length} held-out sentences`,
    );
    console.log(
      `  errors (main): ${JSON.stringify(Object.fromEntries(Object.entries(main.confusion).filter(([k]) => k.split('->')[0] !== k.split('->')[1])))}`,
    );
    expect(SENTIMENT.length).toBeGreaterThanOrEqual(60);
    expect(main.accuracy).toBeGreaterThanOrEqual(0.8);
    expect(held.accuracy).toBeGreaterThanOrEqual(0.7);
  });

  it('negation, contrast and the crypto vocabulary move the score the right way; signals explain it', async () => {
    const s = async (t: string) => (await ai.sentiment([t])).score;
    expect(await s('ETF inflows hit a record')).toBeGreaterThan(0.2);
    expect(await s('ETF outflows hit a record')).toBeLessThan(-0.2);
    expect(await s('Short liquidations everywhere')).toBeGreaterThan(0.2);
    expect(await s('Long liquidations everywhere')).toBeLessThan(-0.2);
    expect(await s('This is not bullish')).toBeLessThan(0);
    expect(await s('Looks weak but the breakout is real')).toBeGreaterThan(0);
    const r = await ai.sentiment(
      ['The dev team did a rug pull 💀', 'Buy the dip, new all-time high soon 🚀', 'rug pull confirmed'],
      { subject: 'DEGEN' },
    );
    expect(r.texts_with_signal).toBe(3);
    expect(r.signals[0]).toMatchObject({ signal: '"rug pull" ×2', direction: 'bearish' });
    expect(r.signals.reduce((a, x) => a + x.weight, 0)).toBeCloseTo(1, 2);
    expect(r.model).toBe('local-market-lexicon-v1');
  });
});

describe('local strict-mode entities', () => {
  it('finds the labelled names and bio sentences and leaves the rest', async () => {
    let gold = 0;
    let found = 0;
    let predicted = 0;
    let correct = 0;
    let overRedacted = 0;
    for (const item of ENTITIES) {
      const { spans, model } = await ai.findSensitiveSpans(item.text);
      expect(model).toBe('local-compromise-rules-v1');
      for (let i = 1; i < spans.length; i++) expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
      predicted += spans.length;
      const goldRanges = item.spans.map((g) => {
        const start = item.text.indexOf(g.text);
        return { ...g, start, end: start + g.text.length };
      });
      for (const s of spans) if (goldRanges.some((g) => s.start < g.end && s.end > g.start)) correct += 1;
      for (const g of goldRanges) {
        gold += 1;
        const ok =
          g.kind === 'NAME'
            ? spans.some((s) => s.start <= g.start && s.end >= g.end)
            : spans.some(
                (s) =>
                  s.kind === 'BIO' && Math.min(s.end, g.end) - Math.max(s.start, g.start) >= 0.8 * (g.end - g.start),
              );
        if (ok) found += 1;
        else console.log(`missed ${g.kind}: ${g.text}`);
      }
      for (const a of item.absent) {
        const start = item.text.indexOf(a);
        if (spans.some((s) => s.start < start + a.length && s.end > start)) {
          overRedacted += 1;
          console.log(`over-redacted: ${a}`);
        }
      }
    }
    console.log(`entities: recall ${found}/${gold}, precision ${correct}/${predicted}, over-redacted ${overRedacted}`);
    expect(found / gold).toBeGreaterThanOrEqual(0.9);
    expect(correct / Math.max(1, predicted)).toBeGreaterThanOrEqual(0.9);
    expect(overRedacted).toBe(0);
  });
});
