/**
 * GET /api/v1/discovery (free): the authoritative list of routes and current
 * prices. `endpoints[]` carries the spec's fields (path, method, description,
 * pricing {atomicUnits, readableUsdc}, paymentNetwork {chain, name,
 * tokenAssetId, tokenName}, params {name: {type, required, description}},
 * examples = the exact 200 body) plus id, methods, title, categories, free,
 * available, exampleRequest (built from current coverage: it answers 200 on
 * this install, live-examples.ts; `examplesSlice` names its slice) and latency.
 * With a server signing key, `payment.signing` and `documents.signingKeys`
 * point to the key document (signing-keys.ts).
 */
import { paramsOf } from '../sku/json-schema.js';
import {
  DOCUMENTS,
  MAX_PRICE_USD,
  MIN_PRICE_USD,
  SERVICE_ID,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  exampleInputOf,
  methodsOf,
  paymentNetwork,
  pricing,
  type DiscoveryContext,
} from './context.js';
import { signingReference } from './signing-keys.js';

export function buildDiscovery(ctx: DiscoveryContext) {
  const network = paymentNetwork(ctx.payment);
  const signing = signingReference(ctx);
  return {
    service: SERVICE_NAME,
    id: SERVICE_ID,
    version: SERVICE_VERSION,
    description: SERVICE_SUMMARY,
    baseUrl: ctx.baseUrl,
    x402Version: 2,
    payment: {
      scheme: 'exact',
      network: ctx.payment.network,
      asset: ctx.payment.asset,
      assetName: ctx.payment.assetName,
      assetVersion: ctx.payment.assetVersion,
      payTo: ctx.payment.payTo,
      maxTimeoutSeconds: ctx.payment.maxTimeoutSeconds,
      minPriceUsd: MIN_PRICE_USD,
      maxPriceUsd: MAX_PRICE_USD,
      requestHeader: 'PAYMENT-SIGNATURE',
      challengeHeader: 'PAYMENT-REQUIRED',
      settlementHeader: 'PAYMENT-RESPONSE',
      billing:
        'Only 200 responses are settled; 400 and pre-flight 404 are answered before any challenge and never charged.',
      ...(signing ? { signing } : {}),
    },
    paymentNetwork: network,
    ...(ctx.examples?.slice ? { examplesSlice: ctx.examples.slice } : {}),
    documents: {
      ...Object.fromEntries(Object.entries(DOCUMENTS).map(([k, path]) => [k, `${ctx.baseUrl}${path}`])),
      ...(signing ? { signingKeys: signing.keys } : {}),
    },
    endpoints: ctx.catalogue.skus.map((sku) => ({
      id: sku.id,
      path: sku.path,
      method: sku.method,
      methods: methodsOf(sku),
      title: sku.title,
      description: sku.description,
      categories: sku.categories,
      free: sku.free,
      available: sku.available,
      pricing: pricing(sku),
      paymentNetwork: network,
      params: paramsOf(sku),
      examples: sku.example,
      exampleRequest: exampleInputOf(ctx, sku),
      latency: { avgMs: sku.avgLatencyMs, targetMs: sku.latencyTargetMs },
    })),
  };
}
