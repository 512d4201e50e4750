/**
 * The dashboard's static files, served by Koa (@koa/send) from where they
 * live: the page's own script and stylesheet (api/dashboard/static/, plain
 * browser code, no build step) and TradingView's lightweight-charts standalone
 * bundle from its npm package. Each URL carries a content hash (`?v=`): a
 * request with the current hash is cached for a year (`immutable`), any other
 * for five minutes, so a deploy never serves a stale script to a fresh page.
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
  hash: string;
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
    Object.entries(SOURCES).map(([name, s]) => [
      name,
      {
        ...s,
        hash: createHash('sha256')
          .update(readFileSync(join(s.root, s.file)))
          .digest('hex')
          .slice(0, 12),
      },
    ]),
  );
  return table;
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
  await send(ctx, asset.file, {
    root: asset.root,
    maxage: current ? 365 * 24 * 3600_000 : 300_000,
    immutable: current,
  });
  ctx.set('X-Content-Type-Options', 'nosniff');
  return true;
}
