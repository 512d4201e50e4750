/**
 * Optional X API adapter: recent posts for a query through
 * `GET /2/tweets/search/recent` (X API v2) with an app bearer token
 * (AI_X_BEARER_TOKEN; base URL AI_X_API_BASE_URL). Documented response:
 * `{ data: [{ id, text, created_at, lang, public_metrics }], meta: { result_count, ... } }`;
 * errors are problem objects `{ title, detail, status }` (or `{ errors: [...] }`),
 * 429 carries `x-rate-limit-reset` (epoch seconds). Any failure is an
 * XApiError whose message becomes the reason in `signals_unavailable`.
 */

export interface XPost {
  id: string;
  text: string;
  created_at?: string;
  lang?: string;
  like_count?: number;
  retweet_count?: number;
}

export class XApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'XApiError';
  }
}

export interface XClientOptions {
  baseUrl: string;
  bearerToken: string;
  timeoutMs: number;
  maxResults: number;
}

interface XSearchResponse {
  data?: {
    id?: unknown;
    text?: unknown;
    created_at?: unknown;
    lang?: unknown;
    public_metrics?: { like_count?: unknown; retweet_count?: unknown };
  }[];
  meta?: { result_count?: unknown };
  errors?: { message?: unknown; detail?: unknown; title?: unknown }[];
  title?: unknown;
  detail?: unknown;
}

export class XRecentSearch {
  constructor(private readonly options: XClientOptions) {}

  async search(query: string, signal?: AbortSignal): Promise<XPost[]> {
    const url = new URL('/2/tweets/search/recent', this.options.baseUrl);
    url.searchParams.set('query', query.slice(0, 512));
    url.searchParams.set('max_results', String(Math.min(100, Math.max(10, this.options.maxResults))));
    url.searchParams.set('tweet.fields', 'created_at,lang,public_metrics');
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, {
        headers: {
          authorization: `Bearer ${this.options.bearerToken}`,
          accept: 'application/json',
          'user-agent': 'x402-gateway-x-sentiment',
        },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      if (timeout.aborted) throw new XApiError(`X API: no answer within ${this.options.timeoutMs} ms`);
      throw new XApiError(`X API unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    let body: XSearchResponse | undefined;
    try {
      body = (await res.json()) as XSearchResponse;
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const problem = body?.detail ?? body?.title ?? body?.errors?.[0]?.message ?? body?.errors?.[0]?.detail;
      const reset = res.headers.get('x-rate-limit-reset');
      const resetNote =
        res.status === 429 && reset && Number.isFinite(Number(reset))
          ? `, rate limit resets at ${new Date(Number(reset) * 1000).toISOString()}`
          : '';
      throw new XApiError(
        `X API answered ${res.status}${typeof problem === 'string' ? ` (${problem})` : ''}${resetNote}`,
        res.status,
      );
    }
    if (!body || typeof body !== 'object') throw new XApiError('X API: the answer is not JSON');
    if (!body.data) {
      if (body.errors?.length && !body.meta)
        throw new XApiError(`X API error: ${String(body.errors[0]?.detail ?? body.errors[0]?.message ?? 'unknown')}`);
      return [];
    }
    return body.data
      .filter((p) => typeof p.id === 'string' && typeof p.text === 'string')
      .map((p) => ({
        id: p.id as string,
        text: p.text as string,
        ...(typeof p.created_at === 'string' ? { created_at: p.created_at } : {}),
        ...(typeof p.lang === 'string' ? { lang: p.lang } : {}),
        ...(typeof p.public_metrics?.like_count === 'number' ? { like_count: p.public_metrics.like_count } : {}),
        ...(typeof p.public_metrics?.retweet_count === 'number'
          ? { retweet_count: p.public_metrics.retweet_count }
          : {}),
      }));
  }
}
