/**
 * The OpenAI-compatible adapter (core/ai/openai-compatible-provider.ts)
 * against a loopback server speaking OpenAI's wire format
 * (test/helpers/openai-server.ts): what it sends (model per SKU,
 * `dimensions`, float encoding, bearer key, JSON mode), how it reads the
 * answers (vector order by `index`, normalisation, usage, sub-batches, JSON
 * validation, entity offsets), and how it fails: 429 honouring Retry-After,
 * 5xx with backoff then success, persistent failure as 502
 * `ai_upstream_error`, non-retryable 4xx at once, a Retry-After past the
 * deadline without waiting, timeouts as 504, an abort at once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AiUpstreamError, AiUpstreamTimeoutError } from '../../core/ai/ai-provider.js';
import {
  OpenAiCompatibleProvider,
  retryAfterMs,
  type OpenAiCompatibleOptions,
} from '../../core/ai/openai-compatible-provider.js';
import { countWords } from '../../core/ai/text.js';
import { OpenAiServer, fakeVector } from '../helpers/openai-server.js';

/** A document longer than any summary the stand-in model writes (a summary is never longer than its input). */
const DOCUMENT = `some document about market structure. ${'Spreads between the exchange and the pools widen around the US open, when the exchange moves first and the pools wait for arbitrageurs; gas stays cheap, so the cost of closing the gap does not explain it. '.repeat(6)}`;

const server = new OpenAiServer();
const MODELS = {
  embedText: 'emb-small',
  embedMultilingual: 'emb-large',
  summarize: 'chat-sum',
  sentiment: 'chat-sent',
  redaction: 'chat-red',
};

function provider(over: Partial<OpenAiCompatibleOptions> = {}): OpenAiCompatibleProvider {
  return new OpenAiCompatibleProvider({
    baseURL: server.baseURL,
    apiKey: 'sk-test-123',
    timeoutMs: 5000,
    maxRetries: 2,
    embedBatch: 64,
    models: MODELS,
    ...over,
  });
}

const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((a, x) => a + x * x, 0));

beforeAll(async () => {
  await server.start();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(() => server.reset({}));

describe('OpenAI-compatible adapter: requests and answers', () => {
  it('embeds with the route model, explicit dimensions and float encoding, in input order, unit length, with usage', async () => {
    server.reset({ shuffle: true });
    const texts = ['alpha beta', 'gamma', 'delta epsilon zeta'];
    const r = await provider().embed(texts, { route: 'text', dimensions: 768 });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe('/v1/embeddings');
    expect(req.headers.authorization).toBe('Bearer sk-test-123');
    expect(req.body).toMatchObject({ model: 'emb-small', input: texts, dimensions: 768, encoding_format: 'float' });
    expect(r.vectors).toHaveLength(3);
    texts.forEach((t, i) => {
      const expected = fakeVector(t, 768);
      const n = norm(expected);
      expect(r.vectors[i]!.length).toBe(768);
      expect(norm(r.vectors[i]!)).toBeCloseTo(1, 5);
      expect(r.vectors[i]![0]).toBeCloseTo(expected[0]! / n, 5); // matched by index despite the reversed order
    });
    expect(r.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(r.model).toBe('emb-small');

    const m = await provider().embed(['un texte'], { route: 'multilingual', dimensions: 1024 });
    expect(server.requests[1]!.body).toMatchObject({ model: 'emb-large', dimensions: 1024 });
    expect(m.vectors[0]!.length).toBe(1024);
  });

  it('splits large batches into several requests and keeps the order', async () => {
    const texts = ['a1', 'b2', 'c3', 'd4', 'e5'];
    const r = await provider({ embedBatch: 2 }).embed(texts, { route: 'text', dimensions: 8 });
    expect(server.requests.map((q) => (q.body.input as string[]).length)).toEqual([2, 2, 1]);
    const n = norm(fakeVector('e5', 8));
    expect(r.vectors[4]![3]).toBeCloseTo(fakeVector('e5', 8)[3]! / n, 5);
  });

  it('a model that ignores `dimensions` is a 502 naming the mismatch', async () => {
    server.reset({ vectorLength: 1536 });
    const err = await provider()
      .embed(['x'], { route: 'text', dimensions: 768 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiUpstreamError);
    expect(err).toMatchObject({ status: 502, code: 'ai_upstream_error', details: { expected: 768, got: 1536 } });
  });

  it('summaries ask for JSON with the word budget and are held to it in every format', async () => {
    const long =
      'The spread widened sharply at the open while the pools lagged behind the exchange for several minutes.';
    server.reset({
      chat: (req) => {
        const system = req.messages[0]!.content;
        if (system.includes('"bullets"')) return JSON.stringify({ bullets: [long, long, long, long] });
        if (system.includes('"headline"'))
          return JSON.stringify({ headline: 'Spreads widen at the open.', key_points: [long, long, long] });
        return JSON.stringify({ summary: `${long} ${long} ${long}` });
      },
    });
    const p = provider();
    const bullets = await p.summarize(DOCUMENT, { format: 'bullets', maxWords: 40 });
    const req = server.requests[0]!.body as {
      model: string;
      temperature: number;
      response_format: unknown;
      messages: { content: string }[];
    };
    expect(req.model).toBe('chat-sum');
    expect(req.temperature).toBe(0);
    expect(req.response_format).toEqual({ type: 'json_object' });
    expect(req.messages[0]!.content).toContain('at most 40 words');
    expect(req.messages[1]!.content).toContain('some document');
    expect(bullets.format).toBe('bullets');
    expect(bullets.bullets).toHaveLength(2); // 18 words each: two fit in 40
    expect(bullets.summary.split('\n').every((l) => l.startsWith('- '))).toBe(true);
    expect(bullets.word_count).toBe(countWords(bullets.summary));
    expect(bullets.word_count).toBeLessThanOrEqual(40);
    expect(bullets.model).toBe('chat-sum');

    const paragraph = await p.summarize(DOCUMENT, { format: 'paragraph', maxWords: 25 });
    expect(paragraph.bullets).toEqual([]);
    expect(paragraph.summary).not.toContain('\n');
    expect(paragraph.word_count).toBeLessThanOrEqual(25);

    const exec = await p.summarize(DOCUMENT, { format: 'executive', maxWords: 30 });
    expect(exec.headline).toBe('Spreads widen at the open.');
    expect(exec.summary.startsWith('Spreads widen at the open.\n\nKey points:\n- ')).toBe(true);
    expect(exec.word_count).toBeLessThanOrEqual(30);
  });

  it('sentiment: the subject and texts go to the sentiment model; the JSON verdict comes back with normalised weights', async () => {
    server.reset({
      chat: () =>
        JSON.stringify({
          score: -0.6,
          confidence: 0.8,
          texts_with_signal: 2,
          signals: [
            { signal: 'rug pull', direction: 'bearish', weight: 3 },
            { signal: 'ETF inflows', direction: 'bullish', weight: 1 },
          ],
        }),
    });
    const r = await provider().sentiment(['the dev rugged', 'ETF inflows are strong'], { subject: 'ETH' });
    const req = server.requests[0]!.body as { model: string; messages: { content: string }[] };
    expect(req.model).toBe('chat-sent');
    expect(req.messages[1]!.content).toContain('Subject: ETH');
    expect(req.messages[1]!.content).toContain('2. ETF inflows are strong');
    expect(r).toMatchObject({ score: -0.6, confidence: 0.8, texts_with_signal: 2, model: 'chat-sent' });
    expect(r.signals).toEqual([
      { signal: 'rug pull', direction: 'bearish', weight: 0.75 },
      { signal: 'ETF inflows', direction: 'bullish', weight: 0.25 },
    ]);
  });

  it('strict-mode entities: every occurrence is located, bios absorb the names inside them', async () => {
    const text = 'Ask Anna Lee. Anna Lee was born in Oslo and studied law. Anna Lee agrees.';
    server.reset({
      chat: () =>
        JSON.stringify({
          entities: [
            { text: 'Anna Lee', kind: 'NAME' },
            { text: 'Anna Lee was born in Oslo and studied law.', kind: 'BIO' },
            { text: 'Nobody Here', kind: 'NAME' },
          ],
        }),
    });
    const r = await provider().findSensitiveSpans(text);
    expect((server.requests[0]!.body as { model: string }).model).toBe('chat-red');
    expect(r.model).toBe('chat-red');
    expect(r.spans.map((s) => [text.slice(s.start, s.end), s.kind])).toEqual([
      ['Anna Lee', 'NAME'],
      ['Anna Lee was born in Oslo and studied law.', 'BIO'],
      ['Anna Lee', 'NAME'],
    ]);
  });

  it('a model answer that is not the asked JSON is a 502', async () => {
    server.reset({ chat: () => 'Sure! Here is a summary: things happened.' });
    await expect(provider().summarize(DOCUMENT, { format: 'paragraph', maxWords: 20 })).rejects.toMatchObject({
      status: 502,
      code: 'ai_upstream_error',
    });
    server.reset({ chat: () => JSON.stringify({ score: 7, confidence: 0.5 }) });
    await expect(provider().sentiment(['x'])).rejects.toMatchObject({ status: 502, code: 'ai_upstream_error' });
  });
});

describe('OpenAI-compatible adapter: retries and failures', () => {
  it('429 with Retry-After: waits what the server asked, then succeeds', async () => {
    server.failNext({ status: 429, headers: { 'retry-after': '1' } });
    const t0 = Date.now();
    const r = await provider().embed(['x'], { route: 'text', dimensions: 4 });
    expect(r.vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    console.log(`429 Retry-After: 1 -> retried after ${gap} ms (total ${Date.now() - t0} ms)`);
    expect(gap).toBeGreaterThanOrEqual(950);
    // Not its own much longer wait (Retry-After read as minutes, or a backoff on top); room for a busy machine.
    expect(gap).toBeLessThan(10_000);
  });

  it('5xx then success: retried with exponential backoff', async () => {
    server.reset({ chat: () => JSON.stringify({ summary: 'Spreads widened at the open.' }) });
    server.failNext({ status: 503 }, { status: 500 });
    const r = await provider().summarize(DOCUMENT, { format: 'paragraph', maxWords: 10 });
    expect(r.summary).toBe('Spreads widened at the open.');
    expect(server.requests).toHaveLength(3);
    const gaps = [server.requests[1]!.at - server.requests[0]!.at, server.requests[2]!.at - server.requests[1]!.at];
    console.log(`503, 500 then 200: backoff gaps ${gaps.join(' ms, ')} ms`);
    expect(gaps[0]).toBeGreaterThanOrEqual(370); // 500 ms - 25% jitter
    expect(gaps[1]).toBeGreaterThanOrEqual(740); // 1000 ms - 25% jitter
  });

  it('persistent 5xx: gives up after the retries with a 502 ai_upstream_error', async () => {
    server.failAlways({ status: 500 });
    const err = await provider({ maxRetries: 2 })
      .embed(['x'], { route: 'text', dimensions: 4 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiUpstreamError);
    expect(err).toMatchObject({
      status: 502,
      code: 'ai_upstream_error',
      details: { upstream_status: 500, attempts: 3, endpoint: 'embeddings' },
    });
    expect(server.requests).toHaveLength(3);
  });

  it('a non-retryable 4xx (bad key) is a 502 at once', async () => {
    server.failAlways({ status: 401 });
    const err = await provider()
      .embed(['x'], { route: 'text', dimensions: 4 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      status: 502,
      code: 'ai_upstream_error',
      details: { upstream_status: 401, attempts: 1 },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a Retry-After that would pass the deadline fails at once instead of waiting', async () => {
    server.failNext({ status: 429, headers: { 'retry-after': '30' } });
    const t0 = Date.now();
    // Retry-After 30 s against a 20 s deadline: "at once" is well before the deadline, with room for a busy machine.
    const err = await provider()
      .embed(['x'], { route: 'text', dimensions: 4, deadline: Date.now() + 20_000 })
      .catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toMatchObject({ status: 502, code: 'ai_upstream_error', details: { upstream_status: 429 } });
    expect((err as Error).message).toContain('past the deadline');
  });

  it('a server that does not answer in time is a 504 ai_upstream_timeout after the retries', async () => {
    // The server would answer after 30 s; two attempts of 250 ms and a backoff take about a second.
    server.failAlways({ hangMs: 30_000 });
    const t0 = Date.now();
    const err = await provider({ timeoutMs: 250, maxRetries: 1 })
      .embed(['x'], { route: 'text', dimensions: 4 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiUpstreamTimeoutError);
    expect(err).toMatchObject({ status: 504, code: 'ai_upstream_timeout', details: { attempts: 2 } });
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('an abort stops the call (and its backoff) at once', async () => {
    server.failAlways({ status: 503 });
    const controller = new AbortController();
    const t0 = Date.now();
    setTimeout(() => controller.abort(new Error('caller gave up')), 200);
    const err = await provider({ maxRetries: 5 })
      .embed(['x'], { route: 'text', dimensions: 4, signal: controller.signal })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('caller gave up');
    // Five retries with their backoffs (0.5 + 1 + 2 + 4 + 8 s, less 25 % jitter) would take over 11 s.
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }), now)).toBe(150);
    expect(retryAfterMs(new Headers({}), now)).toBeUndefined();
  });
});
