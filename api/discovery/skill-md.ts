/**
 * GET /skill.md: the gateway as an agent skill (SKILL.md: YAML front matter
 * with name and description, then instructions), generated from the catalogue.
 */
import { priceText } from '../sku/schemas.js';
import { MCP_PATH } from './mcp-tools.js';
import {
  DOCUMENTS,
  GROUPS,
  SERVICE_ID,
  SERVICE_NAME,
  SERVICE_VERSION,
  exampleRequestText,
  groupOf,
  methodsOf,
  paymentSteps,
  type DiscoveryContext,
} from './context.js';

export function buildSkillMd(ctx: DiscoveryContext): string {
  const lines = [
    '---',
    `name: ${SERVICE_ID}`,
    'description: Use when you need CEX/DEX crypto market telemetry (spread candles, dislocations, execution latency, shadow capacity, coverage), a read-only pre-trade impact simulation on a live level-2 book, or pay-per-call utility/AI tools, paid per call in USDC on Base with x402 (no API key).',
    `version: ${SERVICE_VERSION}`,
    '---',
    '',
    `# ${SERVICE_NAME}`,
    '',
    `Base URL: ${ctx.baseUrl}`,
    '',
    '## When to use it',
    '',
    '- Historical or recent 15-minute telemetry of the spread between a centralized exchange and Base DEX pools for `<BASE>/USD` pairs: start with the free coverage route to learn the available window and pairs.',
    '- Before trading: simulate the market impact of an order on the live book (VWAP, slippage, fill probabilities). Nothing is ever placed.',
    '',
    '## How to call',
    '',
    ...paymentSteps(ctx).map((s, i) => `${i + 1}. ${s}`),
    '',
    `Over MCP: connect to \`${ctx.baseUrl}${MCP_PATH}\` (Streamable HTTP). Each route is a tool (\`-\` becomes \`_\`); a paid tool answers an error result carrying the x402 PaymentRequired; call it again with \`_meta["x402/payment"]\` = the signed PaymentPayload; the settlement comes back in \`_meta["x402/payment-response"]\`.`,
    '',
    '## Routes',
    '',
  ];
  for (const group of GROUPS) {
    const skus = ctx.catalogue.skus.filter((s) => groupOf(s) === group);
    if (!skus.length) continue;
    lines.push(`### ${group}`, '');
    for (const s of skus) {
      const price = s.free ? 'free' : `${s.priceAtomic} atomic USDC (${priceText(s.priceAtomic)})`;
      const alias = methodsOf(s).length > 1 ? '; also POST with a JSON body' : '';
      lines.push(
        `- \`${s.method} ${s.path}\`: ${price}${s.available ? '' : ', not served yet (503)'}${alias}. ${s.description}`,
      );
      if (ctx.examples?.inputs.has(s.id))
        lines.push(`  Example (current coverage): \`${exampleRequestText(ctx, s).split('\n').join(' ')}\``);
    }
    lines.push('');
  }
  lines.push(
    '## More',
    '',
    `- MCP server: ${ctx.baseUrl}${MCP_PATH} (card: ${ctx.baseUrl}${DOCUMENTS.mcp})`,
    `- Schemas: ${ctx.baseUrl}${DOCUMENTS.openapi}`,
    `- Current prices: ${ctx.baseUrl}${DOCUMENTS.discovery}`,
    `- Guide: ${ctx.baseUrl}${DOCUMENTS.agentsMd}`,
    '',
  );
  return lines.join('\n');
}
