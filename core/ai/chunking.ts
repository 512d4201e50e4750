/**
 * Context limit of the embedding routes: a text longer than the limit
 * (estimated tokens, core/ai/text.ts) is cut into chunks at sentence
 * boundaries (a sentence longer than the limit at word boundaries), each
 * chunk is embedded, and the text's vector is the mean of its chunk vectors
 * weighted by their token counts, L2-normalised again. Short texts are one
 * chunk, so their vector is the model's own. The same for both adapters.
 */
import { estimateTokens, splitSentences, wordSegments } from './text.js';

export interface Chunk {
  text: string;
  tokens: number;
}

/** `text` cut into chunks of at most `maxTokens` estimated tokens (at least one chunk). */
export function chunkText(text: string, maxTokens: number): Chunk[] {
  const whole = estimateTokens(text);
  if (whole <= maxTokens) return [{ text, tokens: whole }];
  const chunks: Chunk[] = [];
  let current: string[] = [];
  let currentTokens = 0;
  const flush = () => {
    if (current.length) chunks.push({ text: current.join(' '), tokens: currentTokens });
    current = [];
    currentTokens = 0;
  };
  for (const sentence of splitSentences(text)) {
    const t = estimateTokens(sentence.text);
    if (t > maxTokens) {
      flush();
      for (const piece of splitLongSentence(sentence.text, maxTokens)) chunks.push(piece);
      continue;
    }
    if (currentTokens + t > maxTokens) flush();
    current.push(sentence.text);
    currentTokens += t;
  }
  flush();
  return chunks.length ? chunks : [{ text, tokens: whole }];
}

/** A sentence longer than the limit, cut between words. */
function splitLongSentence(sentence: string, maxTokens: number): Chunk[] {
  const out: Chunk[] = [];
  let start = 0;
  let tokens = 0;
  let lastEnd = 0;
  for (const w of wordSegments(sentence)) {
    const t = Math.max(1, Math.ceil(Buffer.byteLength(w.word, 'utf8') / 4)) + 1;
    if (tokens + t > maxTokens && lastEnd > start) {
      const text = sentence.slice(start, lastEnd).trim();
      if (text) out.push({ text, tokens: estimateTokens(text) });
      start = w.index;
      tokens = 0;
    }
    tokens += t;
    lastEnd = w.index + w.word.length;
  }
  const rest = sentence.slice(start).trim();
  if (rest) out.push({ text: rest, tokens: estimateTokens(rest) });
  return out;
}

/** Mean of unit vectors weighted by `weights`, L2-normalised (a zero mean stays zero). */
export function poolVectors(vectors: Float32Array[], weights: number[]): Float32Array {
  const first = vectors[0];
  if (!first) throw new TypeError('poolVectors: no vectors');
  if (vectors.length === 1) return first;
  const out = new Float32Array(first.length);
  vectors.forEach((v, i) => {
    const w = weights[i] ?? 1;
    for (let d = 0; d < out.length; d++) out[d]! += w * v[d]!;
  });
  return l2Normalise(out);
}

/** Scales `v` to unit length in place (a zero vector stays zero) and returns it. */
export function l2Normalise(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const k = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i]! *= k;
  }
  return v;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}
