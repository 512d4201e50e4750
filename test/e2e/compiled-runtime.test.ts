/**
 * The production tree (`npm run build`: scripts/build-runtime.sh) runs under plain `node`, as the image's CMD runs
 * it: no TypeScript loader, no `.ts` module, no development dependency outside the dev chain. Built into a
 * temporary folder with node_modules beside it, started on embedded defaults with the simulated market, every
 * module it resolves written down (test/helpers/module-recorder.mjs): it answers /health, challenges a paid route
 * with a 402, and drains on SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'compiled-runtime-'));
const tree = join(work, 'app');
const record = join(work, 'modules.txt');

/** Packages (by node_modules name) that `npm ci --omit=dev` installs: the production dependencies and theirs. */
function productionPackages(): Set<string> {
  const paths = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
  const names = paths.split('\n').map((p) => /node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(p.trim())?.[1]);
  return new Set(names.filter((n) => n !== undefined));
}
/** The dev chain (embedded default settlement) is the one development tool a default start uses. */
const DEV_CHAIN = new Set(['hardhat']);

let app: AppProcess | undefined;

beforeAll(() => {
  execFileSync('bash', ['scripts/build-runtime.sh', tree], { cwd: ROOT, stdio: 'pipe' });
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
}, 120_000);

afterAll(() => {
  if (app?.child.exitCode === null) app.child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('the production tree under plain node', () => {
  it('starts, challenges a paid route, loads no TypeScript and no development package, and drains', async () => {
    app = await startApp(
      { DATA_DIR: join(work, 'data'), MARKET_SOURCE: 'simulated', SIM_SEED: '402', RECORD_MODULES_TO: record },
      {
        tree: {
          cwd: tree,
          command: [
            process.execPath,
            '--enable-source-maps',
            '--import',
            join(ROOT, 'test/helpers/module-recorder.mjs'),
            'roles/main.js',
          ],
        },
      },
    );
    await waitHealthy(app, 180_000);

    const challenge = await fetch(`${app.url}/api/v1/embed-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'CEX/DEX arbitrage on Base' }),
    });
    expect(challenge.status, await challenge.clone().text()).toBe(402);
    expect(challenge.headers.get('payment-required')).toBeTruthy();

    app.child.kill('SIGTERM');
    const exit = await app.exited;
    expect(exit, app.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(app.output()).toContain('"drained"');

    const urls = readFileSync(record, 'utf8').split('\n').filter(Boolean);
    expect(urls.filter((u) => u.startsWith(`file://${tree}/`)).length).toBeGreaterThan(100); // it ran the build
    expect(urls.filter((u) => /\.[cm]?tsx?$/.test(u))).toEqual([]);
    const packages = new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]));
    const production = productionPackages();
    expect(production.has('koa') && !production.has('vitest')).toBe(true); // the list is what it says
    expect([...packages].filter((p) => p !== undefined && !production.has(p) && !DEV_CHAIN.has(p))).toEqual([]);
  }, 300_000);
});
