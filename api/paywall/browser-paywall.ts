/**
 * The browser's view of a paid route.
 *
 * withBrowserPaywall wraps the x402 gate: when the gate answers a GET with the
 * 402 challenge and the client prefers HTML to JSON (a browser's
 * `Accept: text/html,...`), the problem+json body becomes the paywall page
 * (paywall-page.ts); the status and the PAYMENT-REQUIRED header stay exactly
 * as the gate set them. API clients (`Accept: application/json`, `*` or none)
 * keep the JSON. The pre-flight still refuses bad input before this point, and
 * a paid retry goes through the gate.
 *
 * browserFormPages serves a POST route's path to a browser's GET: the paywall
 * page with a form generated from the route's input schema, answered 200 (the
 * GET is not the paid call: the page's script POSTs the form and pays the 402
 * challenge of that call). Any other GET of that path (an API client) gets
 * exactly what it got before this page existed: 405 with `Allow: POST`
 * (this middleware stands in front of the router and lets every other
 * request through).
 *
 * Why not @x402/paywall: its 2.12 package cannot be installed from the
 * registry here (a transitive dependency, @perawallet/walletconnect@1.0.2, is
 * not published), and its 3.4 MB wallet bundle targets public chains through
 * WalletConnect; this page is server-rendered from the challenge itself and
 * pays with any injected EIP-1193 wallet (EIP-712 signature only), which also
 * works on the local dev chain.
 */
import type { Context, Middleware, Next } from 'koa';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { Catalogue, PricedSku } from '../sku/sku.js';
import type { PaymentInfo } from '../discovery/context.js';
import { paywallPage } from './paywall-page.js';

export interface BrowserPaywallOptions {
  catalogue: Catalogue;
  payment: PaymentInfo;
  mcpPath: string;
  /** Public origin for the page's snippets (e.g. https://api.example.com); default the request's own origin. */
  publicBaseUrl?: string;
}

/** The origin the snippets call. (Koa 3's ctx.origin is the Origin request header, not this server's origin.) */
const originOf = (ctx: Context, options: BrowserPaywallOptions): string =>
  (options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');

/** Whether the request comes from a browser that wants a page (HTML preferred over JSON). */
export function wantsHtml(ctx: Pick<Context, 'accepts' | 'get'>): boolean {
  if (!ctx.get('accept')) return false;
  return ctx.accepts('application/json', 'text/html') === 'text/html';
}

function sendPage(ctx: Context, html: string): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Vary', 'Accept');
  ctx.body = html;
}

/** `gate` with the paywall page in front of it (see the module comment). */
export function withBrowserPaywall(gate: Middleware, options: BrowserPaywallOptions): Middleware {
  return async (ctx: Context, next: Next) => {
    await gate(ctx, next);
    if (ctx.method !== 'GET' || ctx.status !== 402 || !wantsHtml(ctx)) return;
    const header = ctx.response.get('PAYMENT-REQUIRED');
    if (!header) return;
    const challenge = decodePaymentRequiredHeader(header);
    const route = ctx.state.paidRoute;
    const sku = options.catalogue.skus.find((s) => s.path === route?.path);
    const problem = (ctx.body ?? {}) as { code?: string; detail?: string };
    sendPage(
      ctx,
      paywallPage({
        challenge,
        sku,
        payment: options.payment,
        method: 'GET',
        requestPath: `${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`,
        origin: originOf(ctx, options),
        code: problem.code ?? 'payment_required',
        detail: problem.detail ?? '',
        mcpPath: options.mcpPath,
      }),
    );
  };
}

/**
 * The form pages of the paid POST-only routes (see the module comment), as app middleware in front of the router:
 * only a GET that wants HTML, of exactly such a route's path, is answered here; every other request goes on
 * untouched, so the router's answers (405 with `Allow: POST` for an API client's GET) stay as they are.
 */
export function browserFormPages(options: BrowserPaywallOptions): Middleware {
  const byPath = new Map<string, PricedSku>(
    options.catalogue.skus.filter((s) => s.method === 'POST' && !s.free).map((s) => [s.path, s]),
  );
  return async (ctx: Context, next: Next) => {
    const sku = ctx.method === 'GET' ? byPath.get(ctx.path.replace(/(.)\/+$/, '$1')) : undefined;
    if (!sku || !wantsHtml(ctx)) return next();
    ctx.status = 200;
    sendPage(
      ctx,
      paywallPage({
        sku,
        payment: options.payment,
        method: 'POST',
        requestPath: sku.path,
        origin: originOf(ctx, options),
        code: 'payment_required',
        detail: '',
        mcpPath: options.mcpPath,
      }),
    );
  };
}
