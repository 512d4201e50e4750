/**
 * The dashboard's static files, served by Koa (@koa/send) from where they
 * live: the page's own script and stylesheet (api/dashboard/static/, plain
 * browser code, no build step) and TradingView's lightweight-charts standalone
 * bundle from its npm package. Each URL carries a content hash (`?v=`): a
 * request with the current hash is cached for a year (`immutable`), any other
 * for five minutes, so a deploy never serves a stale script to a fresh page.
 * (A query version, not a hashed file name: the same cache key for browsers
 * and shared caches, and one file on disk per asset.) Every answer carries
 * a strong ETag, the content's SHA-256 computed once at start, and the file's
 * Last-Modified, so a revalidation is a 304 (koa-conditional-get).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { send } from '@koa/send';

export const ASSET_PREFIX = '/dashboard/assets';

interface Asset {
  root: string;
  file: string;
  /** First 12 hex digits of the SHA-256: the URL's version. */
  hash: string;
  /** The whole SHA-256, as a strong ETag. */
  etag: string;
}

const here = dirname(fileURLToPath(import.meta.url));
// The package exports only its ESM entry and package.json; the standalone (global) bundle sits beside them in dist/.
const chartsDist = join(dirname(createRequire(import.meta.url).resolve('lightweight-charts/package.json')), 'dist');

const SOURCES: Record<string, { root: string; file: string }> = {
  'lightweight-charts.js': { root: chartsDist, file: 'lightweight-charts.standalone.production.js' },
  'dashboard.js': { root: join(here, 'static'), file: 'dashboard.js' },
  'dashboard.css': { root: join(here, 'static'), file: 'dashboard.css' },
  'paywall.js': { root: join(here, '..', 'paywall', 'static'), file: 'paywall.js' },
};

let table: Map<string, Asset> | undefined;

function assets(): Map<string, Asset> {
  table ??= new Map(
    Object.entries(SOURCES).map(([name, s]) => {
      const digest = createHash('sha256')
        .update(readFileSync(join(s.root, s.file)))
        .digest('hex');
      return [name, { ...s, hash: digest.slice(0, 12), etag: `"${digest}"` }];
    }),
  );
  return table;
}

/**
 * CSP hash sources of the `<style>` elements the chart library inserts (its
 * attribution logo's fixed stylesheet), read from the bundle served, so the
 * pages' Content-Security-Policy allows exactly them and no other inline style.
 */
export function inlineStyleHashes(): string[] {
  const bundle = readFileSync(
    join(SOURCES['lightweight-charts.js']!.root, SOURCES['lightweight-charts.js']!.file),
    'utf8',
  );
  const styles = bundle.matchAll(/createElement\("style"\),[^;]{0,80}?\.innerText="([^"\\]*)"/g);
  return [...styles].map(([, css]) => `sha256-${createHash('sha256').update(css!).digest('base64')}`);
}

/** The versioned URL of an asset, for pages to reference. */
export function assetUrl(name: keyof typeof SOURCES & string): string {
  const asset = assets().get(name);
  if (!asset) throw new Error(`unknown dashboard asset ${name}`);
  return `${ASSET_PREFIX}/${name}?v=${asset.hash}`;
}

/** GET /dashboard/assets/:name; false when there is no such asset (the router answers 404). */
export async function serveAsset(ctx: Context, name: string): Promise<boolean> {
  const asset = assets().get(name);
  if (!asset) return false;
  const current = ctx.query.v === asset.hash;
  ctx.etag = asset.etag;
  await send(ctx, asset.file, { root: asset.root, maxage: 300_000 });
  // Shared caches may keep the current version too; @koa/send's own header would leave out `public`.
  if (current) ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  return true;
}
