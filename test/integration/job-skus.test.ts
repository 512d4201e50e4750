/**
 * Job SKUs end to end, as a scaled deployment runs them: the api role and the
 * worker role in two processes of the real entry point (`roles/main.ts`),
 * BullMQ on the running Redis between them, x402 payments on the dev chain
 * (SETTLEMENT=devchain in the api process), paid by the real @x402/fetch
 * client. Balances are read on chain before and after each case.
 *
 *  - a valid paid call: the worker's result is the 200 body, settled on chain
 *    (PAYMENT-RESPONSE with a transaction; the payer pays exactly the price);
 *  - input the processor refuses (a 4xx JobError): its code and field reach
 *    the caller, nothing is settled, the balance does not move;
 *  - input the schema refuses: 400 before any challenge;
 *  - the catalogue marks exactly the registered processors available.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { createPublicClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readDevChainInfo, type DevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';
import { eventually, testConfig, uniqueName } from '../helpers/config.js';

const config = testConfig();
const prefix = uniqueName('jobskus');
let apiDir: string;
let workerDir: string;
let api: AppProcess;
let worker: AppProcess;
let chain: DevChainInfo;
let payFetch: typeof fetch;
let balanceOf: (who: Address) => Promise<bigint>;

const engines = {
  QUEUE: 'bullmq',
  REDIS_URL: config.REDIS_URL,
  QUEUE_PREFIX: prefix,
  STORE: 'duckdb',
  BUS: 'memory',
  NODE_ENV: 'test',
};

beforeAll(async () => {
  apiDir = await mkdtemp(join(tmpdir(), 'jobskus-api-'));
  workerDir = await mkdtemp(join(tmpdir(), 'jobskus-worker-'));
  worker = await startApp({ ...engines, ROLE: 'worker', DATA_DIR: workerDir });
  api = await startApp({ ...engines, ROLE: 'api', DATA_DIR: apiDir, SETTLEMENT: 'devchain' });
  await waitHealthy(worker, 180_000); // starting a role (tsx, migrations) takes minutes on a busy machine
  // No ingest/aggregate role runs here (the pipeline canary is absent): wait for what this test needs,
  // a worker answering system.ping through Redis and the settlement on the dev chain.
  await eventually(
    async () => {
      if (api.child.exitCode !== null) throw new Error(`api exited:\n${api.output()}`);
      const res = await fetch(`${api.url}/health`).catch(() => undefined);
      return res ? ((await res.json()) as { components: Record<string, { status: string }> }).components : undefined;
    },
    (c) => c?.workers?.status === 'ok' && c?.settlement?.status === 'ok' && c?.queue?.status === 'ok',
    180_000,
    250,
  );
  chain = (await eventually(
    () => readDevChainInfo(apiDir).catch(() => undefined),
    (c) => c !== undefined,
    60_000,
  )) as DevChainInfo;
  const account = privateKeyToAccount(chain.payer_key as Hex);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  client.setSpendControls({
    allowedAssets: [
      { network: chain.network as `eip155:${number}`, asset: chain.asset, maxAmountPerPayment: '200000' },
    ],
  });
  payFetch = wrapFetchWithPayment(fetch, client);
  const rpc = createPublicClient({ transport: http(chain.rpc_url) });
  balanceOf = (who) =>
    rpc.readContract({ address: chain.asset, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
}, 420_000);

afterAll(async () => {
  for (const p of [api, worker]) {
    if (p && p.child.exitCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  }
  await rm(apiDir, { recursive: true, force: true });
  await rm(workerDir, { recursive: true, force: true });
}, 120_000);

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('job SKUs through the api and worker processes (BullMQ, x402 on the dev chain)', () => {
  it('discovery marks exactly the SKUs with a registered processor available', async () => {
    const discovery = (await (await fetch(`${api.url}/api/v1/discovery`)).json()) as {
      endpoints: { path: string; available: boolean }[];
    };
    const served = new Set(JOB_SKUS.filter((s) => s.processor).map((s) => s.id));
    for (const id of [
      'stealth-dom',
      'airgap-scrub',
      'rag-shrink',
      'code-denoise',
      'domain-check',
      'dex-price-summary',
      'image-ocr-shrink',
      'embed-text',
      'embed-multilingual',
      'summarize',
      'x-sentiment',
    ]) {
      const entry = discovery.endpoints.find((e) => e.path === `/api/v1/${id}`);
      expect(entry, id).toBeDefined();
      expect(entry!.available, id).toBe(served.has(id));
    }
  });

  it.runIf(JOB_SKUS.some((s) => s.id === 'code-denoise' && s.processor))(
    'a paid call runs in the worker and is settled on chain for exactly the price',
    async () => {
      const before = { payer: await balanceOf(chain.payer), payTo: await balanceOf(chain.pay_to) };
      const code =
        'const url = "http://x.test/a//b"; // trailing comment\n/* block */\nfunction f(a) {\n\n  return a; // done\n}\n';
      const res = await payFetch(`${api.url}/api/v1/code-denoise`, post({ code, language: 'javascript' }));
      const body = (await res.json()) as { success: boolean; code: string; language: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.success).toBe(true);
      expect(body.code).toContain('"http://x.test/a//b"'); // the string literal kept exactly
      expect(body.code).not.toContain('trailing comment');
      expect(body.code).not.toContain('block');
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt.success).toBe(true);
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const after = { payer: await balanceOf(chain.payer), payTo: await balanceOf(chain.pay_to) };
      expect(before.payer - after.payer).toBe(4000n);
      expect(after.payTo - before.payTo).toBe(4000n);
    },
  );

  it.runIf(JOB_SKUS.some((s) => s.id === 'summarize' && s.processor))(
    'input the processor refuses comes back as its 4xx code with the field, and is not charged',
    async () => {
      const before = await balanceOf(chain.payer);
      // Only the worker counts words: a text of punctuation passes the schema and is refused by the processor.
      const res = await payFetch(`${api.url}/api/v1/summarize`, post({ text: '!!! ??? ...' }));
      const body = (await res.json()) as { status: number; code: string; field?: string };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body).toMatchObject({ code: 'empty_text', field: 'text' });
      expect(res.headers.get('payment-response')).toBeNull();
      expect(await balanceOf(chain.payer)).toBe(before);
    },
  );

  it('input the schema refuses is a 400 before any challenge', async () => {
    const res = await fetch(`${api.url}/api/v1/code-denoise`, post({ code: '', language: 'javascript' }));
    expect(res.status).toBe(400);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(await res.json()).toMatchObject({ code: expect.any(String), field: 'code' });
    // The supported-language list is part of the schema: an unknown language is never challenged (issue 14).
    const language = await fetch(`${api.url}/api/v1/code-denoise`, post({ code: 'x = 1', language: 'brainfuck-99' }));
    expect(language.status).toBe(400);
    expect(language.headers.get('payment-required')).toBeNull();
    expect(await language.json()).toMatchObject({ code: 'unsupported_language', field: 'language' });
  });
});
