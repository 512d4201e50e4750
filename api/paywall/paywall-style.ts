/**
 * The paywall page's own rules, on top of the shared stylesheet
 * (api/dashboard/static/dashboard.css): a single column that fits 360 px
 * (grid and flex children may shrink below their content, long addresses and
 * code wrap, code blocks scroll inside themselves), the call form, and colours
 * that keep 4.5:1 contrast (a disabled button included).
 *
 * Served inline as one fixed `<style>` element; its CSP hash source
 * (PAYWALL_STYLE_HASH) is added to the policy's style-src (api/app.ts), so no
 * `unsafe-inline` is needed. (Inline, not a served asset: the asset table is
 * the dashboard's, api/dashboard/assets.ts.)
 */
import { createHash } from 'node:crypto';

export const PAYWALL_CSS = `
main.paywall { max-width: 800px; margin: 0 auto; padding: 16px 12px 40px; grid-template-columns: minmax(0, 1fr); }
.paywall > * { min-width: 0; }
.paywall .panel { padding: 14px 14px; }
.paywall h1 { font-size: 22px; margin: 4px 0 8px; overflow-wrap: anywhere; }
.paywall p, .paywall li, .paywall code { overflow-wrap: anywhere; }
.paywall pre { white-space: pre; max-width: 100%; max-height: 420px; }
.paywall .price small { display: block; font-size: 12px; font-weight: 400; }
.paywall .state { font-weight: 600; color: #1e3a8a; }
.paywall .state.paid { color: #065f46; }
.paywall .muted { color: #4b5563; }
.paywall .req { color: #991b1b; font-size: 12px; }
.paywall button[disabled] { background: #64748b; color: #fff; }
.paywall button.copy { padding: 3px 10px; font-size: 12px; background: #334155; }
.paywall .snippet-head { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 8px; }
.paywall .snippet-head h3 { margin: 8px 0 4px; font-size: 14px; }
.paywall .call-form { display: grid; gap: 10px; margin: 10px 0; }
.paywall .field { display: grid; gap: 3px; min-width: 0; }
.paywall .field input, .paywall .field select, .paywall .field textarea { font: inherit; width: 100%; min-width: 0; padding: 6px 8px; border: 1px solid #6b7280; border-radius: 6px; background: #fff; color: #111827; }
.paywall .field textarea { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; resize: vertical; }
.paywall .field .invalid { border-color: #b91c1c; outline: 2px solid #fecaca; }
.paywall .problem { color: #991b1b; font-weight: 600; }
.paywall details summary { cursor: pointer; font-weight: 600; }
@media (min-width: 640px) { main.paywall { padding: 32px 28px 40px; } .paywall .panel { padding: 14px 18px; } }
`;

/** CSP hash source of PAYWALL_CSS, as the `<style>` element's exact text. */
export const PAYWALL_STYLE_HASH = `sha256-${createHash('sha256').update(PAYWALL_CSS).digest('base64')}`;
