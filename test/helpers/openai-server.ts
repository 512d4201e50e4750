/**
 * A loopback HTTP server speaking the OpenAI REST format (the subset an
 * OpenAI-compatible gateway serves): `POST /v1/embeddings` and
 * `POST /v1/chat/completions`, with OpenAI's response and error bodies
 * (`{ error: { message, type, param, code } }`). Tests script failures
 * (status, headers such as Retry-After, a hang) for the next requests and
 * read back every request it received with its arrival time.
 *
 * Embeddings are deterministic pseudo-random unit-free vectors seeded by the
 * input text (so order mistakes show), of the requested `dimensions` unless
 * the test overrides the length. Chat answers come from a test-provided
 * function of the request body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}

export type Failure = { status: number; headers?: Record<string, string>; body?: unknown } | { hangMs: number };

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
  temperature?: number;
}

export interface OpenAiServerOptions {
  /** Content of the assistant message for a chat request (a JSON string for JSON mode). */
  chat?: (request: ChatRequest) => string;
  /** Force the length of returned vectors (e.g. to test a dimension mismatch). */
  vectorLength?: number;
  /** Return the `data` items in reverse order (clients must use `index`). */
  shuffle?: boolean;
  /** Model name the server reports; default: the requested model. */
  servedModel?: string;
}

/** Deterministic vector for a text (xorshift seeded by FNV-1a of the text). */
export function fakeVector(text: string, length: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  let x = h || 1;
  const out: number[] = [];
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.push((x / 0xffffffff) * 2 - 1);
  }
  return out;
}

export class OpenAiServer {
  readonly requests: RecordedRequest[] = [];
  private failures: Failure[] = [];
  private server?: Server;
  url = '';

  constructor(public options: OpenAiServerOptions = {}) {}

  /** Base URL as an OpenAI client wants it (`.../v1`). */
  get baseURL(): string {
    return `${this.url}/v1`;
  }

  /** The next `failures.length` requests fail in this order; later ones succeed. */
  failNext(...failures: Failure[]): void {
    this.failures.push(...failures);
  }

  /** Every following request fails like this (until `reset`). */
  failAlways(failure: Failure): void {
    this.failures = Array.from({ length: 1000 }, () => failure);
  }

  reset(options: OpenAiServerOptions = this.options): void {
    this.failures = [];
    this.requests.length = 0;
    this.options = options;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return this.error(res, 400, 'invalid_request_error', 'We could not parse the JSON body of your request.', null);
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    this.requests.push({ method: req.method ?? '', path, headers: req.headers, body, at: Date.now() });
    const failure = this.failures.shift();
    if (failure) {
      if ('hangMs' in failure) {
        await new Promise((r) => setTimeout(r, failure.hangMs));
        if (res.destroyed) return;
      } else {
        res.writeHead(failure.status, { 'content-type': 'application/json', ...(failure.headers ?? {}) });
        res.end(JSON.stringify(failure.body ?? openAiError(failure.status)));
        return;
      }
    }
    if (req.method === 'POST' && path === '/v1/embeddings') return this.embeddings(body, res);
    if (req.method === 'POST' && path === '/v1/chat/completions') return this.chat(body as unknown as ChatRequest, res);
    this.error(res, 404, 'invalid_request_error', `Unknown request URL: ${req.method} ${path}.`, 'unknown_url');
  }

  private embeddings(body: Record<string, unknown>, res: ServerResponse): void {
    const input = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string')) {
      return this.error(res, 400, 'invalid_request_error', "'input' must be a string or an array of strings", null);
    }
    const dims = typeof body.dimensions === 'number' ? body.dimensions : 1536;
    const length = this.options.vectorLength ?? dims;
    const data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, length) }));
    if (this.options.shuffle) data.reverse();
    const tokens = input.reduce((a, t) => a + t.split(/\s+/u).filter(Boolean).length, 0);
    this.json(res, 200, {
      object: 'list',
      data,
      model: this.options.servedModel ?? body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  private chat(body: ChatRequest, res: ServerResponse): void {
    const content = this.options.chat?.(body) ?? '{}';
    const prompt = body.messages.reduce((a, m) => a + m.content.split(/\s+/u).length, 0);
    this.json(res, 200, {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.options.servedModel ?? body.model,
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: content.split(/\s+/u).length,
        total_tokens: prompt + content.split(/\s+/u).length,
      },
    });
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${this.requests.length}` });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, type: string, message: string, code: string | null): void {
    this.json(res, status, { error: { message, type, param: null, code } });
  }
}

/** OpenAI's error body for a status. */
export function openAiError(status: number): unknown {
  if (status === 429)
    return {
      error: {
        message: 'Rate limit reached for requests. Please try again in 1s.',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    };
  if (status >= 500)
    return {
      error: {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      },
    };
  if (status === 401)
    return {
      error: {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    };
  return { error: { message: 'Invalid request.', type: 'invalid_request_error', param: null, code: null } };
}
