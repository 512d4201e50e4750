/**
 * x-sentiment: Bullish, Bearish or Neutral for a ticker, topic or text
 * sample, from up to three inputs, each scored in [-1, 1] with a confidence:
 *  - `text`: the topic itself when it is a text sample (six words or more),
 *    scored by the AI provider (local lexicon-and-rules scorer or a remote
 *    chat model); also the fallback when nothing else is available;
 *  - `x_posts`: recent X posts for a ticker or topic when AI_X_BEARER_TOKEN
 *    is set (jobs/x-sentiment/x-client.ts), scored together by the provider;
 *  - `market`: for a pair the gateway ingests, its own telemetry: price
 *    change, spread and dislocation trend (jobs/x-sentiment/market-signals.ts).
 * Combined score = Σ wᵢ·scoreᵢ / Σ wᵢ with wᵢ = baseᵢ × confidenceᵢ (base:
 * text 1, x_posts 1, market 0.8); confidence = the weighted mean confidence,
 * +0.1 when the inputs agree in sign, ×0.75 when they disagree. Label:
 * Bullish above +0.2, Bearish below -0.2. Key signals carry their input's
 * share of the weight. The response lists the inputs used and those that
 * could not be (with the reason). X failing with no other input: 502
 * `x_upstream_error` (never charged).
 */
import type { z } from 'zod';
import type { XSentimentOutput, XSentimentRequest } from './sku.js';
import type { AiProvider, SentimentSignal } from '../../core/ai/ai-provider.js';
import { requireAi } from '../../core/ai/create-ai-provider.js';
import { labelOf } from '../../core/ai/local/sentiment.js';
import { errorMessage } from '../../core/errors.js';
import { JobError } from '../../core/queue/queue.js';
import type { ProcessorDeps, ProcessorFactory } from '../sku-processor.js';
import { readMarketSignals, type MarketBlock } from './market-signals.js';
import { parseTopic } from './topic.js';
import { XApiError, XRecentSearch } from './x-client.js';

type Output = z.infer<typeof XSentimentOutput>;
type InputKind = 'text' | 'x_posts' | 'market';

interface Component {
  from: InputKind;
  score: number;
  confidence: number;
  base: number;
  signals: SentimentSignal[];
}

const BASE: Record<InputKind, number> = { text: 1, x_posts: 1, market: 0.8 };
const INPUT_ORDER: InputKind[] = ['text', 'x_posts', 'market'];
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function combine(components: Component[]): {
  score: number;
  confidence: number;
  key_signals: Output['key_signals'];
} {
  const weights = components.map((c) => c.base * Math.max(0.05, c.confidence));
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  const score = components.reduce((a, c, i) => a + c.score * weights[i]!, 0) / total;
  let confidence = components.reduce((a, c, i) => a + c.confidence * weights[i]!, 0) / total;
  const signs = new Set(components.filter((c) => Math.abs(c.score) > 0.1).map((c) => Math.sign(c.score)));
  if (components.length > 1) confidence = signs.size > 1 ? confidence * 0.75 : Math.min(1, confidence + 0.1);
  const merged = components.flatMap((c, i) =>
    c.signals.map((s) => ({ ...s, weight: s.weight * (weights[i]! / total), from: c.from })),
  );
  merged.sort((a, b) => b.weight - a.weight);
  const top = merged.slice(0, 10);
  const sum = top.reduce((a, s) => a + s.weight, 0) || 1;
  return {
    score: round3(Math.max(-1, Math.min(1, score))),
    confidence: round3(Math.max(0, Math.min(1, confidence))),
    key_signals: top.map((s) => ({
      signal: s.signal,
      direction: s.direction,
      weight: round3(s.weight / sum),
      from: s.from,
    })),
  };
}

export const createXSentimentProcessor: ProcessorFactory<XSentimentRequest, Output> = async (deps: ProcessorDeps) => {
  const ai: AiProvider = requireAi(deps, 'x-sentiment');
  const { config } = deps;
  const x = config.AI_X_BEARER_TOKEN
    ? new XRecentSearch({
        baseUrl: config.AI_X_API_BASE_URL,
        bearerToken: config.AI_X_BEARER_TOKEN,
        timeoutMs: config.AI_X_TIMEOUT_MS,
        maxResults: config.AI_X_MAX_RESULTS,
      })
    : undefined;

  return {
    handle: async (input, ctx) => {
      if (!/[\p{L}\p{N}\p{Extended_Pictographic}]/u.test(input.topic)) {
        throw new JobError('empty_topic', 'topic has no letters, digits or emoji to score', 400, { field: 'topic' });
      }
      const topic = parseTopic(input.topic, deps.pairs);
      const call = { signal: ctx.signal, deadline: ctx.deadline };
      const components: Component[] = [];
      const unavailable: Output['signals_unavailable'] = [];
      let posts = 0;
      let model: string | undefined;
      let market: MarketBlock | null = null;

      const marketTask = (async () => {
        if (!topic.pair) {
          if (topic.kind === 'ticker')
            unavailable.push({
              signal: 'market',
              reason: `${topic.symbol ?? input.topic} is not a pair this gateway ingests`,
            });
          return;
        }
        if (!deps.store) {
          unavailable.push({ signal: 'market', reason: 'this worker has no store (set STORE)' });
          return;
        }
        try {
          const reading = await readMarketSignals(deps.store, config, topic.pair, Date.now());
          if (!reading.available) {
            unavailable.push({ signal: 'market', reason: reading.reason });
            return;
          }
          market = reading.market;
          components.push({
            from: 'market',
            score: reading.score,
            confidence: reading.confidence,
            base: BASE.market,
            signals: reading.signals,
          });
        } catch (err) {
          deps.logger.warn({ err: errorMessage(err), pair: topic.pair.pair }, 'x-sentiment: market signals failed');
          unavailable.push({ signal: 'market', reason: 'the telemetry store did not answer' });
        }
      })();

      let xError: string | undefined;
      const postsTask = (async () => {
        if (topic.kind === 'text' || !topic.query) return;
        if (!x) {
          unavailable.push({ signal: 'x_posts', reason: 'the X API is not configured (AI_X_BEARER_TOKEN)' });
          return;
        }
        try {
          const found = await x.search(topic.query, ctx.signal);
          if (!found.length) {
            unavailable.push({ signal: 'x_posts', reason: 'no recent posts matched' });
            return;
          }
          posts = found.length;
          const r = await ai.sentiment(
            found.map((p) => p.text),
            { ...call, subject: topic.symbol ?? input.topic },
          );
          model = r.model;
          components.push({
            from: 'x_posts',
            score: r.score,
            confidence: r.confidence,
            base: BASE.x_posts,
            signals: r.signals,
          });
        } catch (err) {
          if (!(err instanceof XApiError)) throw err;
          xError = err.message;
          unavailable.push({ signal: 'x_posts', reason: err.message });
        }
      })();

      await Promise.all([marketTask, postsTask]);

      if (topic.kind === 'text' || components.length === 0) {
        if (topic.kind !== 'text' && xError && !components.length) {
          throw new JobError(
            'x_upstream_error',
            `x-sentiment: the X API failed and no other signal is available for "${input.topic}": ${xError}`,
            502,
            { field: 'topic' },
          );
        }
        const r = await ai.sentiment([input.topic], { ...call, ...(topic.symbol ? { subject: topic.symbol } : {}) });
        model ??= r.model;
        components.unshift({
          from: 'text',
          score: r.score,
          confidence: r.confidence,
          base: BASE.text,
          signals: r.signals,
        });
      }

      const combined = combine(components);
      const used = INPUT_ORDER.filter((k) => components.some((c) => c.from === k));
      return {
        success: true,
        topic: input.topic,
        kind: topic.kind,
        pair: topic.pair?.pair ?? null,
        sentiment: labelOf(combined.score),
        score: combined.score,
        confidence: combined.confidence,
        key_signals: combined.key_signals,
        signals_used: used,
        signals_unavailable: unavailable.sort((a, b) => a.signal.localeCompare(b.signal)),
        posts_analyzed: posts,
        market,
        model: model ?? (used.includes('market') && used.length === 1 ? 'market-telemetry-rules-v1' : 'unknown'),
        source: used.join('+'),
      };
    },
  };
};
