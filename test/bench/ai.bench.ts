/**
 * `npm run bench:ai`: the local AI adapter's speed (AI_PROVIDER=local, the
 * default), in under a minute on 2 cores.
 *
 * 1. Embeddings per second, through embedForRoute (chunking, provider,
 *    pooling, response shaping: everything the processor does), for
 *    embed-text (768) and embed-multilingual (1024) at batch sizes 1 and 32,
 *    on short sentences (the paraphrase fixtures, ~12 words) and on
 *    ~100-word paragraphs (the summary fixtures).
 * 2. Through the queue port and the processors (in-process queue, processors
 *    built by their registered factories, a DuckDB store): p50/p99 of
 *    embed-text, embed-multilingual, summarize (a ~780-word report, default
 *    format) and x-sentiment (a text sample; and a ticker with market signals
 *    from seeded telemetry).
 * 3. Through the full HTTP API with x402 (skip with BENCH_AI_HTTP=0): the
 *    whole service in-process (ROLE=all, QUEUE=inprocess, STORE=duckdb,
 *    SETTLEMENT=devchain, MARKET_SOURCE=simulated), each request paid with
 *    its own PAYMENT-SIGNATURE signed by the real x402 client with the dev
 *    chain's demo payer (signed before the timer starts) and verified by the
 *    real in-process facilitator against the dev chain; settlement is
 *    excluded as in test/bench/api.bench.ts (settle answers a no-op success,
 *    nothing goes on chain; test/bench/x402-load.ts and bench-app.ts, shared
 *    with the other benches). One request at a time: the unloaded latency.
 * Figures are printed against the spec's average latency and target per
 * route (jobs/<id>/sku.ts).
 *
 * Knobs: BENCH_AI_SECONDS (2, per throughput case), BENCH_AI_RUNS (100, per
 * latency case), BENCH_AI_HTTP_RUNS (40, per paid route), BENCH_AI_HTTP (1).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import { embedForRoute } from '../../core/ai/embedding-route.js';
import { LocalAiProvider } from '../../core/ai/local/local-provider.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createQueue, createStore } from '../../core/ports.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { skuJobName } from '../../jobs/sku-processor.js';
import { cexQuote, dexQuote } from '../helpers/market-fixtures.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { startPaidApi } from './bench-app.js';
import { challengeOf, payerClient, signPayment } from './x402-load.js';

const envNum = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const SECONDS = envNum('BENCH_AI_SECONDS', 2);
const RUNS = envNum('BENCH_AI_RUNS', 100);
const HTTP_RUNS = envNum('BENCH_AI_HTTP_RUNS', 40);
const HTTP = process.env.BENCH_AI_HTTP !== '0';

const fixture = async <T>(name: string): Promise<T> =>
  JSON.parse(await readFile(new URL(`../fixtures/ai/${name}`, import.meta.url), 'utf8')) as T;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const SPEC = new Map(JOB_SKUS.map((s) => [s.id, { avg: s.avgLatencyMs, target: s.latencyTargetMs }]));

interface LatencyRow {
  where: string;
  sku: string;
  what: string;
  samples: number[];
}
const rows: LatencyRow[] = [];

function printLatencies(title: string, list: LatencyRow[]) {
  console.log(
    `\n${title}\n| route | case | n | p50 ms | p99 ms | spec avg ms | spec target ms | p99 < avg |\n|---|---|---|---|---|---|---|---|`,
  );
  for (const r of list) {
    const spec = SPEC.get(r.sku)!;
    const p99 = quantile(r.samples, 0.99);
    console.log(
      `| ${r.sku} | ${r.what} | ${r.samples.length} | ${ms(quantile(r.samples, 0.5))} | ${ms(p99)} | ${spec.avg} | ${spec.target} | ${p99 < spec.avg ? 'yes' : 'NO'} |`,
    );
  }
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const logger = testLogger();
  const en = (await fixture<{ pairs: [string, string][] }>('paraphrases-en.json')).pairs.flat();
  const ml = (await fixture<{ pairs: [string, string][] }>('paraphrases-multilingual.json')).pairs.flat();
  const paragraphs = (await fixture<{ texts: { text: string }[] }>('summaries.json')).texts.map((t) => t.text);
  const sentences = [...en, ...ml];
  const report = paragraphs.join('\n\n');

  const tLoad = performance.now();
  const ai = await LocalAiProvider.create({ vocabulary: 100_000 });
  console.log(
    `local provider: ready in ${Math.round(performance.now() - tLoad)} ms (100,000 GloVe words, fastText lid.176); heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`,
  );

  // ---- 1. embeddings per second
  console.log(
    `\nEmbeddings per second (embedForRoute: chunking + local model + pooling + response; ${SECONDS} s per case, one core)\n| route | dims | batch | texts | texts/s | ms per call |\n|---|---|---|---|---|---|`,
  );
  for (const [route, dims] of [
    ['text', 768],
    ['multilingual', 1024],
  ] as const) {
    for (const [kind, pool] of [
      ['sentences ~12 words', sentences],
      ['paragraphs ~100 words', paragraphs],
    ] as const) {
      for (const batch of [1, 32]) {
        let texts = 0;
        let calls = 0;
        let i = 0;
        const until = performance.now() + SECONDS * 1000;
        const start = performance.now();
        while (performance.now() < until) {
          const input = Array.from({ length: batch }, () => pool[i++ % pool.length]!);
          await embedForRoute(ai, batch === 1 ? input[0]! : input, { route, dimensions: dims, contextTokens: 512 });
          texts += batch;
          calls += 1;
        }
        const s = (performance.now() - start) / 1000;
        console.log(
          `| embed-${route} | ${dims} | ${batch} | ${kind} | ${Math.round(texts / s).toLocaleString('en-US')} | ${ms((s * 1000) / calls)} |`,
        );
      }
    }
  }

  // ---- 2. through the queue port and the processors
  const dir = await mkdtemp(join(tmpdir(), 'bench-ai-'));
  const config = testConfig({
    STORE: 'duckdb',
    DUCKDB_PATH: join(dir, 'bench.duckdb'),
    QUEUE: 'inprocess',
    CEX_EXCHANGE: 'coinbase',
    AI_X_BEARER_TOKEN: '',
  });
  const store = await createStore(config, logger);
  await store.migrate();
  const now = Date.now();
  const quotes = [];
  for (let k = 0; k < 60; k++) {
    const t = now - (60 - k) * 60_000;
    const mid = 2000 * (1 + k / 2000);
    quotes.push(
      dexQuote({ event_id: `b-dex-${k}`, event_time_ms: t, ingest_time_ms: t + 5, bid: mid - 0.5, ask: mid + 0.5 }),
    );
    quotes.push(
      cexQuote({ event_id: `b-cex-${k}`, event_time_ms: t, ingest_time_ms: t + 5, bid: mid + 0.5, ask: mid + 1.5 }),
    );
  }
  await insertQuotes(store, quotes);
  const queue = await createQueue(config, logger);
  const pairs = loadPairs();
  for (const id of ['embed-text', 'embed-multilingual', 'summarize', 'x-sentiment']) {
    const create = await JOB_SKUS.find((s) => s.id === id)!.processor!.load();
    const p = await create({ config, logger, pairs, store, ai });
    await queue.process(skuJobName(id), p.handle, { concurrency: config.JOB_CONCURRENCY });
  }
  const cases: { sku: string; what: string; input: () => unknown }[] = [
    { sku: 'embed-text', what: '1 sentence', input: () => ({ text: en[Math.floor(Math.random() * en.length)]! }) },
    { sku: 'embed-text', what: '32 sentences', input: () => ({ text: en.slice(0, 32) }) },
    {
      sku: 'embed-multilingual',
      what: '1 sentence',
      input: () => ({ text: ml[Math.floor(Math.random() * ml.length)]! }),
    },
    { sku: 'embed-multilingual', what: '32 sentences', input: () => ({ text: [...ml, ...en].slice(0, 32) }) },
    {
      sku: 'summarize',
      what: `${report.split(/\s+/u).length}-word report, paragraph`,
      input: () => ({ text: report }),
    },
    {
      sku: 'summarize',
      what: '100-word text, bullets 40',
      input: () => ({
        text: paragraphs[Math.floor(Math.random() * paragraphs.length)]!,
        format: 'bullets',
        maxLength: 40,
      }),
    },
    { sku: 'x-sentiment', what: 'text sample', input: () => ({ topic: en[Math.floor(Math.random() * en.length)]! }) },
    { sku: 'x-sentiment', what: '$ETH + market telemetry', input: () => ({ topic: '$ETH' }) },
  ];
  for (const c of cases) {
    for (let w = 0; w < 5; w++) await queue.run(skuJobName(c.sku), c.input(), { deadlineMs: 20_000 });
    const samples: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const input = c.input();
      const s = performance.now();
      await queue.run(skuJobName(c.sku), input, { deadlineMs: 20_000 });
      samples.push(performance.now() - s);
    }
    rows.push({ where: 'queue', sku: c.sku, what: c.what, samples });
  }
  printLatencies(
    `Through the queue port and the processors (in-process queue, one job at a time, ${RUNS} runs after 5 warm-up)`,
    rows.filter((r) => r.where === 'queue'),
  );
  await queue.close();
  await store.close();
  await ai.close();

  // ---- 3. through the full HTTP API with x402
  if (HTTP) await httpBench(dir);
  else console.log('\nHTTP with x402: skipped (BENCH_AI_HTTP=0)');
  await rm(dir, { recursive: true, force: true });
  console.log(`\nbench:ai done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function httpBench(parent: string): Promise<void> {
  const dataDir = await mkdtemp(join(parent, 'app-'));
  const logger = testLogger();
  const config = testConfig({
    ROLE: 'all',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    DATA_DIR: dataDir,
    STORE: 'duckdb',
    QUEUE: 'inprocess',
    BUS: 'memory',
    SETTLEMENT: 'devchain',
    MARKET_SOURCE: 'simulated',
    AI_PROVIDER: 'local',
    AI_X_BEARER_TOKEN: '',
  });
  const tStart = performance.now();
  const { proc, url, settlement, payment } = await startPaidApi(config, logger); // x402 verified on the dev chain, settlement excluded
  try {
    const verifyMs = payment.verifyMs;
    console.log(
      `\nFull HTTP API with x402: whole service started in ${Math.round(performance.now() - tStart)} ms (dev chain, simulated market, local AI)`,
    );
    const client = payerClient(settlement.devChain!.payerKey);
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });

    const en = (await fixture<{ pairs: [string, string][] }>('paraphrases-en.json')).pairs.flat();
    const paragraphs = (await fixture<{ texts: { text: string }[] }>('summaries.json')).texts.map((t) => t.text);
    const cases: { sku: string; what: string; body: () => unknown }[] = [
      {
        sku: 'embed-text',
        what: '1 sentence, paid',
        body: () => ({ text: en[Math.floor(Math.random() * en.length)]! }),
      },
      {
        sku: 'embed-multilingual',
        what: '1 sentence, paid',
        body: () => ({ text: en[Math.floor(Math.random() * en.length)]! }),
      },
      {
        sku: 'summarize',
        what: '100-word text, paid',
        body: () => ({ text: paragraphs[Math.floor(Math.random() * paragraphs.length)]! }),
      },
      {
        sku: 'x-sentiment',
        what: 'text sample, paid',
        body: () => ({ topic: en[Math.floor(Math.random() * en.length)]! }),
      },
      { sku: 'x-sentiment', what: '$ETH + simulated market, paid', body: () => ({ topic: '$ETH' }) },
    ];
    const http: LatencyRow[] = [];
    const notes: string[] = [];
    for (const c of cases) {
      const path = `/api/v1/${c.sku}`;
      const challenge = await challengeOf(url, { method: 'POST', path, body: JSON.stringify(c.body()) });
      const samples: number[] = [];
      for (let r = 0; r < HTTP_RUNS + 3; r++) {
        const signature = await signPayment(client, challenge);
        const body = c.body();
        const s = performance.now();
        const res = await post(path, body, { 'payment-signature': signature });
        const text = await res.text();
        const elapsed = performance.now() - s;
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
        if (r >= 3) samples.push(elapsed);
        if (r === HTTP_RUNS + 2 && c.sku === 'x-sentiment') {
          const out = JSON.parse(text) as {
            sentiment: string;
            signals_used: string[];
            signals_unavailable: { signal: string; reason: string }[];
          };
          notes.push(
            `x-sentiment ${c.what}: last answer ${out.sentiment}, signals used [${out.signals_used.join(', ')}]${out.signals_unavailable.length ? `, unavailable: ${out.signals_unavailable.map((u) => `${u.signal} (${u.reason})`).join('; ')}` : ''}`,
          );
        }
      }
      http.push({ where: 'http', sku: c.sku, what: c.what, samples });
    }
    printLatencies(
      `Through the full HTTP API with x402 (one request at a time, ${HTTP_RUNS} paid requests per case after 3 warm-up; verify real on the dev chain, settlement excluded; client signing not timed)`,
      http,
    );
    for (const n of notes) console.log(n);
    console.log(
      `facilitator verify: p50 ${ms(quantile(verifyMs, 0.5))} ms, p99 ${ms(quantile(verifyMs, 0.99))} ms over ${verifyMs.length} payments (included in the figures above)`,
    );
  } finally {
    await proc.shutdown('bench done');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
