/**
 * GET /llms.txt (llmstxt.org format): an H1 with the name, a blockquote
 * summary, a few lines of detail, then H2 sections of link lists
 * (`- [name](url): notes`), the last one `## Optional`.
 */
import { priceText } from '../sku/schemas.js';
import {
  DOCUMENTS,
  GROUPS,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  exampleRequestText,
  groupOf,
  paymentNetwork,
  type DiscoveryContext,
} from './context.js';

export function buildLlmsTxt(ctx: DiscoveryContext): string {
  const net = paymentNetwork(ctx.payment);
  const url = (path: string) => `${ctx.baseUrl}${path}`;
  const lines = [
    `# ${SERVICE_NAME}`,
    '',
    `> ${SERVICE_SUMMARY}`,
    '',
    `Paid routes answer HTTP 402 with a \`PAYMENT-REQUIRED\` challenge; pay ${net.tokenName} on ${net.name} (\`${net.chain}\`) with x402 v2 (\`PAYMENT-SIGNATURE\` header). Prices below are atomic USDC (6 decimals); the authoritative prices are in ${url(DOCUMENTS.discovery)}. Bad input answers 400 and a telemetry window outside coverage 404, both before any challenge and never charged.`,
    '',
  ];
  for (const group of GROUPS) {
    const skus = ctx.catalogue.skus.filter((s) => groupOf(s) === group);
    if (!skus.length) continue;
    lines.push(`## ${group}`, '');
    for (const s of skus) {
      const price = s.free ? 'free' : `${s.priceAtomic} atomic USDC (${priceText(s.priceAtomic)})`;
      // Telemetry routes add their current example (a window in coverage): it answers (402, then 200 once paid).
      const example = ctx.examples?.inputs.has(s.id)
        ? ` Example (current coverage): ${exampleRequestText(ctx, s).split('\n').join(' ')}`
        : '';
      lines.push(
        `- [${s.id}](${url(s.path)}): ${s.method}, ${price}${s.available ? '' : ', not served yet (503)'}. ${s.description}${example}`,
      );
    }
    lines.push('');
  }
  lines.push(
    '## Docs',
    '',
    `- [Discovery](${url(DOCUMENTS.discovery)}): routes, current prices, parameters and example bodies (JSON)`,
    `- [OpenAPI 3.1](${url(DOCUMENTS.openapi)}): request and response schemas`,
    `- [Agent guide](${url(DOCUMENTS.agentsMd)}): how to pay, every route with an example`,
    `- [Skill](${url(DOCUMENTS.skillMd)}): the gateway as an agent skill`,
    '',
    '## Optional',
    '',
    `- [MCP server card](${url(DOCUMENTS.mcp)}): the routes as tools`,
    `- [A2A agent card](${url(DOCUMENTS.agentCard)}): also at ${url(DOCUMENTS.agent)}`,
    `- [agents.json](${url(DOCUMENTS.agentsJson)}): flows over the OpenAPI operations`,
    `- [Health](${url(DOCUMENTS.health)}): status probe`,
    '',
  );
  return lines.join('\n');
}
