/// <reference lib="dom" />
/**
 * The landing page as a first-time visitor meets it, in a real browser
 * (Debian's Chromium through playwright-core) against the real process on a
 * freshly started simulated market (no history, the default-like 90 s delay):
 *
 *   - from the first minute: before any sample is shown, each panel says what
 *     is coming and when; then the open hour appears, marked as such, and
 *     "data to" is the newest sample's time from the data;
 *   - at 360, 390 and 1440 px: no horizontal scroll, and axe-core (injected
 *     from its npm package) finds no serious or critical violation; screenshots
 *     under test/output/screenshots, to look at;
 *   - keyboards: the first Tab is the skip link to the market, whose focus lands
 *     on the content; health is one status with its components on demand;
 *   - without JavaScript: a <noscript> explanation, still no horizontal scroll;
 *   - a 429 from the dashboard's limiter (per client behind a trusted proxy:
 *     each page its own X-Forwarded-For address) stops the page's polls until
 *     its Retry-After has passed, and the page says so; a failed poll leaves
 *     what was drawn in place, marked as not updated.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';
import { eventually } from '../helpers/config.js';
import { hasChromium, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.js';

/** Ceilings of the waits: generous, so a loaded machine only makes the test slower. */
const START_MS = 240_000;
const PAGE_MS = 120_000;
const DELAY_S = 90;
const REFRESH_S = 5;
const LIMIT = 40;

let app: AppProcess;
let browser: TestBrowser;
let dataDir: string;
let axeSource: string;
let clients = 0;

beforeAll(async () => {
  if (!hasChromium())
    throw new Error('Debian chromium is missing: run `npm run engines:up` (scripts/engines.sh installs it)');
  axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  dataDir = await mkdtemp(join(tmpdir(), 'dashboard-pages-'));
  app = await startApp({
    DATA_DIR: dataDir,
    MARKET_SOURCE: 'simulated',
    DASHBOARD_DELAY_SECONDS: String(DELAY_S),
    DASHBOARD_REFRESH_SECONDS: String(REFRESH_S),
    DASHBOARD_RATE_LIMIT_PER_MINUTE: String(LIMIT),
    HTTP_TRUST_PROXY: 'true',
  });
  await waitHealthy(app, START_MS);
  browser = await launchBrowser();
  browser.context.setDefaultTimeout(PAGE_MS);
}, 2 * START_MS);

afterAll(async () => {
  await browser?.close();
  app?.child.kill('SIGTERM');
  await app?.exited;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A page of its own client (own X-Forwarded-For address, so its own rate-limit bucket) at `width` px. */
async function visitor(width: number, height = 900): Promise<{ page: Page; ip: string; problems: string[] }> {
  const ip = `10.29.0.${++clients}`;
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height });
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': ip });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return { page, ip, problems };
}

const ready = () => document.body.dataset.ready === '1';
const text = (page: Page, selector: string) => page.locator(selector).innerText();
const overflow = (page: Page) =>
  page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth }));

describe('the landing page from the first minute', () => {
  it(
    'says what is coming and when, then shows the open hour and the newest data time',
    async () => {
      const { page, problems } = await visitor(1440);
      await page.goto(`${app.url}/`);
      await page.waitForFunction(ready);
      // A fresh market: nothing is DELAY_S old yet.
      expect(await text(page, '#spread-summary')).toMatch(
        /^No spread samples of ETH\/USD yet .*final at \d\d:\d\d UTC\.$/,
      );
      expect(await text(page, '#latency-summary')).toMatch(/^No hour has closed yet: .* at \d\d:\d\d UTC\.$/);
      expect(await text(page, '#tape-summary')).toMatch(/^No dislocation of ETH\/USD opened more than 1 h ago/);
      expect(await text(page, '#updated')).toBe('no data yet');
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'dashboard-empty-1440.png'), fullPage: true });

      // Once the first samples are DELAY_S old: the open hour, marked as such (or, across an hour's end, a closed one).
      await page.waitForFunction(() => Number(document.body.dataset.spread) > 0, undefined, {
        timeout: (DELAY_S + 120) * 1000,
      });
      expect(await text(page, '#spread-summary')).toMatch(/open hour/i);
      // "data to" is the data's newest event time, as the endpoint gives it (not the clock).
      await eventually(
        () =>
          page.evaluate(async () => {
            const m = (await (await fetch('/dashboard/api/market?pair=ETH%2FUSD')).json()) as {
              window: { data_to: string | null; to: string };
            };
            return {
              shown: document.getElementById('updated')!.textContent,
              dataTo: m.window.data_to,
              to: m.window.to,
            };
          }),
        (r) => r.dataTo !== null && r.shown === `data to ${r.dataTo.slice(11, 19)} UTC`,
        PAGE_MS,
        1_000,
      );
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'dashboard-first-hour-1440.png'), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    },
    (DELAY_S + 120) * 1000 + 3 * PAGE_MS,
  );
});

describe('phones, desktops and keyboards', () => {
  for (const width of [360, 390, 1440]) {
    it(
      `${width} px: no horizontal scroll, no serious axe-core violation`,
      async () => {
        const { page, problems } = await visitor(width, width < 1000 ? 844 : 900);
        await page.goto(`${app.url}/`);
        await page.waitForFunction(ready);
        const size = await overflow(page);
        expect(size.scroll, `page ${size.scroll} px wide in a ${size.viewport} px viewport`).toBeLessThanOrEqual(
          size.viewport,
        );
        await page.evaluate(axeSource);
        const violations = await page.evaluate(async () => {
          const axe = (window as unknown as { axe: { run(c: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe; // prettier-ignore
          const result = await axe.run(document, { resultTypes: ['violations'] });
          return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) }));
        });
        console.log(`axe at ${width} px: ${JSON.stringify(violations)}`);
        expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `dashboard-${width}.png`), fullPage: true });
        expect(problems).toEqual([]);
        await page.close();
      },
      2 * PAGE_MS,
    );
  }

  it('the first Tab skips to the market; health is one status, its components on demand', async () => {
    const { page } = await visitor(390, 844);
    await page.goto(`${app.url}/`);
    await page.waitForFunction(ready);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('market');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => !!document.activeElement?.closest('#market'))).toBe(true);

    // Health: one badge in the header; the components behind a closed <details>.
    await page.waitForFunction(() =>
      /^status: (ok|degraded|down)/.test(document.getElementById('health-status')!.textContent!),
    );
    expect(await page.locator('header .badge').count()).toBe(1);
    expect(await page.locator('#health-components').isVisible()).toBe(false);
    await page.locator('#health summary').click();
    expect(await page.locator('#health-components li').count()).toBeGreaterThan(1);
    expect(await text(page, '#health-components')).toMatch(/pipeline: /);
    await page.close();
  });

  it('without JavaScript: the noscript explanation, and no horizontal scroll at 390 px', async () => {
    const { page } = await visitor(390, 844);
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
    await page.goto(`${app.url}/`);
    expect(await text(page, '.noscript')).toMatch(/drawn by JavaScript, which is off/);
    // No empty chart boxes or "Loading…" that would never resolve.
    expect(await page.locator('#spread').isVisible()).toBe(false);
    expect(await page.locator('#track-record').isVisible()).toBe(false);
    expect(await page.locator('#prices').isVisible()).toBe(true);
    const size = await overflow(page);
    expect(size.scroll).toBeLessThanOrEqual(size.viewport);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'dashboard-nojs-390.png'), fullPage: true });
    await page.close();
  });
});

/** Spends `ip`'s rate-limit bucket (as the trusted proxy names it): the next request of that client is a 429. */
async function spendBucket(ip: string): Promise<void> {
  let status = 0;
  for (let i = 0; i <= LIMIT && status !== 429; i++) {
    const res = await fetch(`${app.url}/dashboard/api/overview`, { headers: { 'x-forwarded-for': ip } });
    status = res.status;
    await res.arrayBuffer();
  }
  expect(status).toBe(429);
}

describe('rate limits and failed polls', () => {
  it(
    'a failed poll keeps what was drawn and says it is not updated',
    async () => {
      const { page, ip } = await visitor(1440);
      await page.goto(`${app.url}/`);
      await page.waitForFunction(() => Number(document.body.dataset.spread) > 0);
      await page.waitForFunction(() => /^status: /.test(document.getElementById('health-status')!.textContent!));
      const drawn = await text(page, '#spread-summary');
      const health = await text(page, '#health-status');
      await spendBucket(ip);
      await page.waitForFunction(() => /^busy: /.test(document.getElementById('updated')!.textContent!));
      expect(await text(page, '#spread-summary')).toMatch(/\(not updated: the last update failed; retrying\.\)$/);
      expect(await text(page, '#spread-summary')).toContain(drawn.replace(/ \(not updated.*$/, ''));
      expect(Number(await page.evaluate(() => document.body.dataset.spread))).toBeGreaterThan(0);
      expect(await page.locator('#spread canvas').count()).toBeGreaterThan(0);
      // The status failed too: it says so rather than showing the last one as current.
      expect(health).toMatch(/^status: (ok|degraded|down)/);
      await page.waitForFunction(
        () => document.getElementById('health-status')!.textContent === 'status: unknown (update failed)',
      );
      await page.close();
    },
    2 * PAGE_MS,
  );

  it(
    "a 429 stops the page's polls until its Retry-After has passed, and the page says so",
    async () => {
      const { page, ip } = await visitor(1440);
      // This client's bucket (its X-Forwarded-For address, as the trusted proxy appended it) is spent.
      await spendBucket(ip);
      // Another client behind the same proxy is not limited.
      expect(
        (await fetch(`${app.url}/dashboard/api/overview`, { headers: { 'x-forwarded-for': '10.29.1.1' } })).status,
      ).toBe(200);

      const polls: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/dashboard/api/')) polls.push(r.url());
      });
      await page.goto(`${app.url}/`);
      await page.waitForFunction(() =>
        /^busy: next update in \d+ s$/.test(document.getElementById('updated')!.textContent!),
      );
      const retryAfter = Number(/\d+/.exec(await text(page, '#updated'))![0]);
      expect(retryAfter).toBeGreaterThan(3 * REFRESH_S);
      const before = polls.length;
      // Three refresh periods (well inside Retry-After): a page ignoring it would have polled six more times.
      await page.waitForTimeout(3 * REFRESH_S * 1000);
      expect(polls.length).toBe(before);
      expect(await text(page, '#spread-summary')).toMatch(/not updated/);
      await page.close();
    },
    2 * PAGE_MS,
  );
});
