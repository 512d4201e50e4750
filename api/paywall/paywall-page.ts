/**
 * The paywall page: what a browser gets instead of the bare 402 JSON on a paid
 * GET. It states the price and what the route returns, explains the x402 flow
 * (challenge, EIP-3009 signature, retry, settlement only on success), shows
 * how to pay from a terminal or over MCP, and offers to pay from the page with
 * an injected browser wallet (static/paywall.js). The challenge itself is
 * embedded as JSON, so the page pays exactly what the gate asked for.
 */
import type { PaymentRequired } from '@x402/core/types';
import { readableUsdc } from '../payment/usdc-amount.js';
import type { PricedSku } from '../sku/sku.js';
import { paymentNetwork, type PaymentInfo } from '../discovery/context.js';
import { assetUrl } from '../dashboard/assets.js';
import { escapeHtml as h, pageOpening, scriptJson } from '../dashboard/html.js';
import { toolNameOf } from '../discovery/mcp-tool-name.js';

export interface PaywallPageInput {
  challenge: PaymentRequired;
  sku: PricedSku | undefined;
  payment: PaymentInfo;
  requestPath: string;
  code: string;
  detail: string;
  mcpPath: string;
}

export function paywallPage(input: PaywallPageInput): string {
  const { challenge, sku, payment } = input;
  const accepted = challenge.accepts[0];
  const amount = accepted?.amount ?? sku?.priceAtomic ?? '0';
  const net = paymentNetwork(payment);
  const title = sku?.title ?? challenge.resource?.description ?? input.requestPath;
  const args = Object.fromEntries(new URLSearchParams(input.requestPath.split('?')[1] ?? ''));
  const reason =
    input.code === 'payment_required'
      ? ''
      : `<p class="muted">The last attempt was refused: <code>${h(input.code)}</code> ${h(input.detail)}</p>`;
  return `${pageOpening(`Payment required: ${title}`, assetUrl('dashboard.css'))}
<script type="application/json" id="x402-challenge">${scriptJson(challenge)}</script>
<script src="${assetUrl('paywall.js')}" defer></script>
</head>
<body>
<main class="paywall">
<section class="panel">
  <p class="muted">HTTP 402 · Payment required · <a href="/">x402 Agent Utility Gateway</a></p>
  <h1>${h(title)}</h1>
  <p><code>GET ${h(input.requestPath)}</code></p>
  <p>${h(sku?.description ?? challenge.resource?.description ?? '')}</p>
  <p class="price" id="price">${h(readableUsdc(amount))} USDC <small class="muted">(${h(amount)} atomic units, per call)</small></p>
  <p>Paid in ${h(net.tokenName)} on ${h(net.name)} (<code>${h(payment.network)}</code>), to <code>${h(accepted?.payTo ?? payment.payTo)}</code>. The authorization is valid for ${h(String(accepted?.maxTimeoutSeconds ?? payment.maxTimeoutSeconds))} s.</p>
  ${reason}
  <p><button id="pay" disabled>Pay ${h(readableUsdc(amount))} USDC with a browser wallet</button> <span id="pay-status" class="muted">looking for a browser wallet…</span></p>
  <pre id="result" hidden></pre>
</section>
<section class="panel">
  <h2>How x402 payment works</h2>
  <ol>
    <li>This request was answered <code>402</code> with a <code>PAYMENT-REQUIRED</code> header: the price, the asset (${h(payment.asset)}), the payee and the network.</li>
    <li>The payer signs an EIP-3009 <code>transferWithAuthorization</code> for exactly that amount (an EIP-712 signature; no transaction, no gas for the payer).</li>
    <li>The same request is sent again with the header <code>PAYMENT-SIGNATURE: &lt;base64 payload&gt;</code>.</li>
    <li>The gateway verifies the signature, runs the route, and settles on chain only when the answer is a success (<code>200</code>); the settlement comes back in <code>PAYMENT-RESPONSE</code>. Errors are never charged.</li>
  </ol>
</section>
<section class="panel">
  <h2>Pay from a terminal or an agent</h2>
  <pre>npm run pay -- GET '${h(input.requestPath)}'</pre>
  ${sku ? `<p>Over MCP (Streamable HTTP at <code>${h(input.mcpPath)}</code>), the same route is the tool <code>${h(toolNameOf(sku))}</code>:</p><pre>npm run pay:mcp -- ${h(toolNameOf(sku))} '${h(JSON.stringify(args))}'</pre>` : ''}
  <p class="muted">Any x402 v2 client works, e.g. <code>@x402/fetch</code>. Prices: <a href="/api/v1/discovery">/api/v1/discovery</a>; guide: <a href="/agents.md">/agents.md</a>.</p>
</section>
</main>
</body>
</html>
`;
}
