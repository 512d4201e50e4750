/// <reference lib="dom" />
/**
 * The people's doors in a real browser (Debian's Chromium through
 * playwright-core) against the real process on the simulated market:
 *
 *   - `/`: the landing page loads its assets, the live dashboard draws its
 *     charts from the free endpoints (the spread chart has data and ink; the
 *     tape is an hour late, so empty here), the price list is the catalogue's, and the console
 *     stays free of errors; a screenshot is saved under test/output/screenshots;
 *   - a paid GET opened in the browser: the paywall page (402, the price, the
 *     x402 flow) instead of JSON, while an API client still gets JSON; then the
 *     page pays with an injected EIP-1193 wallet (signing in Node with the dev
 *     chain's demo payer) and shows the 200 result and its settlement.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { readDevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';
import { eventually } from '../helpers/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { hasChromium, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.js';
import { exposeNodeSigner } from '../helpers/browser-signer.js';

/**
 * Ceilings of the waits on the app and the browser: generous, so a loaded machine only makes the test slower
 * (a start-up takes ~15 s and a first chart ~1 s on a quiet one).
 */
const START_MS = 240_000;
const PAGE_MS = 120_000;

let app: AppProcess;
let browser: TestBrowser;
let dataDir: string;
let tapePair: string;

beforeAll(async () => {
  if (!hasChromium())
    throw new Error('Debian chromium is missing: run `npm run engines:up` (scripts/engines.sh installs it)');
  dataDir = await mkdtemp(join(tmpdir(), 'browser-doors-'));
  app = await startApp({
    DATA_DIR: dataDir,
    MARKET_SOURCE: 'simulated',
    DASHBOARD_DELAY_SECONDS: '0',
    DASHBOARD_REFRESH_SECONDS: '2',
    DASHBOARD_RATE_LIMIT_PER_MINUTE: '100000',
    DISLOCATION_MIN_NET_BPS: '-20',
    DISLOCATION_MIN_PROFIT_USD: '0', // -20 bps nets pay nothing: no minimum profit either
  });
  await waitHealthy(app, START_MS);
  // The simulated market has stored candles and opened a dislocation. Items that pay after costs come at the
  // simulator's heavy-tailed intervals (minutes apart at times), so this test opens items from -20 bps net (the
  // dashboard draws what the detector opened, whatever its threshold), and shows the first pair that has one.
  const pairs = loadPairs().pairs.map((p) => p.pair);
  tapePair = (await eventually(
    async () => {
      for (const pair of pairs) {
        const m = (await (await fetch(`${app.url}/dashboard/api/market?pair=${encodeURIComponent(pair)}`)).json()) as {
          spread: { points: unknown[] };
        };
        if (m.spread.points.length > 0) return pair;
      }
      return undefined;
    },
    (pair) => pair !== undefined,
    START_MS,
    1_000,
  )) as string;
  browser = await launchBrowser();
  // Navigation, locators and screenshots too (playwright's default is 30 s).
  browser.context.setDefaultTimeout(PAGE_MS);
}, 3 * START_MS);

afterAll(async () => {
  await browser?.close();
  app?.child.kill('SIGTERM');
  await app?.exited;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('landing page and live dashboard', () => {
  it(
    'draws the charts and the tape from the free endpoints, without console errors',
    async () => {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()}`));

      const t0 = Date.now();
      const res = await page.goto(`${app.url}/`, { waitUntil: 'load' });
      expect(res?.status()).toBe(200);
      await page.selectOption('#pair', tapePair);
      const drawn = (pair: string) => {
        const d = document.body.dataset;
        return d.ready === '1' && d.pair === pair && Number(d.spread) > 0;
      };
      await page.waitForFunction(drawn, tapePair, { timeout: PAGE_MS });
      const firstChartMs = Date.now() - t0;
      // The health badges follow /health at each refresh (every 2 s): on a loaded machine the pipeline can lag for a
      // moment. Wait for them to show ok; if they never do, the assertions below say what they show.
      const healthOk = () => {
        const text = document.querySelector('#health')?.textContent ?? '';
        return /status: ok/.test(text) && /pipeline: ok/.test(text);
      };
      await page.waitForFunction(healthOk, undefined, { timeout: PAGE_MS }).catch(() => undefined);

      const facts = await page.evaluate(() => {
        const inked = (id: string) =>
          Array.from(document.querySelectorAll<HTMLCanvasElement>(`#${id} canvas`)).some((c) => {
            const g = c.getContext('2d');
            if (!g || !c.width || !c.height) return false;
            const data = g.getImageData(0, 0, c.width, c.height).data;
            for (let i = 0; i < data.length; i += 4)
              if (data[i + 3]! > 0 && (data[i]! < 200 || data[i + 1]! < 200)) return true;
            return false;
          });
        return {
          spread: Number(document.body.dataset.spread),
          spreadInked: inked('spread'),
          prices: document.querySelectorAll('table.prices tbody tr').length,
          health: document.querySelector('#health')?.textContent ?? '',
        };
      });
      expect(facts.spread).toBeGreaterThan(0);
      expect(facts.spreadInked).toBe(true);
      expect(facts.prices).toBe(19); // the spec's 17 routes, the stream and bulk history (issue 30)
      expect(facts.health).toMatch(/status: ok/);
      expect(facts.health).toMatch(/pipeline: ok/);
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'dashboard.png'), fullPage: true });
      expect(problems).toEqual([]);
      console.log(`dashboard: first chart drawn ${firstChartMs} ms after navigation`);
      await page.close();
    },
    3 * PAGE_MS,
  );

  it('serves its assets with caching headers keyed by content hash', async () => {
    const html = await (await fetch(`${app.url}/`)).text();
    const src = /src="(\/dashboard\/assets\/lightweight-charts\.js\?v=[0-9a-f]{12})"/.exec(html)?.[1];
    expect(src).toBeDefined();
    const res = await fetch(`${app.url}${src}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable/);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    const stale = await fetch(`${app.url}/dashboard/assets/lightweight-charts.js?v=000000000000`);
    expect(stale.headers.get('cache-control')).toBe('max-age=300');
    expect((await fetch(`${app.url}/dashboard/assets/nothing.js`)).status).toBe(404);
  });
});

describe('browser paywall', () => {
  const path = '/api/v1/crypto/spread-candles?pair=ETH/USD';

  it('API clients keep the JSON challenge', async () => {
    const res = await fetch(`${app.url}${path}`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.headers.get('payment-required')).toBeTruthy();
    const curlLike = await fetch(`${app.url}${path}`, { headers: { accept: '*/*' } });
    expect(curlLike.headers.get('content-type')).toMatch(/json/);
  });

  it(
    'a browser gets the paywall page, and pays from it with a wallet',
    async () => {
      const info = await readDevChainInfo(dataDir);
      const payer = privateKeyToAccount(info.payer_key as `0x${string}`);
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));

      // An injected EIP-1193 wallet whose signatures are made in Node with the demo payer's key.
      await exposeNodeSigner(page, info.payer_key as `0x${string}`);
      // Already on the payment's chain (the page checks it first; test/e2e/paywall-wallet.test.ts switches chains).
      await page.addInitScript(
        ({ address, chainId }: { address: string; chainId: string }) => {
          const w = window as unknown as { ethereum: unknown; nodeSignTypedData: (json: string) => Promise<string> };
          w.ethereum = {
            request: async ({ method, params }: { method: string; params?: unknown[] }) => {
              if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
              if (method === 'eth_chainId') return chainId;
              if (method === 'eth_signTypedData_v4') return w.nodeSignTypedData(String(params![1]));
              throw new Error(`unsupported ${method}`);
            },
          };
        },
        { address: payer.address, chainId: `0x${info.chain_id.toString(16)}` },
      );

      const res = await page.goto(`${app.url}${path}`);
      expect(res?.status()).toBe(402);
      expect(res?.headers()['content-type']).toMatch(/text\/html/);
      expect(res?.headers()['payment-required']).toBeTruthy();
      await expect(page.locator('#price').textContent()).resolves.toContain('0.015 USDC');
      await expect(page.locator('h1').textContent()).resolves.toMatch(/candle/i);
      const text = await page.locator('main').textContent();
      expect(text).toContain('PAYMENT-SIGNATURE');
      expect(text).toContain('spread_candles');
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'paywall.png'), fullPage: true });

      await page.locator('#pay').click();
      await page.waitForFunction(() => document.body.dataset.paid !== undefined, undefined, { timeout: PAGE_MS });
      expect(await page.evaluate(() => document.body.dataset.paid)).toBe('200');
      const result = JSON.parse((await page.locator('#result').textContent()) ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({ pair: 'ETH/USD', interval: '15m' });
      expect(typeof result.open_raw_spread_bps).toBe('number');
      await expect(page.locator('#pay-status').textContent()).resolves.toMatch(/settled in transaction 0x[0-9a-f]{64}/);
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'paywall-paid.png'), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    },
    3 * PAGE_MS,
  );
});
