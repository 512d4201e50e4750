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

/** Where the page links the charts' definitions: docs/metrics.md, served by mount.ts. */
export const METRICS_DOC = '/dashboard/docs/metrics.md';
const DASHBOARD_MARKET_PATH = '/dashboard/api/market';

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
<a class="skip" href="#market">Skip to the live market</a>
<header>
  <h1>${h(SERVICE_NAME)} <small>v${h(SERVICE_VERSION)}</small></h1>
  <p class="lead">${h(SERVICE_SUMMARY)}</p>
  <p class="meta">Market data: <strong>${options.marketSource === 'simulated' ? 'simulated market (seeded simulator)' : 'live venues'}</strong>.
  Payments: x402 v2, USDC on ${h(net.name)} (<code>${h(ctx.payment.network)}</code>). Agents connect over HTTP (<code>${h(ctx.baseUrl)}/api/v1/…</code>) or MCP (<code>${h(ctx.baseUrl)}${h(options.mcpPath)}</code>).</p>
  <details id="health" class="health"><summary><span id="health-status" class="badge">status: see ${h(DOCUMENTS.health)}</span> <span class="details-hint">details</span></summary><ul id="health-components"><li><a href="${h(DOCUMENTS.health)}">${h(DOCUMENTS.health)}</a> (JSON)</li></ul></details>
</header>
<noscript><p class="noscript">The live market charts are drawn by JavaScript, which is off here. The rest of this page works without it: what the service sells, how to pay, the price list and the documents for agents. The free preview's data is plain JSON at <a href="${DASHBOARD_MARKET_PATH}">${DASHBOARD_MARKET_PATH}</a>, the service's status at <a href="${h(DOCUMENTS.health)}">${h(DOCUMENTS.health)}</a>.</p></noscript>
<main>
<section class="panel" id="market" tabindex="-1" aria-labelledby="market-title">
  <div class="panel-head">
    <h2 id="market-title">Live market <small>free preview: hourly medians over ${options.windowHours} h, ${options.delaySeconds} s behind; the tape an hour late</small></h2>
    <label class="js-only">Pair <select id="pair">${options.pairs.map((p) => `<option${p === config.defaultPair ? ' selected' : ''}>${h(p)}</option>`).join('')}</select></label>
    <span id="updated" class="muted js-only" aria-live="polite"></span>
  </div>
  <p class="muted">The preview shows statistics the paid routes do not sell. Exact 15-minute candles, fresh dislocations with venues, prices, profit and depth, latency percentiles and shadow capacity are <a href="#prices">paid routes</a>.</p>
  <div class="grid js-only">
    <figure><figcaption>Median raw CEX/DEX spread per hour, <span class="pair-name">${h(config.defaultPair ?? '')}</span> (bp). <a class="def" href="${METRICS_DOC}">Definition: docs/metrics.md §3</a></figcaption>
      <p id="spread-summary" class="summary" aria-live="polite">Loading…</p>
      <div id="spread" class="chart" role="img" aria-label="Bar chart of the hourly median spread; its text summary is above"></div></figure>
    <figure><figcaption>Median venue round trip per closed hour, all pairs (ms). <a class="def" href="${METRICS_DOC}">Definition: docs/metrics.md §4</a></figcaption>
      <p id="latency-summary" class="summary" aria-live="polite">Loading…</p>
      <div id="latency" class="chart" role="img" aria-label="Line chart of the hourly median round trip per venue kind; its text summary is above"></div></figure>
    <figure><figcaption>Dislocation tape, <span class="pair-name">${h(config.defaultPair ?? '')}</span>, an hour late, newest first. <a class="def" href="${METRICS_DOC}">Definition: docs/metrics.md §2</a></figcaption>
      <p id="tape-summary" class="summary" aria-live="polite">Loading…</p>
      <div class="tape-wrap" tabindex="0" role="region" aria-label="Dislocation tape"><table id="tape"><thead><tr><th scope="col">opened (UTC)</th><th scope="col">direction</th><th scope="col" class="num">net spread band, bp</th></tr></thead><tbody></tbody></table></div></figure>
  </div>
  <p id="track-record" class="track js-only" aria-live="polite">Track record: loading…</p>
  <p class="muted">Charts drawn with <a href="https://www.tradingview.com/lightweight-charts/">TradingView Lightweight Charts</a>.</p>
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
<section class="panel" id="prices">
  <h2>Price list</h2>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Price list"><table class="prices"><thead><tr><th>group</th><th>route</th><th>what</th><th class="num">price</th><th class="num">atomic USDC</th><th>available</th></tr></thead>
  <tbody>
${rows}
  </tbody></table></div>
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
