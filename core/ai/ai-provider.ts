/**
 * AI provider port: embeddings, summaries, sentiment and the detection of
 * personal entities (names, bios) for strict-mode redaction. Two adapters,
 * chosen by configuration (AI_PROVIDER, core/ai/create-ai-provider.ts): an
 * OpenAI-compatible remote (OpenAI, Ollama, vLLM, text-embeddings-inference,
 * ...) and a local default that needs no key and no download at run time.
 * Every answer names the model that produced it.
 *
 * Semantics both adapters honour (test/unit/ai-*.test.ts,
 * test/integration/openai-provider.test.ts):
 *  - `embed`: one L2-normalised vector of exactly `dimensions` numbers per
 *    input, in input order; the caller chunks long text (core/ai/chunking.ts);
 *  - `summarize`: the requested format, at most `maxWords` words as counted by
 *    `countWords` (core/ai/summary-format.ts);
 *  - `sentiment`: a score in [-1, 1], a confidence in [0, 1] and the signals
 *    behind them;
 *  - an upstream that keeps failing is an `AiUpstreamError` (502
 *    `ai_upstream_error`), a timeout an `AiUpstreamTimeoutError` (504); neither
 *    is charged. `signal` aborts the work.
 *  - nothing is logged or kept of the texts.
 */
import { AppError } from '../errors.js';

/** A span of the input that names a person or describes one (a bio), to be redacted in strict mode. */
export interface SensitiveSpan {
  /** UTF-16 offsets into the input, `end` exclusive. */
  start: number;
  end: number;
  kind: 'NAME' | 'BIO';
}

/** Which embedding route: `text` (English-first, 768-d) or `multilingual` (1024-d). */
export type EmbeddingRoute = 'text' | 'multilingual';

/** What every call may carry: the caller's abort signal and deadline (epoch ms; retries never wait past it). */
export interface CallOptions {
  signal?: AbortSignal;
  deadline?: number;
}

export interface EmbedOptions extends CallOptions {
  route: EmbeddingRoute;
  dimensions: number;
}

export interface TokenUsage {
  prompt_tokens: number;
  total_tokens: number;
}

export interface EmbedResult {
  /** One unit-length vector per input, in input order. */
  vectors: Float32Array[];
  model: string;
  usage: TokenUsage;
}

export type SummaryFormat = 'bullets' | 'paragraph' | 'executive';

export interface SummarizeOptions extends CallOptions {
  format: SummaryFormat;
  /** Word budget of the whole summary (countWords). */
  maxWords: number;
}

export interface SummaryResult {
  format: SummaryFormat;
  /** The summary text: Markdown list items for `bullets`; a lead line then `Key points:` items for `executive`. */
  summary: string;
  /** The bullet points (`bullets`) or key points (`executive`); empty for `paragraph`. */
  bullets: string[];
  /** The lead sentence (`executive`); absent otherwise. */
  headline?: string;
  word_count: number;
  model: string;
  usage?: TokenUsage;
}

export type SignalDirection = 'bullish' | 'bearish' | 'neutral';

export interface SentimentSignal {
  signal: string;
  direction: SignalDirection;
  /** Share of the evidence, 0..1 (the weights of one result sum to 1 when there is evidence). */
  weight: number;
}

export interface SentimentOptions extends CallOptions {
  /** What the texts are about (a ticker or topic), when known: the remote model is told. */
  subject?: string;
}

export interface SentimentResult {
  /** -1 (most bearish) .. 1 (most bullish). */
  score: number;
  confidence: number;
  /** How many texts carried any sentiment evidence. */
  texts_with_signal: number;
  signals: SentimentSignal[];
  model: string;
  usage?: TokenUsage;
}

export interface AiProvider {
  readonly adapter: 'local' | 'openai';
  /**
   * Names and bios in `text`; never logs or keeps the text. Spans are sorted
   * by `start` and do not overlap (a name inside a bio sentence is part of
   * the BIO span).
   */
  findSensitiveSpans(
    text: string,
    options?: { signal?: AbortSignal },
  ): Promise<{ spans: SensitiveSpan[]; model: string }>;
  /** Dense embeddings of `texts` (each within the caller's context limit). */
  embed(texts: string[], options: EmbedOptions): Promise<EmbedResult>;
  /** A summary of `text` in `format` within `maxWords` words. */
  summarize(text: string, options: SummarizeOptions): Promise<SummaryResult>;
  /** Market sentiment of one text or a set of posts about one subject, scored together. */
  sentiment(texts: string[], options?: SentimentOptions): Promise<SentimentResult>;
  close?(): Promise<void>;
}

/** The upstream model service failed (after retries): 502, never charged. */
export class AiUpstreamError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('ai_upstream_error', message, 502, details);
    this.name = 'AiUpstreamError';
  }
}

/** The upstream model service did not answer in time: 504, never charged. */
export class AiUpstreamTimeoutError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('ai_upstream_timeout', message, 504, details);
    this.name = 'AiUpstreamTimeoutError';
  }
}
