/**
 * GET /.well-known/agent-card.json and /.well-known/agent.json: an A2A agent
 * card (protocol 0.3: name, description, url, version, provider,
 * capabilities, default modes, skills[]). The agent is served over A2A
 * JSON-RPC at A2A_PATH (api/a2a/: message/send naming a skill id, paid with
 * the x402 A2A extension declared in `capabilities.extensions`); each skill
 * also names its plain HTTP route and price in its description and in `x-x402`. With a server signing key, `x-x402-signing` points to the key
 * document of the signed offers, receipts and answers (signing-keys.ts).
 */
import { priceText } from '../sku/schemas.js';
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
import { signingReference } from './signing-keys.js';
import { A2A_PATH, SKILL_KEY, X402_EXTENSION_URI } from '../a2a/a2a-protocol.js';

export function buildAgentCard(ctx: DiscoveryContext) {
  const signing = signingReference(ctx);
  return {
    protocolVersion: '0.3.0',
    name: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    url: `${ctx.baseUrl}${A2A_PATH}`,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: `${ctx.baseUrl}${A2A_PATH}`, transport: 'JSONRPC' }],
    provider: { organization: SERVICE_NAME, url: ctx.baseUrl },
    version: SERVICE_VERSION,
    documentationUrl: `${ctx.baseUrl}${DOCUMENTS.agentsMd}`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      extensions: [
        {
          uri: X402_EXTENSION_URI,
          description: `x402 payments per call: message/send with metadata.${SKILL_KEY} = a skill id and the input as a data part; a paid skill answers an input-required task with x402.payment.required; send message/send with its taskId and the signed PaymentPayload in metadata x402.payment.payload (an EIP-3009 authorization); the completed task carries x402.payment.receipts.`,
          required: true,
        },
      ],
    },
    ...(signing ? { 'x-x402-signing': signing } : {}),
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
