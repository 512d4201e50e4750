/**
 * Mounts the free discovery documents, all generated from the catalogue and
 * the running gate's payment terms (/health is mounted by routes/health.ts),
 * and the server signing key's document when it has one (signing-keys.ts).
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { Catalogue } from '../sku/sku.js';
import { buildAgentCard } from './agent-card.js';
import { buildAgentsJson } from './agents-json.js';
import { buildAgentsMd } from './agents-md.js';
import { DOCUMENTS, type DiscoveryContext, type PaymentInfo } from './context.js';
import { buildDiscovery } from './discovery.js';
import { buildLlmsTxt } from './llms-txt.js';
import { buildMcpJson } from './mcp-json.js';
import { buildOpenApi } from './openapi.js';
import { buildSkillMd } from './skill-md.js';
import { SIGNING_KEYS_DOCUMENT, SIGNING_KEYS_MEDIA_TYPE, buildSigningKeys } from './signing-keys.js';
import type { LiveExampleSource } from './live-examples.js';

export interface DiscoveryOptions {
  catalogue: Catalogue;
  payment: PaymentInfo;
  /** Public origin of the documents' URLs; default each request's own origin. */
  publicBaseUrl?: string;
  /** Example requests from current coverage (live-examples.ts); without it the catalogue's static examples. */
  examples?: LiveExampleSource;
}

export type Build = (ctx: DiscoveryContext) => unknown;

export const JSON_DOCS: [string, Build][] = [
  [DOCUMENTS.discovery, buildDiscovery],
  [DOCUMENTS.openapi, buildOpenApi],
  [DOCUMENTS.mcp, buildMcpJson],
  [DOCUMENTS.agent, buildAgentCard],
  [DOCUMENTS.agentCard, buildAgentCard],
  [DOCUMENTS.agentsJson, buildAgentsJson],
];
export const TEXT_DOCS: [string, Build, string][] = [
  [DOCUMENTS.agentsMd, buildAgentsMd, 'text/markdown; charset=utf-8'],
  [DOCUMENTS.skillMd, buildSkillMd, 'text/markdown; charset=utf-8'],
  [DOCUMENTS.llmsTxt, buildLlmsTxt, 'text/plain; charset=utf-8'],
];

export function mountDiscovery(router: Router, options: DiscoveryOptions): void {
  const contextOf = async (ctx: Context): Promise<DiscoveryContext> => ({
    catalogue: options.catalogue,
    payment: options.payment,
    // Koa 3's ctx.origin is the Origin request header, not this server's origin.
    baseUrl: (options.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, ''),
    // A store that cannot answer leaves the static examples: the documents never fail on it.
    examples: await options.examples?.().catch(() => undefined),
  });
  for (const [path, build] of JSON_DOCS) {
    router.get(path, async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.type = 'application/json';
      ctx.body = build(await contextOf(ctx));
    });
  }
  // The server's public signing keys, when it signs (offers, receipts, answers).
  if (options.payment.signing)
    router.get(SIGNING_KEYS_DOCUMENT, async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.type = SIGNING_KEYS_MEDIA_TYPE;
      ctx.body = JSON.stringify(buildSigningKeys(await contextOf(ctx)));
    });
  for (const [path, build, type] of TEXT_DOCS) {
    router.get(path, async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.type = type;
      ctx.body = build(await contextOf(ctx));
    });
  }
}
