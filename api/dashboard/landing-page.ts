/**
 * GET /: the landing page a person sees. Server-rendered from the catalogue
 * and the payment terms (what the service is, how to pay, the price list,
 * where agents connect), with the live dashboard's panels, which
 * static/dashboard.js fills from the free /dashboard/api endpoints.
 */
import { priceText } from '../sku/schemas.js';
import {
  DOCUMENTS,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  groupOf,
  methodsOf,
  paymentNetwork,
  type DiscoveryContext,
} from '../discovery/context.js';
import { assetUrl } from './assets.js';
import { escapeHtml as h, pageOpening, scriptJson } from './html.js';

export interface LandingOptions {
  pairs: readonly string[];
  marketSource: 'live' | 'simulated';
  refreshSeconds: number;
  delaySeconds: number;
  windowHours: number;
  mcpPath: string;
}

export function landingPage(ctx: DiscoveryContext, options: LandingOptions): string {
  const net = paymentNetwork(ctx.payment);
  const rows = ctx.catalogue.skus
    .map(
      (s) =>
        `<tr><td>${h(groupOf(s))}</td><td><code>${h(methodsOf(s).join('|'))} ${h(s.path)}</code></td><td>${h(s.title)}</td><td class="num">${h(s.free ? 'free' : priceText(s.priceAtomic))}</td><td class="num">${h(s.free ? '0' : s.priceAtomic)}</td><td>${s.available ? 'yes' : 'not yet'}</td></tr>`,
    )
    .join('\n');
  const config = {
    pairs: options.pairs,
    defaultPair: options.pairs.includes('ETH/USD') ? 'ETH/USD' : options.pairs[0],
    refreshSeconds: options.refreshSeconds,
  };
  const docs = [
    ['Guide for agents', DOCUMENTS.agentsMd],
    ['Agent skill', DOCUMENTS.skillMd],
    ['OpenAPI 3.1', DOCUMENTS.openapi],
    ['Prices (discovery)', DOCUMENTS.discovery],
    ['MCP server card', DOCUMENTS.mcp],
    ['Health', DOCUMENTS.health],
  ];
  return `${pageOpening(SERVICE_NAME, assetUrl('dashboard.css'))}
<script type="application/json" id="dashboard-config">${scriptJson(config)}</script>
<script src="${assetUrl('lightweight-charts.js')}" defer></script>
<script src="${assetUrl('dashboard.js')}" defer></script>
</head>
<body>
<header>
  <h1>${h(SERVICE_NAME)} <small>v${h(SERVICE_VERSION)}</small></h1>
  <p class="lead">${h(SERVICE_SUMMARY)}</p>
  <p class="meta">Market data: <strong>${options.marketSource === 'simulated' ? 'simulated market (seeded simulator)' : 'live venues'}</strong>.
  Payments: x402 v2, USDC on ${h(net.name)} (<code>${h(ctx.payment.network)}</code>). Agents connect over HTTP (<code>${h(ctx.baseUrl)}/api/v1/…</code>) or MCP (<code>${h(ctx.baseUrl)}${h(options.mcpPath)}</code>).</p>
  <div id="health" class="health" aria-live="polite"><span class="badge">pipeline: checking…</span></div>
</header>
<main>
<section class="panel">
  <div class="panel-head">
    <h2>Live market <small>free preview: ${options.windowHours} h, 15-minute resolution, ${options.delaySeconds} s behind; exact slices are paid routes</small></h2>
    <label>Pair <select id="pair">${options.pairs.map((p) => `<option${p === config.defaultPair ? ' selected' : ''}>${h(p)}</option>`).join('')}</select></label>
    <span id="updated" class="muted"></span>
  </div>
  <div class="grid">
    <figure><figcaption>Raw CEX/DEX spread, 15-minute candles (bp)</figcaption><div id="candles" class="chart"></div></figure>
    <figure><figcaption>Venue round-trip latency p50 / p90 / p99 (ms)</figcaption><div id="latency" class="chart"></div></figure>
    <figure><figcaption>Shadow capacity: volume tradable at a net profit per 15 minutes (USD)</figcaption><div id="capacity" class="chart"></div></figure>
    <figure><figcaption>Dislocation tape (newest first, all pairs)</figcaption>
      <div class="tape-wrap"><table id="tape"><thead><tr><th>time (UTC)</th><th>pair</th><th>direction</th><th class="num">net spread bp</th><th class="num">profit USD</th><th class="num">depth USD</th></tr></thead><tbody></tbody></table></div>
    </figure>
  </div>
</section>
<section class="panel">
  <h2>How to pay</h2>
  <ol>
    <li>Call a paid route: it answers <code>402</code> with a <code>PAYMENT-REQUIRED</code> header (price, asset, payee).</li>
    <li>Sign an EIP-3009 <code>transferWithAuthorization</code> for that amount of ${h(net.tokenName)} with your wallet.</li>
    <li>Send the same request again with <code>PAYMENT-SIGNATURE</code>; the <code>200</code> carries the result and the settlement in <code>PAYMENT-RESPONSE</code>. Over MCP the payment travels in <code>_meta["x402/payment"]</code>.</li>
    <li>Invalid input and windows outside coverage are refused before any payment; only successful answers are settled.</li>
  </ol>
  <p>Try it: <code>npm run pay -- GET '/api/v1/crypto/spread-candles?pair=ETH/USD'</code> or <code>npm run pay:mcp -- spread_candles '{"pair":"ETH/USD"}'</code>.</p>
</section>
<section class="panel">
  <h2>Price list</h2>
  <table class="prices"><thead><tr><th>group</th><th>route</th><th>what</th><th class="num">price</th><th class="num">atomic USDC</th><th>available</th></tr></thead>
  <tbody>
${rows}
  </tbody></table>
  <p class="muted">Prices are authoritative in the 402 challenge and ${h(DOCUMENTS.discovery)}; never hard-code them.</p>
</section>
<section class="panel">
  <h2>For agents</h2>
  <ul class="docs">${docs.map(([label, path]) => `<li><a href="${h(path!)}">${h(label!)}</a> <code>${h(path!)}</code></li>`).join('')}<li>MCP (Streamable HTTP) <code>${h(options.mcpPath)}</code></li></ul>
</section>
</main>
</body>
</html>
`;
}
