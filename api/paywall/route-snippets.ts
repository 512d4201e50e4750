/**
 * The paywall's copyable snippets for one paid call: the exact request as
 * curl (method, URL with its query, JSON body), which a terminal answers with
 * the 402 challenge, and the same call paid by an x402 v2 client in
 * TypeScript (@x402/fetch's fetch wrapper with @x402/evm's exact scheme),
 * which signs and retries by itself. Both are built from the route and the
 * request shown on the page, so they are correct for it as copied.
 */

export interface SnippetRequest {
  method: 'GET' | 'POST';
  /** Absolute URL, with the query string for a GET. */
  url: string;
  /** The JSON body of a POST. */
  body?: Record<string, unknown>;
  /** CAIP-2 network of the challenge (`eip155:8453`). */
  network: string;
}

/** A POSIX shell single-quoted word: `'` closes, escapes and reopens. */
export const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlSnippet(req: SnippetRequest): string {
  const lines =
    req.method === 'GET'
      ? [`curl -i ${shellQuote(req.url)}`]
      : [
          `curl -i -X POST ${shellQuote(req.url)} \\`,
          `  -H 'content-type: application/json' \\`,
          `  -d ${shellQuote(JSON.stringify(req.body ?? {}))}`,
        ];
  return [
    '# 1. The request: answered 402 with the terms in the PAYMENT-REQUIRED header (base64 JSON).',
    ...lines,
    '# 2. Sign those terms (EIP-3009, e.g. with the TypeScript client below) and send the same request again',
    '#    with the header  PAYMENT-SIGNATURE: <base64 payload>  added.',
  ].join('\n');
}

export function typescriptSnippet(req: SnippetRequest): string {
  const init =
    req.method === 'GET'
      ? ''
      : `, {\n  method: 'POST',\n  headers: { 'content-type': 'application/json' },\n  body: JSON.stringify(${JSON.stringify(req.body ?? {})}),\n}`;
  return `// npm install @x402/fetch @x402/evm viem
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm';
import { privateKeyToAccount } from 'viem/accounts';

const payer = privateKeyToAccount(process.env.PAYER_KEY as \`0x\${string}\`);
const fetchWithPayment = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: ${JSON.stringify(req.network)}, client: new ExactEvmScheme(payer) }],
});
const res = await fetchWithPayment(${JSON.stringify(req.url)}${init});
console.log(res.status, await res.json());`;
}
