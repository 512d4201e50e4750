/**
 * Bundled x402 client: pays for one call with @x402/fetch and prints the
 * status, the body and the decoded PAYMENT-RESPONSE (settlement transaction).
 *
 *   npm run pay -- GET /api/v1/crypto/spread-candles?pair=ETH/USD
 *   npm run pay -- POST /api/v1/crypto/impact-simulation '{"pair":"ETH/USD","side":"buy","size_usd":1000}'
 *
 * Server and payer: scripts/pay-target.ts (PAY_SERVER_URL, else HTTP_PORT,
 * else `$DATA_DIR/devchain.json`; PAYER_KEY, else the dev chain's demo payer;
 * PAY_ASSET, PAY_MAX_ATOMIC); the first line printed says which server and how
 * to change it.
 */
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { payer, payTarget } from './pay-target.js';

const USAGE = 'usage: npm run pay -- <GET|POST> <path> [json-body]';

async function main(): Promise<number> {
  const [methodArg, path, body] = process.argv.slice(2);
  const method = methodArg?.toUpperCase();
  if (!method || !path || !['GET', 'POST'].includes(method)) {
    console.error(USAGE);
    return 2;
  }
  if (body !== undefined) {
    try {
      JSON.parse(body);
    } catch {
      console.error(`the body is not JSON: ${body}\n${USAGE}`);
      return 2;
    }
  }
  const target = await payTarget();
  const { server, from } = target;
  console.log(`server ${server} (from ${from}; set PAY_SERVER_URL or HTTP_PORT to pay another)`);
  const who = payer(target);
  if ('error' in who) {
    console.error(who.error);
    return 2;
  }
  const payFetch = wrapFetchWithPayment(fetch, who.client);

  const url = `${server}${path.startsWith('/') ? path : `/${path}`}`;
  console.log(`${method} ${url}  (payer ${who.address}${who.demo ? ', dev chain demo payer' : ''})`);
  const t0 = performance.now();
  let res: Response;
  try {
    res = await payFetch(url, {
      method,
      ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
    });
  } catch (err) {
    throw new Error(
      `${url}: ${err instanceof Error ? err.message : String(err)} (is the server running there? set PAY_SERVER_URL or HTTP_PORT)`,
    );
  }
  const elapsed = Math.round(performance.now() - t0);
  const text = await res.text();
  console.log(`\nstatus: ${res.status} ${res.statusText}  (${elapsed} ms)`);
  console.log('\nbody:');
  try {
    console.log(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    console.log(text);
  }
  const settlement = res.headers.get('payment-response');
  if (settlement) {
    const decoded = decodePaymentResponseHeader(settlement);
    console.log('\nPAYMENT-RESPONSE:');
    console.log(JSON.stringify(decoded, null, 2));
    if (decoded.transaction) console.log(`\nsettled: transaction ${decoded.transaction} on ${decoded.network}`);
  } else {
    console.log('\nPAYMENT-RESPONSE: none (nothing was charged)');
  }
  const required = res.headers.get('payment-required');
  if (required) {
    console.log('\nPAYMENT-REQUIRED:');
    console.log(JSON.stringify(decodePaymentRequiredHeader(required), null, 2));
  }
  return res.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`pay failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
