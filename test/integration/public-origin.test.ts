/**
 * The origin the API says it lives at, behind a reverse proxy: the payment challenge's `resource.url` and the
 * discovery documents. Unset, it is each request's own origin, and X-Forwarded-* headers are ignored (a client
 * reaching the API directly could forge them); with HTTP_TRUST_PROXY=true the proxy's headers give it; with
 * PUBLIC_BASE_URL it is that, whatever the request says. The dashboard's per-address limit follows the same rule.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, describe, expect, it } from 'vitest';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { testLogger } from '../helpers/config.js';

const started: { api: PaidApi; dir: string }[] = [];
afterAll(async () => {
  for (const { api, dir } of started) {
    await api.proc.shutdown('test');
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

async function apiWith(env: Record<string, string>): Promise<PaidApi> {
  const dir = await mkdtemp(join(tmpdir(), 'public-origin-'));
  const api = await startPaidApi(dir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', ...env }, testLogger());
  started.push({ api, dir });
  return api;
}

const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'gateway.example.com' };

async function challengeUrl(base: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${base}/api/v1/airgap-scrub`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ text: 'Call me at 555-010-9999' }),
  });
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!).resource.url;
}

async function openapiServer(base: string, headers: Record<string, string> = {}): Promise<string> {
  const doc = (await (await fetch(`${base}/openapi.json`, { headers })).json()) as { servers: { url: string }[] };
  return doc.servers[0]!.url;
}

describe('the public origin', () => {
  it("is the request's own by default, and forwarded headers are not trusted", async () => {
    const { url } = await apiWith({});
    expect(await challengeUrl(url)).toBe(`${url}/api/v1/airgap-scrub`);
    expect(await challengeUrl(url, FORWARDED)).toBe(`${url}/api/v1/airgap-scrub`);
    expect(await openapiServer(url, FORWARDED)).toBe(url);
  }, 120_000);

  it("comes from the proxy's X-Forwarded-Proto and -Host with HTTP_TRUST_PROXY=true", async () => {
    const { url } = await apiWith({ HTTP_TRUST_PROXY: 'true' });
    expect(await challengeUrl(url, FORWARDED)).toBe('https://gateway.example.com/api/v1/airgap-scrub');
    expect(await openapiServer(url, FORWARDED)).toBe('https://gateway.example.com');
    expect(await challengeUrl(url)).toBe(`${url}/api/v1/airgap-scrub`); // no proxy headers: the request's origin
  }, 120_000);

  it('is PUBLIC_BASE_URL when set, whatever the request says', async () => {
    const { url } = await apiWith({ PUBLIC_BASE_URL: 'https://api.example.net/', HTTP_TRUST_PROXY: 'true' });
    expect(await challengeUrl(url)).toBe('https://api.example.net/api/v1/airgap-scrub');
    expect(await challengeUrl(url, FORWARDED)).toBe('https://api.example.net/api/v1/airgap-scrub');
    expect(await openapiServer(url, FORWARDED)).toBe('https://api.example.net');
  }, 120_000);
});
