/**
 * Adding a SKU is one folder plus one line in the catalogue's list: a fixture
 * job SKU, declared here the way a `jobs/<id>/sku.ts` and `job.ts` declare
 * theirs (jobs/job-sku.ts), is appended to the catalogue's list and handed to
 * the real process wiring (roles/process.ts, ROLE=all: the api role declares
 * it, the worker role serves its processor through the in-process queue).
 * Nothing else is edited, and it shows up everywhere the catalogue reaches:
 * the router (400 before any challenge, the 402 challenge at its price, a paid
 * call answered by its processor and settled on the dev chain), discovery
 * (`/api/v1/discovery`, the `.well-known` and agent documents), `/openapi.json`,
 * the MCP door's tools, and the generated docs (`/agents.md`, `/skill.md`,
 * `/llms.txt`). The default list does not hold it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodePaymentResponseHeader } from '@x402/fetch';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PrivateKeyAccount } from 'viem/accounts';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import type { RunningApi } from '../../api/role.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { defineJobSku, servedBy } from '../../jobs/job-sku.js';
import type { ProcessorFactory } from '../../jobs/sku-processor.js';
import type { RunningProcess } from '../../roles/process.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { payingFetch } from '../helpers/x402-client.js';

// ------------------------------------------------- the fixture SKU (its sku.ts and job.ts)

const WordCountInput = z.strictObject({ text: z.string().min(1).max(10_000).describe('Text whose words are counted') });
type WordCountRequest = z.infer<typeof WordCountInput>;
const WordCountOutput = z.object({ success: z.boolean(), words: z.number().int().min(0), source: z.string() });
type WordCountResponse = z.infer<typeof WordCountOutput>;

const wordCountSku = defineJobSku({
  id: 'fixture-word-count',
  method: 'POST',
  path: '/api/v1/fixture-word-count',
  title: 'Fixture word count',
  categories: ['Data'],
  defaultPriceAtomic: '1234',
  free: false,
  input: WordCountInput,
  output: WordCountOutput,
  exampleInput: { text: 'one two three' },
  example: { success: true, words: 3, source: 'fixture-word-count' },
  description: 'Counts the whitespace-separated words of a text (a fixture SKU of the test suite).',
  avgLatencyMs: 5,
  latencyTargetMs: 50,
  deadlineMs: 5000,
});

// The processor: what the SKU folder's processor.ts would export.
const createWordCountProcessor: ProcessorFactory<WordCountRequest, WordCountResponse> = async () => ({
  handle: async (data) => ({
    success: true,
    words: data.text.split(/\s+/).filter(Boolean).length,
    source: 'fixture-word-count',
  }),
});

const wordCountJob = servedBy(wordCountSku, { load: async () => createWordCountProcessor as ProcessorFactory });

// ------------------------------------------------- the gateway with the list + one line

const logger = testLogger();
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payer: PrivateKeyAccount;

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const text = async (path: string) => (await fetch(`${url}${path}`)).text();

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sku-folder-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    { ROLE: 'all', MARKET_SOURCE: 'simulated', STORE: 'duckdb', DUCKDB_PATH: ':memory:' },
    logger,
    { jobSkus: [...JOB_SKUS, wordCountJob] },
  ));
}, 180_000);

afterAll(async () => {
  await proc?.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a fixture SKU added to the catalogue list', () => {
  it('is not in the default list: the list is what adds it', () => {
    const config = testConfig({ PRICE_OVERRIDES: '' });
    expect(buildCatalogue({ config, pairs: loadPairs() }).byId('fixture-word-count')).toBeUndefined();
    expect(api.catalogue.byId('fixture-word-count')).toMatchObject({
      available: true,
      priceAtomic: '1234',
      path: '/api/v1/fixture-word-count',
    });
  });

  it('the router: bad input is a 400 before any challenge, an unpaid call the 402 challenge at its price', async () => {
    const bad = await fetch(`${url}/api/v1/fixture-word-count`, post({ text: '' }));
    expect(bad.status).toBe(400);
    expect(bad.headers.get('payment-required')).toBeNull();
    expect(await bad.json()).toMatchObject({ code: 'invalid_parameter', field: 'text' });

    const unpaid = await fetch(`${url}/api/v1/fixture-word-count`, post({ text: 'a b' }));
    expect(unpaid.status).toBe(402);
    const challenge = JSON.parse(Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString('utf8')) as {
      accepts: { amount: string }[];
      resource: { url: string };
    };
    expect(challenge.accepts[0]!.amount).toBe('1234');
    expect(challenge.resource.url).toContain('/api/v1/fixture-word-count');
  });

  it('a paid call runs its processor in the worker role and is settled for exactly its price', async () => {
    const chain = api.payments.settlement;
    const before = await chain.devChain!.balanceOf(payer.address);
    const { fetch: pay } = payingFetch(payer, { network: chain.network, asset: chain.asset });
    const res = await pay(`${url}/api/v1/fixture-word-count`, post({ text: 'the quick brown fox' }));
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(WordCountOutput.parse(body)).toEqual({ success: true, words: 4, source: 'fixture-word-count' });
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).success).toBe(true);
    expect(before - (await chain.devChain!.balanceOf(payer.address))).toBe(1234n);
  });

  it('discovery lists it, available, with its price, schemas and example', async () => {
    const discovery = (await (await fetch(`${url}/api/v1/discovery`)).json()) as {
      endpoints: Record<string, unknown>[];
    };
    const entry = discovery.endpoints.find((e) => e.path === '/api/v1/fixture-word-count');
    expect(entry).toMatchObject({ method: 'POST', available: true });
    expect(JSON.stringify(entry)).toContain('0.001234');
    for (const doc of ['/.well-known/mcp.json', '/.well-known/agent-card.json', '/agents.json']) {
      expect(await text(doc), doc).toMatch(/fixture[-_]word[-_]count/);
    }
  });

  it('OpenAPI documents its operation with the 402 response', async () => {
    const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const op = openapi.paths['/api/v1/fixture-word-count']?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op!.responses)).toEqual(expect.arrayContaining(['200', '400', '402']));
    expect(JSON.stringify(op!.requestBody)).toContain('#/components/schemas/FixtureWordCountRequest');
    expect(JSON.stringify(openapi.components.schemas.FixtureWordCountRequest)).toContain(
      'Text whose words are counted',
    );
  });

  it('the MCP door lists it as a tool with its input schema', async () => {
    const mcp = new Client({ name: 'sku-folder-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      const { tools } = await mcp.listTools();
      const tool = tools.find((t) => t.name === 'fixture_word_count');
      expect(tool).toBeDefined();
      expect(tool!.inputSchema).toMatchObject({ type: 'object', required: ['text'] });
    } finally {
      await mcp.close();
    }
  });

  it('the generated docs name it', async () => {
    for (const doc of ['/agents.md', '/skill.md', '/llms.txt']) {
      expect(await text(doc), doc).toContain('/api/v1/fixture-word-count');
    }
  });
});
