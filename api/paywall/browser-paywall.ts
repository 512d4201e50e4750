/**
 * The browser's view of a paid route. Wraps the x402 gate: when the gate
 * answers a GET with the 402 challenge and the client prefers HTML to JSON
 * (a browser's `Accept: text/html,...`), the problem+json body becomes the
 * paywall page (paywall-page.ts); the status and the PAYMENT-REQUIRED header
 * stay exactly as the gate set them. API clients (`Accept: application/json`,
 * `*` or none) keep the JSON. Nothing else changes: the pre-flight still
 * refuses bad input before this point, and a paid retry goes through the gate.
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
import type { Catalogue } from '../sku/sku.js';
import type { PaymentInfo } from '../discovery/context.js';
import { paywallPage } from './paywall-page.js';

export interface BrowserPaywallOptions {
  catalogue: Catalogue;
  payment: PaymentInfo;
  mcpPath: string;
}

/** Whether the request comes from a browser that wants a page (HTML preferred over JSON). */
export function wantsHtml(ctx: Pick<Context, 'accepts' | 'get'>): boolean {
  if (!ctx.get('accept')) return false;
  return ctx.accepts('application/json', 'text/html') === 'text/html';
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
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Vary', 'Accept');
    ctx.body = paywallPage({
      challenge,
      sku,
      payment: options.payment,
      requestPath: `${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`,
      code: problem.code ?? 'payment_required',
      detail: problem.detail ?? '',
      mcpPath: options.mcpPath,
    });
  };
}
