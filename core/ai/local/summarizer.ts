/**
 * Local extractive summariser: sentence-graph ranking in the manner of
 * TextRank (Mihalcea and Tarau, 2004) and LexRank (Erkan and Radev, 2004).
 *
 *  1. sentences: core/ai/text.ts (segmenter, abbreviations, line breaks);
 *  2. each sentence is embedded by the local embedder (word vectors and
 *     character n-grams, core/ai/local/embedder.ts), so sentences that say
 *     the same thing in other words are still linked;
 *     Fragments under five words are left out (never picked, see 4), unless
 *     the text has nothing else;
 *  3. a graph with edge weights max(0, cosine) between every two sentences,
 *     ranked by PageRank (damping 0.85) with a mild teleport prior toward
 *     early sentences and against fragments under six words (headings,
 *     captions);
 *  4. selection by maximal marginal relevance (rank minus redundancy with
 *     what is already chosen, λ = 0.75) while the word budget allows,
 *     skipping sentences that do not fit and sentences that are no summary
 *     sentence (summary-sentences.ts: fragments under five words, page
 *     furniture, English without a verb). The budget is a maximum, not a
 *     target: no sentence is cut to fill it, and the first pick is the best
 *     that fits (only when no sentence fits is the best one cut, by
 *     composeSummary, to return something); laid out by composeSummary
 *     (core/ai/summary-format.ts): bullets and paragraph in text order,
 *     executive with the best-ranked sentence as its lead.
 *
 * Texts of more than MAX_GRAPH sentences are first narrowed to the
 * MAX_GRAPH sentences closest to the document's centroid (the graph is
 * quadratic).
 */
import type { SummaryFormat, SummaryResult } from '../ai-provider.js';
import { dot } from '../chunking.js';
import { composeSummary } from '../summary-format.js';
import { countWords, splitSentences } from '../text.js';
import type { LocalEmbedder } from './embedder.js';
import { isSummarySentence, MIN_SENTENCE_WORDS } from './summary-sentences.js';

const DAMPING = 0.85;
const ITERATIONS = 50;
const MMR_LAMBDA = 0.75;
const MAX_GRAPH = 400;
const SHORT_SENTENCE_WORDS = 6;
/** Sentences the selection may refuse (summary-sentences.ts) before it gives up looking (see select). */
const MAX_REFUSED = 40;

interface Candidate {
  text: string;
  position: number;
  words: number;
  vector: Float32Array;
  rank: number;
}

export class LocalSummarizer {
  constructor(
    private readonly embedder: LocalEmbedder,
    readonly model: string,
  ) {}

  /** `pause` is awaited every few milliseconds of work (the caller yields to the event loop there). */
  async summarize(
    text: string,
    format: SummaryFormat,
    maxWords: number,
    signal?: AbortSignal,
    pause?: () => Promise<void>,
  ): Promise<SummaryResult> {
    const sentences = splitSentences(text);
    if (!sentences.length) return composeSummary(format, { points: [] }, maxWords, this.model, text);
    let candidates: Candidate[] = [];
    let sliceStart = performance.now();
    // Fragments (under MIN_SENTENCE_WORDS words: labels, list numbers, headings, captions) are never picked, so
    // they are not embedded either, unless the text has nothing else (then its first MAX_GRAPH lines).
    const whole = sentences.map((s) => countWords(s.text));
    const fragmentsOnly = !whole.some((n) => n >= MIN_SENTENCE_WORDS);
    for (const [position, s] of sentences.entries()) {
      if (fragmentsOnly ? position >= MAX_GRAPH : whole[position]! < MIN_SENTENCE_WORDS) continue;
      candidates.push({
        text: s.text,
        position,
        words: whole[position]!,
        vector: this.embedder.embed(s.text),
        rank: 0,
      });
      if (pause && performance.now() - sliceStart > 8) {
        await pause();
        signal?.throwIfAborted();
        sliceStart = performance.now();
      }
    }
    signal?.throwIfAborted();
    if (candidates.length > MAX_GRAPH) candidates = nearestToCentroid(candidates, MAX_GRAPH);
    rank(candidates);
    signal?.throwIfAborted();
    // Never more words than the text itself; executive spends two on its `Key points:` label.
    const budget = Math.min(maxWords, countWords(text));
    const chosen = select(candidates, format === 'executive' ? budget - 2 : budget);
    if (format === 'executive') {
      const [lead, ...rest] = chosen;
      return composeSummary(
        format,
        { headline: lead?.text ?? '', points: rest.sort((a, b) => a.position - b.position).map((c) => c.text) },
        maxWords,
        this.model,
        text,
      );
    }
    return composeSummary(
      format,
      { points: chosen.sort((a, b) => a.position - b.position).map((c) => c.text) },
      maxWords,
      this.model,
      text,
    );
  }
}

function nearestToCentroid(candidates: Candidate[], keep: number): Candidate[] {
  const dims = candidates[0]!.vector.length;
  const centroid = new Float32Array(dims);
  for (const c of candidates) for (let d = 0; d < dims; d++) centroid[d]! += c.vector[d]!;
  return candidates
    .map((c) => ({ c, score: dot(c.vector, centroid) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, keep)
    .map((x) => x.c)
    .sort((a, b) => a.position - b.position);
}

/** PageRank over the cosine graph with a position and length prior; writes `rank`. */
function rank(candidates: Candidate[]): void {
  const n = candidates.length;
  if (n === 1) {
    candidates[0]!.rank = 1;
    return;
  }
  const w = new Float64Array(n * n);
  const outSum = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = Math.max(0, dot(candidates[i]!.vector, candidates[j]!.vector));
      w[i * n + j] = s;
      w[j * n + i] = s;
      outSum[i]! += s;
      outSum[j]! += s;
    }
  }
  const prior = new Float64Array(n);
  let priorSum = 0;
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!;
    const lengthFactor = Math.min(1, c.words / SHORT_SENTENCE_WORDS);
    prior[i] = (1 + 0.5 / Math.sqrt(c.position + 1)) * lengthFactor;
    priorSum += prior[i]!;
  }
  for (let i = 0; i < n; i++) prior[i]! /= priorSum || 1;
  let pr = Float64Array.from(prior);
  let next = new Float64Array(n);
  for (let it = 0; it < ITERATIONS; it++) {
    let dangling = 0;
    for (let j = 0; j < n; j++) if (outSum[j] === 0) dangling += pr[j]!;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) {
        const o = outSum[j]!;
        if (o > 0) s += (w[j * n + i]! / o) * pr[j]!;
      }
      next[i] = (1 - DAMPING) * prior[i]! + DAMPING * (s + dangling * prior[i]!);
    }
    let delta = 0;
    for (let i = 0; i < n; i++) delta += Math.abs(next[i]! - pr[i]!);
    [pr, next] = [next, pr];
    if (delta < 1e-9) break;
  }
  // Fragments keep their graph score scaled down: a heading is central but says little.
  for (let i = 0; i < n; i++) candidates[i]!.rank = pr[i]! * Math.min(1, candidates[i]!.words / SHORT_SENTENCE_WORDS);
}

/**
 * Maximal marginal relevance under the word budget, among the sentences isSummarySentence accepts (asked only of the
 * sentence about to be picked, and at most MAX_REFUSED refused); when none fits, the best-ranked acceptable sentence
 * (or, with none acceptable among the next MAX_REFUSED, the best-ranked one) alone, which composeSummary cuts to the
 * budget.
 */
function select(candidates: Candidate[], budget: number): Candidate[] {
  const byRank = [...candidates].sort((a, b) => b.rank - a.rank);
  const top = byRank[0]!.rank || 1;
  const chosen: Candidate[] = [];
  let used = 0;
  const remaining = new Set(byRank);
  // Each candidate's redundancy (its highest similarity to a chosen sentence), raised as sentences are chosen: one
  // dot product per candidate and choice, where recomputing it against every chosen sentence at every step was
  // cubic (4 s for 250 one-word lines).
  const redundancy = new Map<Candidate, number>(byRank.map((c) => [c, 0]));
  // Verdicts by text: furniture repeats itself ("Advertisement" under every other paragraph).
  const verdicts = new Map<string, boolean>();
  let refused = 0;
  const acceptable = (c: Candidate) => {
    let v = verdicts.get(c.text);
    if (v === undefined) verdicts.set(c.text, (v = isSummarySentence(c.text)));
    return v;
  };
  while (remaining.size) {
    let best: Candidate | undefined;
    let bestScore = -Infinity;
    for (const c of remaining) {
      if (used + c.words > budget) continue;
      const score = MMR_LAMBDA * (c.rank / top) - (1 - MMR_LAMBDA) * redundancy.get(c)!;
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    if (!best) break;
    remaining.delete(best);
    if (!acceptable(best)) {
      // A text whose best MAX_REFUSED sentences are all refused has none worth a longer search (and the verb
      // check's tagger costs milliseconds a sentence).
      if (++refused >= MAX_REFUSED) break;
      continue;
    }
    chosen.push(best);
    used += best.words;
    if (used >= budget) break;
    for (const c of remaining) redundancy.set(c, Math.max(redundancy.get(c)!, dot(c.vector, best.vector)));
  }
  if (chosen.length) return chosen;
  for (const c of byRank) {
    if (acceptable(c)) return [c];
    if (++refused >= 2 * MAX_REFUSED) break;
  }
  return [byRank[0]!];
}
