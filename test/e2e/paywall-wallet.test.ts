/// <reference lib="dom" />
/**
 * The paywall as a person meets it, in a real browser (Debian's Chromium
 * through playwright-core) against the real process on the simulated market
 * and its local dev chain, with an injected EIP-1193 wallet that signs in Node
 * with the dev chain's demo payer and starts on another chain (Ethereum, 0x1):
 *
 *   - a paid GET: the page shows the sample response and curl/TypeScript
 *     snippets for this very request; paying asks the wallet to switch
 *     (EIP-3326), gets "unknown chain" (4902), adds the chain (EIP-3085),
 *     switches, signs and shows the paid answer; the state line and the title
 *     no longer say "Payment required";
 *   - a refused switch is said in plain words and nothing is signed or paid;
 *   - a POST route opened in the browser: a form generated from its input
 *     schema (API clients still get 405), paid from the form;
 *   - at 390 and 360 px wide (and 1440) neither page scrolls sideways, and
 *     axe-core finds no serious or critical violation (contrast included).
 * Screenshots go to a temporary directory (its path is printed).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { readDevChainInfo, type DevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';
import { eventually } from '../helpers/config.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { exposeNodeSigner } from '../helpers/browser-signer.js';

/** Generous ceilings: a loaded machine only makes the test slower. */
const START_MS = 240_000;
const PAGE_MS = 120_000;

const GET_PATH = '/api/v1/crypto/spread-candles?pair=ETH/USD';
const POST_PATH = '/api/v1/crypto/impact-simulation';
const POST_BODY = { pair: 'ETH-USD', side: 'buy', size_usd: 25000 };

let app: AppProcess;
let browser: TestBrowser;
let dataDir: string;
let shots: string;
let chain: DevChainInfo;
let axeSource: string;

beforeAll(async () => {
  if (!hasChromium())
    throw new Error('Debian chromium is missing: run `npm run engines:up` (scripts/engines.sh installs it)');
  axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  dataDir = await mkdtemp(join(tmpdir(), 'paywall-wallet-'));
  shots = await mkdtemp(join(tmpdir(), 'paywall-shots-'));
  console.log(`screenshots: ${shots}`);
  app = await startApp({ DATA_DIR: dataDir, MARKET_SOURCE: 'simulated', DASHBOARD_DELAY_SECONDS: '0' });
  await waitHealthy(app, START_MS);
  chain = await readDevChainInfo(dataDir);
  // Both routes are ready to be challenged (stored candles, a fresh simulated book).
  await eventually(
    async () => {
      const get = await fetch(`${app.url}${GET_PATH}`, { headers: { accept: 'application/json' } });
      const post = await fetch(`${app.url}${POST_PATH}`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(POST_BODY),
      });
      return [get.status, post.status];
    },
    (s) => s[0] === 402 && s[1] === 402,
    START_MS,
    1_000,
  );
  browser = await launchBrowser();
  browser.context.setDefaultTimeout(PAGE_MS);
}, 3 * START_MS);

afterAll(async () => {
  await browser?.close();
  app?.child.kill('SIGTERM');
  await app?.exited;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface WalletOptions {
  /** The wallet's chain at the start (hex). */
  startChain: string;
  /** Refuse wallet_switchEthereumChain as a person would (4001). */
  rejectSwitch?: boolean;
}

/**
 * An injected EIP-1193 wallet: accounts, chain id, EIP-3326 switch (4902 for a chain it was not given), EIP-3085
 * add, chainChanged events, eth_call forwarded to the dev chain, and EIP-712 signatures made in Node with the
 * demo payer's key. Every request is recorded in `window.walletCalls`.
 */
async function withWallet(page: Page, options: WalletOptions): Promise<void> {
  const payer = privateKeyToAccount(chain.payer_key);
  await exposeNodeSigner(page, chain.payer_key);
  await page.exposeFunction('nodeEthCall', async (params: unknown[]) => {
    const res = await fetch(chain.rpc_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params }),
    });
    return ((await res.json()) as { result: string }).result;
  });
  await page.addInitScript(
    ({ address, startChain, rejectSwitch }: { address: string } & WalletOptions) => {
      const w = window as unknown as {
        ethereum: unknown;
        walletCalls: string[];
        nodeSignTypedData: (json: string) => Promise<string>;
        nodeEthCall: (params: unknown[]) => Promise<string>;
      };
      const fail = (code: number, message: string) => Object.assign(new Error(message), { code });
      const known = new Set(['0x1']);
      const listeners: Record<string, ((v: unknown) => void)[]> = {};
      let current = startChain;
      w.walletCalls = [];
      w.ethereum = {
        on: (event: string, fn: (v: unknown) => void) => (listeners[event] ??= []).push(fn),
        request: async ({ method, params }: { method: string; params?: unknown[] }) => {
          w.walletCalls.push(method);
          if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
          if (method === 'eth_chainId') return current;
          if (method === 'wallet_switchEthereumChain') {
            const { chainId } = params![0] as { chainId: string };
            if (rejectSwitch) throw fail(4001, 'User rejected the request.');
            if (!known.has(chainId)) throw fail(4902, `Unrecognized chain ID "${chainId}".`);
            current = chainId;
            for (const fn of listeners.chainChanged ?? []) fn(chainId);
            return null;
          }
          if (method === 'wallet_addEthereumChain') {
            const p = params![0] as { chainId: string; rpcUrls: string[]; chainName: string };
            if (!p.rpcUrls?.length || !p.chainName) throw fail(-32602, 'invalid chain parameters');
            known.add(p.chainId);
            return null;
          }
          if (method === 'eth_call') return w.nodeEthCall(params!);
          if (method === 'eth_signTypedData_v4') {
            const domain = (JSON.parse(String(params![1])) as { domain: { chainId: number } }).domain;
            if (`0x${domain.chainId.toString(16)}` !== current) throw fail(-32603, 'chainId does not match the wallet');
            return w.nodeSignTypedData(String(params![1]));
          }
          throw fail(4200, `unsupported ${method}`);
        },
      };
    },
    { address: payer.address, ...options },
  );
}

const walletCalls = (page: Page) => page.evaluate(() => (window as unknown as { walletCalls: string[] }).walletCalls);

/** Widest element's right edge against the viewport: > 0 means the page scrolls sideways. */
const horizontalOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** axe-core's serious and critical violations on the page as it is now (contrast, labels, names, ...). */
async function seriousViolations(page: Page): Promise<unknown[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(c: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe; // prettier-ignore
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

async function paid(page: Page): Promise<string> {
  await page.waitForFunction(() => document.body.dataset.paid !== undefined, undefined, { timeout: PAGE_MS });
  return page.evaluate(() => document.body.dataset.paid!);
}

describe('paywall of a paid GET', () => {
  it(
    'shows a sample and snippets, then pays from a wallet on the wrong chain after adding and switching',
    async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 390, height: 844 });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      // A CSP refusal (the page's <style> hash, its script) is a console error. (The page's own 402 is one too.)
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      await withWallet(page, { startChain: '0x1' });

      const res = await page.goto(`${app.url}${GET_PATH}`);
      expect(res?.status()).toBe(402);
      expect(res?.headers()['payment-required']).toBeTruthy();
      expect(res?.headers()['content-security-policy']).not.toMatch(/unsafe-inline/);
      expect(await page.locator('#state').textContent()).toMatch(/Payment required/);
      const sample = JSON.parse((await page.locator('#sample').textContent()) ?? '{}') as Record<string, unknown>;
      expect(sample).toHaveProperty('pair');
      expect(await page.locator('#snippet-curl').textContent()).toContain(`curl -i '${app.url}${GET_PATH}'`);
      const ts = (await page.locator('#snippet-ts').textContent()) ?? '';
      expect(ts).toContain(`fetchWithPayment(${JSON.stringify(`${app.url}${GET_PATH}`)})`);
      expect(ts).toContain(JSON.stringify(chain.network));
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(shots, 'get-390.png'), fullPage: true });

      await page.locator('#pay').click();
      expect(await paid(page)).toBe('200');
      expect(await walletCalls(page)).toEqual(
        expect.arrayContaining(['wallet_switchEthereumChain', 'wallet_addEthereumChain', 'eth_signTypedData_v4']),
      );
      const calls = await walletCalls(page);
      expect(calls.indexOf('wallet_addEthereumChain')).toBeLessThan(calls.indexOf('eth_signTypedData_v4'));
      const result = JSON.parse((await page.locator('#result').textContent()) ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({ pair: 'ETH/USD' });
      expect(await page.locator('#answer').isVisible()).toBe(true);
      expect(await page.locator('#state').textContent()).toMatch(/^Paid/);
      expect(await page.title()).not.toMatch(/Payment required/);
      expect(await page.locator('main').textContent()).not.toMatch(/Payment required/);
      expect(await page.locator('#pay-status').textContent()).toMatch(/settled in transaction 0x[0-9a-f]{64}/);
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(shots, 'get-390-paid.png'), fullPage: true });
      await page.setViewportSize({ width: 1440, height: 900 });
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(shots, 'get-1440-paid.png'), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    },
    3 * PAGE_MS,
  );

  it(
    'says plainly that the switch was refused, and signs nothing',
    async () => {
      const page = await browser.context.newPage();
      await withWallet(page, { startChain: '0x1', rejectSwitch: true });
      await page.goto(`${app.url}${GET_PATH}`);
      await page.locator('#pay').click();
      expect(await paid(page)).toBe('error');
      const text = (await page.locator('#pay-status').textContent()) ?? '';
      expect(text).toMatch(/declined to switch the wallet to .*nothing was paid/i);
      expect(text).not.toMatch(/User rejected the request/);
      expect(await walletCalls(page)).not.toContain('eth_signTypedData_v4');
      expect(await page.locator('#state').textContent()).toMatch(/Payment required/);
      await page.close();
    },
    3 * PAGE_MS,
  );
});

describe('paywall of a POST route', () => {
  it('API clients still get 405 on a GET of the path', async () => {
    for (const accept of ['application/json', '*/*']) {
      const res = await fetch(`${app.url}${POST_PATH}`, { headers: { accept } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
  });

  it(
    'a browser gets a form from the input schema and pays from it',
    async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 360, height: 780 });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await withWallet(page, { startChain: '0x1' });
      const res = await page.goto(`${app.url}${POST_PATH}`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-type']).toMatch(/text\/html/);
      // One field per input property, prefilled with the route's example input.
      expect(await page.locator('#field-pair').inputValue()).toBe(POST_BODY.pair);
      expect(await page.locator('#field-side').inputValue()).toBe(POST_BODY.side);
      expect(await page.locator('#field-size_usd').inputValue()).toBe(String(POST_BODY.size_usd));
      expect(await page.locator('#field-size_base').count()).toBe(1);
      const curl = (await page.locator('#snippet-curl').textContent()) ?? '';
      expect(curl).toContain(`curl -i -X POST '${app.url}${POST_PATH}'`);
      expect(curl).toContain(`-d '${JSON.stringify(POST_BODY)}'`);
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(shots, 'post-360.png'), fullPage: true });

      // A bad field is refused before any payment, in words, naming the field.
      await page.locator('#field-pair').fill('NOPE-USD');
      await page.locator('#pay').click();
      expect(await paid(page)).toBe('error');
      expect(await page.locator('#pay-status').textContent()).toMatch(/refused this request before any payment.*400/);
      expect(await walletCalls(page)).not.toContain('eth_signTypedData_v4');
      await page.evaluate(() => delete document.body.dataset.paid);

      await page.locator('#field-pair').fill(POST_BODY.pair);
      await page.locator('#field-size_usd').fill('1000');
      await page.locator('#pay').click();
      expect(await paid(page)).toBe('200');
      const result = JSON.parse((await page.locator('#result').textContent()) ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({ pair: 'ETH/USD' });
      expect(await page.locator('#state').textContent()).toMatch(/^Paid/);
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(shots, 'post-360-paid.png'), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    },
    3 * PAGE_MS,
  );
});
