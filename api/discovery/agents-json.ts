/**
 * GET /agents.json (agents.json 0.1 shape: info, sources pointing at the
 * OpenAPI document, one flow per route whose single action is that route's
 * OpenAPI operation), with each flow's price.
 */
import { priceText } from '../sku/schemas.js';
import {
  DOCUMENTS,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  paymentNetwork,
  pricing,
  type DiscoveryContext,
  exampleInputOf,
} from './context.js';

const camel = (id: string) => id.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function buildAgentsJson(ctx: DiscoveryContext) {
  return {
    agentsJson: '0.1.0',
    info: { title: SERVICE_NAME, version: SERVICE_VERSION, description: SERVICE_SUMMARY },
    sources: [{ id: 'gateway', path: `${ctx.baseUrl}${DOCUMENTS.openapi}` }],
    payment: { protocol: 'x402', x402Version: 2, ...paymentNetwork(ctx.payment), asset: ctx.payment.asset },
    overrides: [],
    flows: ctx.catalogue.skus.map((s) => ({
      id: `${s.id}_flow`,
      title: s.title,
      description: `${s.description} Price: ${priceText(s.priceAtomic)}.${s.available ? '' : ' Not served yet (503).'}`,
      method: s.method,
      path: s.path,
      available: s.available,
      pricing: pricing(s),
      actions: [{ id: `${s.id}_action`, sourceId: 'gateway', operationId: camel(s.id) }],
      links: [],
      fields: {
        parameters:
          s.method === 'GET'
            ? Object.entries(exampleInputOf(ctx, s)).map(([name, example]) => ({ name, example }))
            : [],
        requestBody: s.method === 'POST' ? { example: exampleInputOf(ctx, s) } : null,
        responses: { success: { example: s.example } },
      },
    })),
  };
}
