/**
 * GET /.well-known/agent-card.json and /.well-known/agent.json: an A2A agent
 * card (protocol 0.3: name, description, url, version, provider,
 * capabilities, default modes, skills[]). The agent is reached over plain
 * HTTP+JSON: each skill names its route and price in its description and in
 * `x-x402`.
 */
import { priceText } from '../catalogue/schemas.js';
import {
  DOCUMENTS,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  methodsOf,
  paymentNetwork,
  pricing,
  type DiscoveryContext,
  exampleInputOf,
  exampleRequestText,
} from './context.js';

export function buildAgentCard(ctx: DiscoveryContext) {
  return {
    protocolVersion: '0.3.0',
    name: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    url: `${ctx.baseUrl}/api/v1`,
    preferredTransport: 'HTTP+JSON',
    additionalInterfaces: [{ url: `${ctx.baseUrl}/api/v1`, transport: 'HTTP+JSON' }],
    provider: { organization: SERVICE_NAME, url: ctx.baseUrl },
    version: SERVICE_VERSION,
    documentationUrl: `${ctx.baseUrl}${DOCUMENTS.agentsMd}`,
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    securitySchemes: {
      'payment-required': {
        type: 'apiKey',
        in: 'header',
        name: 'PAYMENT-SIGNATURE',
        description:
          'x402 v2 payment per call (402 challenge in PAYMENT-REQUIRED, then an EIP-3009 authorization in PAYMENT-SIGNATURE)',
      },
    },
    security: [{ 'payment-required': [] }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: ctx.catalogue.skus.map((s) => ({
      id: s.id,
      name: s.title,
      description: `${s.description} ${s.method} ${s.path}; ${s.free ? 'free' : `${s.priceAtomic} atomic USDC (${priceText(s.priceAtomic)})`}${s.available ? '' : '; not served yet (503)'}.`,
      tags: [...s.categories],
      examples: [JSON.stringify(exampleInputOf(ctx, s)), exampleRequestText(ctx, s)],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
      'x-x402': {
        method: s.method,
        methods: methodsOf(s),
        path: s.path,
        url: `${ctx.baseUrl}${s.path}`,
        free: s.free,
        available: s.available,
        pricing: pricing(s),
        paymentNetwork: paymentNetwork(ctx.payment),
      },
    })),
  };
}
