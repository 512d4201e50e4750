/**
 * AI provider port: embeddings, summaries, sentiment and the detection of
 * personal entities (names, bios) for strict-mode redaction. Two adapters,
 * chosen by configuration: an OpenAI-compatible remote (OpenAI, Ollama, vLLM,
 * text-embeddings-inference, ...) and a local default that needs no key and
 * no download at run time. Every answer names the model that produced it.
 *
 * (Issue 6 extends this interface with embeddings, summaries and sentiment.)
 */

/** A span of the input that names a person or describes one (a bio), to be redacted in strict mode. */
export interface SensitiveSpan {
  /** UTF-16 offsets into the input, `end` exclusive. */
  start: number;
  end: number;
  kind: 'NAME' | 'BIO';
}

export interface AiProvider {
  readonly adapter: 'local' | 'openai';
  /** Names and bios in `text`; never logs or keeps the text. */
  findSensitiveSpans(text: string, options?: { signal?: AbortSignal }): Promise<{ spans: SensitiveSpan[]; model: string }>;
  close?(): Promise<void>;
}
