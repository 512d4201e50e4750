/**
 * A real headless Chromium for tests: Debian's `chromium` (installed by
 * scripts/engines.sh), driven by playwright-core through its executablePath
 * (no browser download). The flags keep it off the network: only loopback
 * pages are loaded, and background services (updates, sync, safe browsing)
 * would otherwise try to reach the internet.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = () => existsSync(CHROMIUM_PATH);

/** Where tests leave screenshots (gitignored). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../output/screenshots/', import.meta.url));

const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-dev-shm-usage',
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh browser profile (new empty user-data-dir) with a 1400x1000 viewport. */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'chromium-profile-'));
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 1000 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
