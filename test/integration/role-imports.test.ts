/**
 * Light roles: a process loads what its roles use. The worker serves the job SKUs from jobs/job-list.ts and must
 * not pull in the payment stack (viem, @x402/evm, hardhat: the API's), and neither must ingest. Neither loads Koa:
 * their /livez, /readyz, /health and /metrics are served on plain node:http (api/ops-server.ts; issue 24). Each role
 * is started for real in a child process whose module resolutions are written down (test/helpers/module-recorder.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'role-imports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The packages (by node_modules name) whose modules a start-up of `role` resolved. */
async function packagesLoadedBy(role: string): Promise<Set<string>> {
  const file = join(dir, `${role}.txt`);
  const args = [
    '--import',
    'tsx',
    '--import',
    './test/helpers/module-recorder.mjs',
    'test/helpers/start-role.ts',
    role,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECORD_MODULES_TO: file },
  });
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, out).toBe(0);
  const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const names = urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((n) => n !== undefined);
  return new Set(names);
}

const PAYMENT_STACK = ['viem', '@x402/evm', '@x402/core', 'hardhat'];
/** The HTTP framework of the api role (and its middleware): the other roles' ops server is node:http. */
const KOA = (name: string) => name === 'koa' || name.startsWith('koa-') || name.startsWith('@koa/');

describe('what a role loads', () => {
  it('the worker serves the job SKUs without the payment stack and without Koa', async () => {
    const loaded = await packagesLoadedBy('worker');
    expect(loaded.has('bullmq') || loaded.has('@duckdb/node-api')).toBe(true); // it did start its ports
    expect(PAYMENT_STACK.filter((p) => loaded.has(p))).toEqual([]);
    expect([...loaded].filter(KOA)).toEqual([]);
  }, 300_000);

  it('ingest loads no payment stack and no Koa', async () => {
    const loaded = await packagesLoadedBy('ingest');
    expect(loaded.has('kafkajs') || loaded.has('@duckdb/node-api')).toBe(true);
    expect(PAYMENT_STACK.filter((p) => loaded.has(p))).toEqual([]);
    expect([...loaded].filter(KOA)).toEqual([]);
  }, 300_000);

  it('the api does load them (the checks above can see these packages)', async () => {
    const loaded = await packagesLoadedBy('api');
    expect(loaded.has('viem')).toBe(true);
    expect(loaded.has('koa')).toBe(true);
  }, 300_000);
});
