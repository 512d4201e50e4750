/**
 * The x402 core's framework-neutral HTTPAdapter over a Koa context (x402
 * ships no Koa one): the transport context handed to x402's hooks and
 * extensions (Bazaar records the method from it). Two deliberate
 * differences from the Express and Hono adapters: the v1 header name
 * `X-PAYMENT` is read as an alias of `PAYMENT-SIGNATURE`, and the resource
 * URL is fixed by the caller (public base URL, bounded length).
 */
import type { Context } from 'koa';
import type { HTTPAdapter } from '@x402/core/server';

export const PAYMENT_SIGNATURE_HEADER = 'payment-signature';
export const V1_PAYMENT_HEADER = 'x-payment';

export interface KoaAdapterOptions {
  /** Value of getUrl(), i.e. the challenge's `resource.url`; default the request's full URL. */
  resourceUrl?: string;
}

export class KoaAdapter implements HTTPAdapter {
  constructor(
    private readonly ctx: Context,
    private readonly options: KoaAdapterOptions = {},
  ) {}

  getHeader(name: string): string | undefined {
    const lower = name.toLowerCase();
    if (lower === PAYMENT_SIGNATURE_HEADER || lower === V1_PAYMENT_HEADER) return paymentHeaderOf(this.ctx);
    return this.ctx.get(name) || undefined;
  }

  getMethod(): string {
    return this.ctx.method;
  }

  getPath(): string {
    return this.ctx.path;
  }

  getUrl(): string {
    return this.options.resourceUrl ?? this.ctx.href;
  }

  getAcceptHeader(): string {
    return this.ctx.get('accept');
  }

  getUserAgent(): string {
    return this.ctx.get('user-agent');
  }

  getQueryParams(): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(this.ctx.query)) if (value !== undefined) out[key] = value;
    return out;
  }

  getQueryParam(name: string): string | string[] | undefined {
    return this.ctx.query[name];
  }

  /** The body parsed by the body parser in front of the router (koa-body), if any. */
  getBody(): unknown {
    return (this.ctx.request as { body?: unknown }).body;
  }
}

/** `PAYMENT-SIGNATURE`, else the v1 name `X-PAYMENT`; undefined when neither is sent. */
export function paymentHeaderOf(ctx: Pick<Context, 'get'>): string | undefined {
  return ctx.get(PAYMENT_SIGNATURE_HEADER) || ctx.get(V1_PAYMENT_HEADER) || undefined;
}
