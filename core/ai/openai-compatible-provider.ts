/**
 * The OpenAI-compatible remote adapter (AI_PROVIDER=openai): the official
 * `openai` client against AI_OPENAI_BASE_URL, which serves OpenAI itself,
 * Ollama, vLLM, text-embeddings-inference, LiteLLM and other gateways that
 * speak the format.
 *  - embeddings: `POST /embeddings` with `dimensions` and
 *    `encoding_format: float`, in sub-batches of AI_OPENAI_EMBED_BATCH; every
 *    vector must have the asked dimension (else 502) and is L2-normalised;
 *  - summaries, sentiment and strict-mode entities: `POST /chat/completions`
 *    with `response_format: json_object` and temperature 0; the JSON is
 *    validated, summaries go through the same layout and word budget as the
 *    local adapter (core/ai/summary-format.ts), entity texts are located in
 *    the input to give offsets.
 * Retries are ours (the client's own are off): 408, 409, 429, 5xx, timeouts
 * and connection failures are retried up to AI_OPENAI_MAX_RETRIES times with
 * exponential backoff (0.5 s doubling, 8 s cap, 25% jitter), or after the
 * server's `Retry-After` / `retry-after-ms` when it sends one; a wait that
 * would pass the caller's deadline is not started. Each attempt's timeout is
 * AI_OPENAI_TIMEOUT_MS, cut to the time left. What still fails is a 502
 * `ai_upstream_error` (a timeout: 504 `ai_upstream_timeout`); never charged.
 * Texts are never logged.
 */
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import {
  AiUpstreamError,
  AiUpstreamTimeoutError,
  type AiProvider,
  type CallOptions,
  type EmbedOptions,
  type EmbedResult,
  type SensitiveSpan,
  type SentimentOptions,
  type SentimentResult,
  type SummarizeOptions,
  type SummaryResult,
  type TokenUsage,
} from './ai-provider.js';
import { l2Normalise } from './chunking.js';
import { resolveOverlaps } from './local/entities.js';
import { composeSummary, paragraphSentences } from './summary-format.js';

const RETRYABLE_STATUS = new Set([408, 409, 429]);
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 8000;
/** Deadline margin: a retry is not started when less than this would be left for it. */
const MIN_ATTEMPT_MS = 250;
const SENTIMENT_MAX_TEXTS = 100;
const SENTIMENT_MAX_CHARS = 600;

export interface OpenAiCompatibleOptions {
  baseURL: string;
  apiKey?: string;
  timeoutMs: number;
  maxRetries: number;
  embedBatch: number;
  models: { embedText: string; embedMultilingual: string; summarize: string; sentiment: string; redaction: string };
  logger?: Logger;
}

export function openAiOptionsFromConfig(config: Config, logger?: Logger): OpenAiCompatibleOptions {
  return {
    baseURL: config.AI_OPENAI_BASE_URL,
    ...(config.AI_OPENAI_API_KEY ? { apiKey: config.AI_OPENAI_API_KEY } : {}),
    timeoutMs: config.AI_OPENAI_TIMEOUT_MS,
    maxRetries: config.AI_OPENAI_MAX_RETRIES,
    embedBatch: config.AI_OPENAI_EMBED_BATCH,
    models: {
      embedText: config.AI_OPENAI_EMBED_TEXT_MODEL,
      embedMultilingual: config.AI_OPENAI_EMBED_MULTILINGUAL_MODEL,
      summarize: config.AI_OPENAI_SUMMARIZE_MODEL,
      sentiment: config.AI_OPENAI_SENTIMENT_MODEL,
      redaction: config.AI_OPENAI_REDACTION_MODEL,
    },
    ...(logger ? { logger } : {}),
  };
}

const abortableSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The server's requested wait (`retry-after-ms`, `Retry-After` in seconds or as an HTTP date), in ms. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/u.test(value)) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

const SummaryJson = z.object({
  summary: z.string().optional(),
  bullets: z.array(z.string()).optional(),
  headline: z.string().optional(),
  key_points: z.array(z.string()).optional(),
});
const SentimentJson = z.object({
  score: z.coerce.number().min(-1).max(1),
  confidence: z.coerce.number().min(0).max(1),
  texts_with_signal: z.coerce.number().int().min(0).optional(),
  signals: z
    .array(
      z.object({
        signal: z.string().min(1),
        direction: z.enum(['bullish', 'bearish', 'neutral']),
        weight: z.coerce.number().min(0).optional(),
      }),
    )
    .default([]),
});
const EntitiesJson = z.object({
  entities: z.array(z.object({ text: z.string(), kind: z.enum(['NAME', 'BIO']) })).default([]),
});

export class OpenAiCompatibleProvider implements AiProvider {
  readonly adapter = 'openai' as const;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.client = new OpenAI({
      baseURL: options.baseURL,
      // Servers such as Ollama or vLLM take no key; the client insists on one.
      apiKey: options.apiKey ?? 'no-key',
      timeout: options.timeoutMs,
      maxRetries: 0,
    });
  }

  async embed(texts: string[], options: EmbedOptions): Promise<EmbedResult> {
    const model = options.route === 'text' ? this.options.models.embedText : this.options.models.embedMultilingual;
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    const usage: TokenUsage = { prompt_tokens: 0, total_tokens: 0 };
    let served = model;
    for (let from = 0; from < texts.length; from += this.options.embedBatch) {
      const batch = texts.slice(from, from + this.options.embedBatch);
      const res = await this.call('embeddings', options, (requestOptions) =>
        this.client.embeddings.create(
          { model, input: batch, dimensions: options.dimensions, encoding_format: 'float' },
          requestOptions,
        ),
      );
      if (!Array.isArray(res?.data) || res.data.length !== batch.length) {
        throw new AiUpstreamError(
          `embeddings: the server returned ${Array.isArray(res?.data) ? res.data.length : 'no'} vectors for ${batch.length} inputs`,
          { model },
        );
      }
      for (const item of res.data) {
        const index = Number(item.index);
        const embedding = item.embedding as unknown;
        if (!Number.isInteger(index) || index < 0 || index >= batch.length || !Array.isArray(embedding)) {
          throw new AiUpstreamError('embeddings: malformed item in the server response', { model });
        }
        if (embedding.length !== options.dimensions) {
          throw new AiUpstreamError(
            `embeddings: model ${model} returned ${embedding.length} dimensions instead of ${options.dimensions} (does it support \`dimensions\`?)`,
            {
              model,
              expected: options.dimensions,
              got: embedding.length,
            },
          );
        }
        vectors[from + index] = l2Normalise(Float32Array.from(embedding as number[]));
      }
      usage.prompt_tokens += res.usage?.prompt_tokens ?? 0;
      usage.total_tokens += res.usage?.total_tokens ?? res.usage?.prompt_tokens ?? 0;
      if (res.model) served = res.model;
    }
    if (vectors.some((v) => v === undefined))
      throw new AiUpstreamError('embeddings: the server skipped some inputs', { model });
    return { vectors, model: served, usage };
  }

  async summarize(text: string, options: SummarizeOptions): Promise<SummaryResult> {
    const n = options.maxWords;
    const shape = {
      bullets: `{"bullets": ["...", "..."]}: 2 to 7 bullet points, each one short sentence, at most ${n} words in total`,
      paragraph: `{"summary": "..."}: one paragraph of at most ${n} words`,
      executive: `{"headline": "...", "key_points": ["...", "..."]}: the headline is the bottom line in one sentence, then 2 to 5 key points; at most ${n} words in total`,
    }[options.format];
    const { json, model, usage } = await this.chatJson(
      this.options.models.summarize,
      `You summarize documents faithfully, without adding facts. Answer with one JSON object and nothing else: ${shape}. Write in the language of the document.`,
      `Document:\n"""\n${text}\n"""`,
      SummaryJson,
      options,
    );
    const parts =
      options.format === 'executive'
        ? { headline: json.headline ?? json.summary ?? '', points: json.key_points ?? json.bullets ?? [] }
        : options.format === 'bullets'
          ? { points: json.bullets ?? (json.summary ? paragraphSentences(json.summary) : []) }
          : { points: json.summary ? paragraphSentences(json.summary) : (json.bullets ?? []) };
    if (!parts.points.length && !('headline' in parts && parts.headline))
      throw new AiUpstreamError('summarize: the model returned an empty summary', { model });
    return { ...composeSummary(options.format, parts, n, model, text), usage };
  }

  async sentiment(texts: string[], options: SentimentOptions = {}): Promise<SentimentResult> {
    const sample = texts
      .slice(0, SENTIMENT_MAX_TEXTS)
      .map((t, i) => `${i + 1}. ${t.replace(/\s+/gu, ' ').slice(0, SENTIMENT_MAX_CHARS)}`);
    const { json, model, usage } = await this.chatJson(
      this.options.models.sentiment,
      'You are a crypto and financial market sentiment analyst. Judge how the texts read for the price outlook of their subject ' +
        '(bullish = expecting the price to rise, bearish = to fall). Answer with one JSON object and nothing else: ' +
        '{"score": -1..1 (-1 most bearish, 1 most bullish, 0 neutral), "confidence": 0..1, "texts_with_signal": number of texts that carry any sentiment, ' +
        '"signals": [{"signal": "a short quote or phrase from the texts", "direction": "bullish"|"bearish"|"neutral", "weight": 0..1 share of the evidence}]} with at most 8 signals.',
      `${options.subject ? `Subject: ${options.subject}\n` : ''}Texts:\n${sample.join('\n')}`,
      SentimentJson,
      options,
    );
    const total = json.signals.reduce((a, s) => a + (s.weight ?? 1), 0) || 1;
    return {
      score: json.score,
      confidence: json.confidence,
      texts_with_signal: Math.min(texts.length, json.texts_with_signal ?? texts.length),
      signals: json.signals.slice(0, 8).map((s) => ({
        signal: s.signal,
        direction: s.direction,
        weight: Math.round(((s.weight ?? 1) / total) * 1000) / 1000,
      })),
      model,
      usage,
    };
  }

  async findSensitiveSpans(
    text: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ spans: SensitiveSpan[]; model: string }> {
    const { json, model } = await this.chatJson(
      this.options.models.redaction,
      'You find personal information to redact. List every name of a person (NAME) and every sentence or clause that gives biographical details about a person ' +
        '(birth, upbringing, education, family, residence, age, occupation or employment history) (BIO). Copy each one exactly as it appears in the text. ' +
        'Answer with one JSON object and nothing else: {"entities": [{"text": "...", "kind": "NAME"|"BIO"}]}. Do not list companies, products or places on their own.',
      `Text:\n"""\n${text}\n"""`,
      EntitiesJson,
      options,
    );
    const spans: SensitiveSpan[] = [];
    for (const e of json.entities)
      for (const [start, end] of locate(text, e.text)) spans.push({ start, end, kind: e.kind });
    return { spans: resolveOverlaps(spans), model };
  }

  private async chatJson<T>(
    model: string,
    system: string,
    user: string,
    schema: z.ZodType<T>,
    options: CallOptions,
  ): Promise<{ json: T; model: string; usage?: TokenUsage }> {
    const res = await this.call('chat/completions', options, (requestOptions) =>
      this.client.chat.completions.create(
        {
          model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
        },
        requestOptions,
      ),
    );
    const content = res?.choices?.[0]?.message?.content;
    if (typeof content !== 'string' || !content.trim())
      throw new AiUpstreamError('chat/completions: the model returned no content', { model });
    let parsed: unknown;
    try {
      parsed = JSON.parse(
        content
          .trim()
          .replace(/^```(?:json)?\s*/u, '')
          .replace(/\s*```$/u, ''),
      );
    } catch {
      throw new AiUpstreamError('chat/completions: the model did not return JSON', { model });
    }
    const checked = schema.safeParse(parsed);
    if (!checked.success)
      throw new AiUpstreamError(
        `chat/completions: unexpected JSON from the model (${checked.error.issues[0]?.message ?? 'invalid'})`,
        { model },
      );
    return {
      json: checked.data,
      model: res.model || model,
      ...(res.usage ? { usage: { prompt_tokens: res.usage.prompt_tokens, total_tokens: res.usage.total_tokens } } : {}),
    };
  }

  /** One request with our retries, timeouts and error mapping. */
  private async call<T>(
    endpoint: string,
    options: CallOptions,
    request: (requestOptions: { signal?: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const { signal, deadline } = options;
    for (let attempt = 1; ; attempt++) {
      const left = deadline === undefined ? Infinity : deadline - Date.now();
      const timeout = Math.max(1, Math.floor(Math.min(this.options.timeoutMs, left)));
      try {
        return await request({ ...(signal ? { signal } : {}), timeout });
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        if (err instanceof APIUserAbortError) throw err;
        const status = err instanceof APIError ? err.status : undefined;
        const timedOut = err instanceof APIConnectionTimeoutError;
        const retryable = timedOut || status === undefined || RETRYABLE_STATUS.has(status) || status >= 500;
        const details = { endpoint, attempts: attempt, ...(status !== undefined ? { upstream_status: status } : {}) };
        const fail = (why: string) =>
          timedOut
            ? new AiUpstreamTimeoutError(`${endpoint}: no answer within ${timeout} ms (${why})`, details)
            : new AiUpstreamError(`${endpoint}: ${describe(err)} (${why})`, details);
        if (!retryable) throw fail('not retryable');
        if (attempt > this.options.maxRetries) throw fail(`gave up after ${attempt} attempts`);
        const asked = err instanceof APIError ? retryAfterMs(err.headers) : undefined;
        const backoff = Math.min(BACKOFF_INITIAL_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS) * (1 - Math.random() * 0.25);
        const wait = asked ?? backoff;
        const remaining = deadline === undefined ? Infinity : deadline - Date.now();
        if (wait + MIN_ATTEMPT_MS > remaining)
          throw fail(`the server asked to wait ${Math.round(wait)} ms, past the deadline`);
        this.options.logger?.debug(
          { endpoint, attempt, status, wait_ms: Math.round(wait) },
          'ai: retrying upstream request',
        );
        await abortableSleep(wait, signal);
      }
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof APIError) return err.status ? `HTTP ${err.status}${err.code ? ` ${err.code}` : ''}` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Every occurrence of `needle` in `text` (exact, then whitespace- and case-insensitive), as [start, end). */
function locate(text: string, needle: string): [number, number][] {
  const target = needle.trim();
  if (target.length < 2) return [];
  const out: [number, number][] = [];
  for (let i = text.indexOf(target); i >= 0; i = text.indexOf(target, i + target.length))
    out.push([i, i + target.length]);
  if (out.length) return out;
  const pattern = new RegExp(
    target
      .split(/\s+/u)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'))
      .join('\\s+'),
    'giu',
  );
  for (const m of text.matchAll(pattern)) out.push([m.index, m.index + m[0].length]);
  return out;
}
