/**
 * Security headers on every response (helmet through koa-helmet).
 *
 * The pages (the landing page, api/dashboard/; the paywall, api/paywall/)
 * load only same-origin files: their scripts and stylesheet from
 * /dashboard/assets, and their data as `<script type="application/json">`
 * blocks, which are never executed (so no inline script needs a hash or a
 * nonce). The paywall's script talks to the browser wallet through the
 * injected `window.ethereum` (the extension's own channel, outside the page's
 * CSP) and retries the paid URL on the same origin (`connect-src 'self'`). So
 * one policy fits both pages, with no `unsafe-inline` anywhere:
 *
 *   default-src 'self'; script-src 'self'; style-src 'self' <hashes>; img-src 'self' data:
 *   (the pages' `data:` favicon); connect-src 'self'; object-src 'none';
 *   base-uri 'none'; form-action 'self'; frame-ancestors 'none'
 *
 * where <hashes> are the sha256 of the few fixed `<style>` elements a bundled
 * library inserts (the chart library's attribution logo: api/dashboard/assets.ts
 * finds them in the bundle at start).
 *
 * Also `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
 * `X-Frame-Options: DENY`, Cross-Origin-Opener-Policy and helmet's other
 * defaults. Left out: `upgrade-insecure-requests` (a gateway reached over
 * plain HTTP, e.g. on loopback, would have its own assets upgraded to HTTPS
 * and broken) and Strict-Transport-Security (the TLS terminator in front of
 * the gateway owns HSTS and its scope). Cross-Origin-Resource-Policy
 * `same-origin` (helmet's default) keeps other sites from embedding these
 * files; it does not restrict a CORS fetch, how a browser-based agent reads
 * the JSON API.
 */
import helmet from 'koa-helmet';
import type { Middleware } from 'koa';

const contentSecurityPolicy = (styleHashes: readonly string[]) => ({
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", ...styleHashes.map((h) => `'${h}'`)],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
});

/** `styleHashes`: CSP hash sources (`sha256-<base64>`) of inline `<style>` elements the pages may insert. */
export function securityHeaders(options: { styleHashes?: readonly string[] } = {}): Middleware {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy(options.styleHashes ?? []) },
    strictTransportSecurity: false,
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
  });
}
