/**
 * Issue 14, item 4: input the service can know to be invalid is refused
 * before the x402 challenge, through the real api role (startProcess,
 * ROLE=api, SETTLEMENT=devchain: the gate would answer 402 to a valid
 * request), with a stable code and the offending field, never a 402:
 *  - code-denoise: a language outside the supported list (aliases and case
 *    accepted) -> 400 `unsupported_language`, with the supported list; code
 *    nested past MAX_CODE_DEPTH -> 400 `nesting_too_deep` (issue 23);
 *  - domain-check: names that break the DNS rules or are bare public
 *    suffixes (`localhost`, `co.uk`) -> 400 `invalid_domain`; a TLD without
 *    an RDAP service in the bootstrap registry, or no TLD at all
 *    (`example.notatld`) -> 400 `tld_not_supported` with `tld`;
 *  - dex-price-summary: the query grammar (control characters, `/ ? # \`,
 *    `0x` + hex that is not 40 digits) -> 400 `invalid_query`.
 * The valid neighbours of each case are challenged (402), so the refusals
 * are the pre-flight's and not a closed route.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../../roles/process.js';
import { SUPPORTED_LANGUAGES } from '../../jobs/code-denoise/languages.js';
import { MAX_CODE_DEPTH } from '../../jobs/code-denoise/nesting-depth.js';
import { MAX_CODE } from '../../jobs/text-size-limits.js';
import { testLogger } from '../helpers/config.js';
import { startPaidApi } from '../helpers/paid-api.js';

let proc: RunningProcess;
let url: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'utility-preflight-'));
  // The shipped bootstrap snapshot, never refreshed from the internet here.
  ({ proc, url } = await startPaidApi(
    dataDir,
    { STORE: 'duckdb', DUCKDB_PATH: ':memory:', RDAP_BOOTSTRAP_REFRESH_MS: '0' },
    testLogger(),
  ));
});

afterAll(async () => {
  await proc?.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown>; challenged: boolean }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    challenged: res.headers.has('payment-required'),
  };
}

async function expectRefused(
  path: string,
  body: unknown,
  code: string,
  field: string,
): Promise<Record<string, unknown>> {
  const r = await post(path, body);
  expect(r.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(400);
  expect(r.challenged).toBe(false);
  expect(r.body).toMatchObject({ status: 400, code, field });
  expect(r.body.detail).toEqual(expect.any(String));
  return r.body;
}

async function expectChallenged(path: string, body: unknown): Promise<void> {
  const r = await post(path, body);
  expect(r.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(402);
  expect(r.challenged).toBe(true);
}

describe('code-denoise: the supported-language list is in the input schema', () => {
  it('refuses an unknown language before the challenge, with the list', async () => {
    for (const language of ['brainfuck-99', 'cobol', 'php', 'javascript2', ' ']) {
      const body = await expectRefused(
        '/api/v1/code-denoise',
        { code: 'x = 1', language },
        'unsupported_language',
        'language',
      );
      expect(body.supported).toEqual(SUPPORTED_LANGUAGES);
    }
  });

  it('challenges the supported names and aliases in any case', async () => {
    for (const language of ['Python', 'TS', 'c++', 'golang', 'PostgreSQL'])
      await expectChallenged('/api/v1/code-denoise', { code: 'x = 1', language });
    await expectChallenged('/api/v1/code-denoise', { code: 'x = 1' });
  });

  it('refuses code nested past the depth limit before the challenge, and code over the size limit', async () => {
    const deep = `x = ${'('.repeat(MAX_CODE_DEPTH + 1)}1${')'.repeat(MAX_CODE_DEPTH + 1)};`;
    const body = await expectRefused('/api/v1/code-denoise', { code: deep }, 'nesting_too_deep', 'code');
    expect(body).toMatchObject({ max_depth: MAX_CODE_DEPTH, at: 4 + MAX_CODE_DEPTH, kind: 'brackets' });
    const generics = `let v: ${'A<'.repeat(MAX_CODE_DEPTH + 1)}B;`;
    await expectRefused('/api/v1/code-denoise', { code: generics, language: 'ts' }, 'nesting_too_deep', 'code');
    // The same depth just within the limit, and the generics in a language without them, are sold.
    const within = `x = ${'('.repeat(MAX_CODE_DEPTH)}1${')'.repeat(MAX_CODE_DEPTH)};`;
    await expectChallenged('/api/v1/code-denoise', { code: within });
    await expectChallenged('/api/v1/code-denoise', { code: generics, language: 'python' });
    const r = await post('/api/v1/code-denoise', { code: 'x'.repeat(MAX_CODE + 1) });
    expect(r.status).toBe(400);
    expect(r.challenged).toBe(false);
    expect(r.body).toMatchObject({ field: 'code' });
  });
});

describe('domain-check: syntax and the RDAP bootstrap TLD set before the challenge', () => {
  it('refuses names that are not registrable domains as invalid_domain', async () => {
    for (const domain of [
      'localhost',
      'co.uk',
      'com',
      'exa_mple.com',
      '-bad.com',
      'a..b.com',
      '192.168.0.1',
      `${'a'.repeat(64)}.com`,
    ]) {
      await expectRefused('/api/v1/domain-check', { domain }, 'invalid_domain', 'domain');
    }
  });

  it('refuses TLDs without an RDAP service, and names under no TLD at all, as tld_not_supported', async () => {
    for (const [domain, tld] of [
      ['example.notatld', 'notatld'],
      ['example.localdomain', 'localdomain'],
      ['www.example.invalid', 'invalid'],
    ] as const) {
      const body = await expectRefused('/api/v1/domain-check', { domain }, 'tld_not_supported', 'domain');
      expect(body.tld).toBe(tld);
    }
  });

  it('challenges registrable names under TLDs the bootstrap serves, IDNs included', async () => {
    for (const domain of ['example.com', 'www.wikipedia.org', 'bbc.co.uk', 'bücher.de'.replace('.de', '.com')])
      await expectChallenged('/api/v1/domain-check', { domain });
  });
});

describe('dex-price-summary: the query grammar before the challenge', () => {
  it('refuses malformed queries as invalid_query', async () => {
    for (const query of [
      '0x123',
      '0x',
      '0xabcdef0123456789',
      `0x${'a'.repeat(41)}`,
      'a/b?c',
      'AERO#1',
      'back\\slash',
      'AE\u0007RO',
      'line\nbreak',
      '   ',
      '$',
    ]) {
      await expectRefused('/api/v1/dex-price-summary', { query }, 'invalid_query', 'query');
    }
  });

  it('challenges symbols, names and addresses', async () => {
    for (const query of [
      'AERO',
      '$WIF',
      'Pepe 2.0',
      '0xBTC',
      '0x940181a94A35A4569E4529A3CDfB74e38FD98631',
      'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
    ]) {
      await expectChallenged('/api/v1/dex-price-summary', { query });
    }
  });
});
