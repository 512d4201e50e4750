/**
 * What every discovery document is generated from: the catalogue (prices after
 * overrides), the payment terms of the running gate (network, asset, payee),
 * and the public base URL of the request.
 */
import { readableUsdc } from '../payment/usdc-amount.js';
import type { PaymentTerms } from '../payment/settlement.js';
import { priceText } from '../sku/schemas.js';
import type { Catalogue, PricedSku } from '../sku/sku.js';
import { TELEMETRY_PREFIX } from '../telemetry/coverage/handler.js';
import { rangeTermsOf } from '../telemetry/range-query.js';
import { bulkTermsOf, type BulkTerms } from '../telemetry/history/bulk-terms.js';
import { priceOfUnits } from '../sku/call-price.js';
import type { LiveExamples } from './live-examples.js';
import type { SigningKeysInfo } from './signing-keys.js';

export { SERVICE_VERSION } from '../../core/version.js';
export const SERVICE_ID = 'x402-gateway';
export const SERVICE_NAME = 'x402 Agent Utility Gateway';
export const SERVICE_SUMMARY =
  'Pay-per-call HTTP gateway for AI agents: CEX/DEX crypto market telemetry (spread candles, dislocations, execution latency, shadow capacity), a read-only pre-trade impact simulation, and utility/AI SKUs. No API key, no signup: each paid call is paid with an x402 v2 USDC payment on Base (eip155:8453).';
/** Payment bounds advertised by the spec (per call). */
export const MIN_PRICE_USD = '0.0000015';
export const MAX_PRICE_USD = '0.2';

export interface PaymentInfo {
  network: string;
  asset: string;
  /** EIP-712 domain name and version of the asset (challenge `extra`). */
  assetName: string;
  assetVersion: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** Settlement mode (`devchain` serves a local chain with a test USDC). */
  mode?: string;
  /** The server signing key's public half (signed offers, receipts and answers); absent: nothing is signed. */
  signing?: SigningKeysInfo;
}

export interface DiscoveryContext {
  catalogue: Catalogue;
  payment: PaymentInfo;
  /** Origin the documents' absolute URLs start with, without a trailing slash. */
  baseUrl: string;
  /** Example requests built from current coverage (live-examples.ts); absent: the catalogue's static ones. */
  examples?: LiveExamples | undefined;
}

/** The example request a document shows for a SKU: the current one when known, else the catalogue's. */
export function exampleInputOf(ctx: DiscoveryContext, sku: PricedSku): Record<string, unknown> {
  return ctx.examples?.inputs.get(sku.id) ?? sku.exampleInput;
}

/** `GET <url>?<query>` or `POST <url>` + JSON body of a SKU's example request. */
export function exampleRequestText(ctx: DiscoveryContext, sku: PricedSku): string {
  const input = exampleInputOf(ctx, sku);
  const query = new URLSearchParams(Object.entries(input).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return sku.method === 'GET'
    ? `GET ${ctx.baseUrl}${sku.path}${query ? `?${query}` : ''}`
    : `POST ${ctx.baseUrl}${sku.path}\nContent-Type: application/json\n\n${JSON.stringify(input)}`;
}

export function paymentInfoOf(terms: PaymentTerms & { mode?: string; signing?: SigningKeysInfo }): PaymentInfo {
  return {
    network: terms.network,
    asset: terms.asset,
    assetName: terms.assetName,
    assetVersion: terms.assetVersion,
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    ...(terms.mode ? { mode: terms.mode } : {}),
    ...(terms.signing ? { signing: terms.signing } : {}),
  };
}

const CHAIN_NAMES: Record<string, string> = { 'eip155:8453': 'Base', 'eip155:84532': 'Base Sepolia' };

/** The spec's `paymentNetwork` object. */
export function paymentNetwork(payment: PaymentInfo): {
  chain: string;
  name: string;
  tokenAssetId: string;
  tokenName: string;
} {
  const name = CHAIN_NAMES[payment.network] ?? `EVM chain ${payment.network.split(':')[1] ?? payment.network}`;
  return {
    chain: payment.network,
    name: payment.mode === 'devchain' ? `${name} (local dev chain, test USDC)` : name,
    tokenAssetId: `${payment.network}/erc20:${payment.asset}`,
    tokenName: 'USDC',
  };
}

/** What a range query (`from`/`to`, api/telemetry/range-query.ts) costs: the price per slice answered, capped. */
export interface RangePricing {
  unit: 'slice';
  maxSlices: number;
  /** The most one range call costs: the per-slice price x maxSlices, capped at the spec's 0.2 USD. */
  maxAtomicUnits: string;
  text: string;
}

/** What a bulk call (api/telemetry/history/bulk-terms.ts) costs: units of the route price per dataset-day. */
export interface BulkPricing {
  unit: BulkTerms['unit'];
  /** Units of the route price per dataset (candles: per interval). */
  units: BulkTerms['units'];
  text: string;
}

export function pricing(sku: PricedSku): {
  atomicUnits: string;
  readableUsdc: string;
  range?: RangePricing;
  bulk?: BulkPricing;
} {
  const range = rangePricing(sku);
  const bulk = bulkPricing(sku);
  return {
    atomicUnits: sku.priceAtomic,
    readableUsdc: readableUsdc(sku.priceAtomic),
    ...(range ? { range } : {}),
    ...(bulk ? { bulk } : {}),
  };
}

export function bulkPricing(sku: PricedSku): BulkPricing | undefined {
  const terms = bulkTermsOf(sku);
  if (!terms || sku.free) return undefined;
  const u = terms.units;
  const of = (units: number) => priceText(priceOfUnits(sku.priceAtomic, units));
  return {
    unit: terms.unit,
    units: u,
    text: `the price is per dataset-day, a bulk discount over buying the day's slices one by one: candles ${of(u.candles['15m'])} (15m; 1h ${of(u.candles['1h'])}, 4h/1d ${of(u.candles['4h'])}), dislocations ${of(u.dislocations)}, execution-latency ${of(u['execution-latency'])}, shadow-capacity ${of(u['shadow-capacity'])}`,
  };
}

export function rangePricing(sku: PricedSku): RangePricing | undefined {
  const terms = rangeTermsOf(sku);
  if (!terms || sku.free) return undefined;
  const maxAtomicUnits = priceOfUnits(sku.priceAtomic, terms.maxSlices);
  return {
    unit: 'slice',
    maxSlices: terms.maxSlices,
    maxAtomicUnits,
    text: `the price is per slice: a range query (\`from\`/\`to\`, up to ${terms.maxSlices} slices) costs ${priceText(sku.priceAtomic)} x slices answered, at most ${priceText(maxAtomicUnits)} a call`,
  };
}

/** "15000 atomic USDC (0.015 USDC)" or "free"; a range-capable route adds its range price. */
export function priceLine(sku: PricedSku): string {
  const terms = rangePricing(sku) ?? bulkPricing(sku);
  return sku.free
    ? 'free'
    : `${sku.priceAtomic} atomic USDC (${priceText(sku.priceAtomic)})${terms ? `; ${terms.text}` : ''}`;
}

export type SkuGroup = 'Crypto telemetry' | 'Utility' | 'AI';

export function groupOf(sku: PricedSku): SkuGroup {
  if (sku.path.startsWith(TELEMETRY_PREFIX)) return 'Crypto telemetry';
  return sku.categories.includes('AI') && !sku.categories.includes('Data') ? 'AI' : 'Utility';
}

export const GROUPS: SkuGroup[] = ['Crypto telemetry', 'Utility', 'AI'];

/** The methods a SKU answers (telemetry: its spec method plus POST). */
export function methodsOf(sku: PricedSku): string[] {
  return sku.alsoPost && sku.method !== 'POST' ? [sku.method, 'POST'] : [sku.method];
}

/** The machine-readable documents and where they live. */
export const DOCUMENTS = {
  discovery: '/api/v1/discovery',
  openapi: '/openapi.json',
  agentsMd: '/agents.md',
  skillMd: '/skill.md',
  llmsTxt: '/llms.txt',
  mcp: '/.well-known/mcp.json',
  agent: '/.well-known/agent.json',
  agentCard: '/.well-known/agent-card.json',
  agentsJson: '/agents.json',
  health: '/health',
} as const;

/** How a client pays, in prose shared by the text documents. */
export function paymentSteps(ctx: DiscoveryContext): string[] {
  const net = paymentNetwork(ctx.payment);
  return [
    `Call a paid route without payment: it answers HTTP 402 with a base64 JSON \`PAYMENT-REQUIRED\` header (x402Version 2, \`accepts[0]\`: scheme \`exact\`, network \`${ctx.payment.network}\`, \`amount\` in atomic USDC, \`asset\` ${ctx.payment.asset}, \`payTo\`, maxTimeoutSeconds ${ctx.payment.maxTimeoutSeconds}).`,
    `Sign an EIP-3009 \`transferWithAuthorization\` for exactly \`accepts[0].amount\` on that asset (${net.tokenName} on ${net.name}) with the paying wallet.`,
    'Retry the same request with the header `PAYMENT-SIGNATURE: <base64 payload>`; a 200 carries the result and a `PAYMENT-RESPONSE` settlement header.',
    `Prices are dynamic: read them from the challenge or ${ctx.baseUrl}${DOCUMENTS.discovery} (never hardcode). Bounds: ${MIN_PRICE_USD}-${MAX_PRICE_USD} USD per call.`,
    'Only 200 responses are settled. Invalid input answers 400, a telemetry window outside coverage 404, before any challenge: never charged. 5xx never settles.',
  ];
}
