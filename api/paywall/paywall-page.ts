/**
 * The paywall page: what a browser gets instead of the bare 402 JSON on a paid
 * route. It states the price and what the route returns, shows a sample
 * response (the route's declared example), lets a person pay from the page
 * with an injected browser wallet (static/paywall.js), gives the same call as
 * copyable curl and TypeScript (@x402/fetch) snippets (route-snippets.ts), and
 * explains the x402 flow (challenge, EIP-3009 signature, retry, settlement
 * only on success) and the MCP door.
 *
 * Two forms of the page:
 *   - a paid GET (`challenge` given): the request as made, its 402 challenge
 *     embedded as JSON (#x402-challenge), so the page pays exactly what the
 *     gate asked for;
 *   - a POST route opened in a browser (no challenge): a form generated from
 *     the route's input schema (input-form.ts), prefilled with its example;
 *     the script POSTs the form's JSON body, takes the 402 challenge of that
 *     very call, and pays it.
 * The route and its payment network are embedded as #x402-route for the
 * script's chain check. The state line ("HTTP 402 · Payment required")
 * becomes "Paid" once the paid answer is shown.
 */
import type { PaymentRequired } from '@x402/core/types';
import { readableUsdc } from '../payment/usdc-amount.js';
import type { HttpMethod, PricedSku } from '../sku/sku.js';
import { inputJsonSchema } from '../sku/json-schema.js';
import { paymentNetwork, type PaymentInfo } from '../discovery/context.js';
import { assetUrl } from '../dashboard/assets.js';
import { escapeHtml as h, pageOpening, scriptJson } from '../dashboard/html.js';
import { toolNameOf } from '../discovery/mcp-tool-name.js';
import { inputForm } from './input-form.js';
import { PAYWALL_CSS } from './paywall-style.js';
import { curlSnippet, shellQuote, typescriptSnippet, type SnippetRequest } from './route-snippets.js';
import { walletChainOf } from './wallet-chain.js';

/** Longest sample response shown; a longer example is cut (the full one is in /openapi.json). */
const SAMPLE_MAX_CHARS = 6000;

export interface PaywallPageInput {
  /** The gate's 402 challenge of this request (a paid GET); absent for a POST route's form page. */
  challenge?: PaymentRequired;
  sku: PricedSku | undefined;
  payment: PaymentInfo;
  /** The method of the paid call (POST for the form page). */
  method: HttpMethod;
  /** Path and query of the request. */
  requestPath: string;
  /** The request's public origin (`https://api.example.com`), for the snippets. */
  origin: string;
  code: string;
  detail: string;
  mcpPath: string;
}

export function paywallPage(input: PaywallPageInput): string {
  const { challenge, sku, payment } = input;
  const accepted = challenge?.accepts[0];
  const amount = accepted?.amount ?? sku?.priceAtomic ?? '0';
  const network = accepted?.network ?? payment.network;
  const net = paymentNetwork(payment);
  const title = sku?.title ?? challenge?.resource?.description ?? input.requestPath;
  const path = input.requestPath.split('?')[0]!;
  const form = input.method === 'POST' && sku;
  const args = form ? sku.exampleInput : Object.fromEntries(new URLSearchParams(input.requestPath.split('?')[1] ?? ''));
  const snippet: SnippetRequest = {
    method: input.method,
    url: `${input.origin}${form ? path : input.requestPath}`,
    ...(form ? { body: sku.exampleInput } : {}),
    network,
  };
  const route = { method: input.method, path, network, chain: walletChainOf(network) };
  const reason =
    input.code === 'payment_required'
      ? ''
      : `<p class="muted">The last attempt was refused: <code>${h(input.code)}</code> ${h(input.detail)}</p>`;
  const price = readableUsdc(amount);
  return `${pageOpening(`Payment required: ${title}`, assetUrl('dashboard.css'))}
<style>${PAYWALL_CSS}</style>
${challenge ? `<script type="application/json" id="x402-challenge">${scriptJson(challenge)}</script>` : ''}
<script type="application/json" id="x402-route">${scriptJson(route)}</script>
<script src="${assetUrl('paywall.js')}" defer></script>
</head>
<body>
<main class="paywall">
<section class="panel" aria-labelledby="title">
  <p class="state" id="state">${challenge ? 'HTTP 402 · Payment required' : 'Payment required · x402, per call'}</p>
  <p class="muted"><a href="/">x402 Agent Utility Gateway</a></p>
  <h1 id="title">${h(title)}</h1>
  <p><code>${h(input.method)} ${h(form ? path : input.requestPath)}</code></p>
  <p>${h(sku?.description ?? challenge?.resource?.description ?? '')}</p>
  <p class="price" id="price">${h(price)} USDC <small class="muted">(${h(amount)} atomic units, per call)</small></p>
  <p>Paid in ${h(net.tokenName)} on ${h(net.name)} (<code>${h(network)}</code>), to <code>${h(accepted?.payTo ?? payment.payTo)}</code>. The authorization is valid for ${h(String(accepted?.maxTimeoutSeconds ?? payment.maxTimeoutSeconds))} s. Nothing is charged unless the answer is a success.</p>
  ${reason}
  ${form ? `<h2>Your request</h2>\n  ${inputForm(inputJsonSchema(sku), sku.exampleInput)}` : ''}
  <p><button id="pay" type="button" disabled>Pay ${h(price)} USDC with a browser wallet</button></p>
  <p id="pay-status" class="muted" role="status" aria-live="polite">looking for a browser wallet…</p>
  <section id="answer" hidden aria-labelledby="answer-title">
    <h2 id="answer-title">The paid answer</h2>
    <pre id="result" tabindex="0"></pre>
  </section>
</section>
${sku ? sampleSection(sku) : ''}
<section class="panel">
  <h2>Pay from code</h2>
  ${snippetBlock('curl', 'snippet-curl', curlSnippet(snippet))}
  ${snippetBlock('TypeScript (@x402/fetch)', 'snippet-ts', typescriptSnippet(snippet))}
  <p class="muted">Any x402 v2 client works. From a checkout of this repository: <code>npm run pay -- ${h(input.method)} ${h(shellQuote(form ? path : input.requestPath))}${form ? ` ${h(shellQuote(JSON.stringify(sku.exampleInput)))}` : ''}</code>. Prices: <a href="/api/v1/discovery">/api/v1/discovery</a>; guide: <a href="/agents.md">/agents.md</a>.</p>
  ${sku ? `<p>Over MCP (Streamable HTTP at <code>${h(input.mcpPath)}</code>), the same route is the tool <code>${h(toolNameOf(sku))}</code> with arguments <code>${h(JSON.stringify(args))}</code>.</p>` : ''}
</section>
<section class="panel">
  <h2>How x402 payment works</h2>
  <ol>
    <li>The request is answered <code>402</code> with a <code>PAYMENT-REQUIRED</code> header: the price, the asset (<code>${h(payment.asset)}</code>), the payee and the network.</li>
    <li>The payer signs an EIP-3009 <code>transferWithAuthorization</code> for exactly that amount (an EIP-712 signature; no transaction, no gas for the payer).</li>
    <li>The same request is sent again with the header <code>PAYMENT-SIGNATURE: &lt;base64 payload&gt;</code>.</li>
    <li>The gateway verifies the signature, runs the route, and settles on chain only when the answer is a success (<code>200</code>); the settlement comes back in <code>PAYMENT-RESPONSE</code>. Errors are never charged.</li>
  </ol>
</section>
</main>
</body>
</html>
`;
}

function sampleSection(sku: PricedSku): string {
  const full = JSON.stringify(sku.example, null, 2);
  const text =
    full.length > SAMPLE_MAX_CHARS
      ? `${full.slice(0, SAMPLE_MAX_CHARS)}\n… (cut; the full example is in /openapi.json)`
      : full;
  return `<section class="panel" aria-labelledby="sample-title">
  <h2 id="sample-title">Sample response</h2>
  <p class="muted">The route's example answer (HTTP 200, <code>application/json</code>); a paid call returns this shape for your request.</p>
  <pre id="sample" tabindex="0">${h(text)}</pre>
</section>`;
}

function snippetBlock(label: string, id: string, text: string): string {
  return `<div class="snippet-head"><h3>${h(label)}</h3><button type="button" class="copy" data-copy="${id}">Copy</button></div>
  <pre id="${id}" tabindex="0">${h(text)}</pre>`;
}
