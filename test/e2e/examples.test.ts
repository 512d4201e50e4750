/**
 * "Call it with the example": a fresh install (`npm start`, simulated market,
 * dev chain settlement, a new data dir) whose first 15-minute slice has closed
 * (SIM_BACKFILL_MINUTES publishes 20 simulated minutes at start) documents
 * example requests that answer 200, paid with the real x402 client: every
 * telemetry route's `exampleRequest` of /api/v1/discovery; the same requests
 * are the ones /openapi.json, /agents.md, /skill.md, /llms.txt and the agent
 * card show; agents.md stays a readable page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { privateKeyToAccount } from 'viem/accounts';
import { readDevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { startApp, waitHealthy, type AppProcess } from '../helpers/app-process.js';
import { eventually } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';

interface Endpoint {
  id: string;
  path: string;
  method: 'GET' | 'POST';
  exampleRequest: Record<string, unknown>;
}

/**
 * Ceiling of each wait on the app: generous, so a loaded machine only makes the test slower (healthy ~16 s after
 * the start on a quiet machine, once the backfill went through the pipeline; over 2 minutes at a load of 18).
 */
const WAIT_MS = 360_000;

let app: AppProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-examples-'));
  app = await startApp({
    DATA_DIR: dataDir,
    MARKET_SOURCE: 'simulated',
    SIM_BACKFILL_MINUTES: '20',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'test',
  });
  await waitHealthy(app, WAIT_MS);
}, WAIT_MS + 60_000);

afterAll(async () => {
  if (app?.child.exitCode === null) {
    app.child.kill('SIGTERM');
    await app.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 120_000); // the drain takes longer on a loaded machine

describe("a fresh install's documented examples", () => {
  it(
    'answer 200 once a slice has closed, in every document that shows them',
    async () => {
      // The one-shot JSON routes are checked here; the streamed ones (the live stream, a day's file: no complete day
      // exists on a fresh install) answer other media types and have their own suites (telemetry-stream.test.ts,
      // bulk-history.test.ts).
      const streamed = ['history', 'stream'];
      const oneShot = (e: { id: string; path: string }) =>
        e.path.startsWith('/api/v1/crypto/') && !streamed.includes(e.id);
      // The backfill's slices are aggregated: coverage spans a whole closed slice.
      type Coverage = { earliest_timestamp: string | null; latest_timestamp: string | null };
      const readCoverage = async () => (await (await fetch(`${app.url}/api/v1/crypto/coverage`)).json()) as Coverage;
      const coverage = await eventually(
        readCoverage,
        (c) =>
          c.earliest_timestamp !== null &&
          Date.parse(c.latest_timestamp!) - Date.parse(c.earliest_timestamp) > 16 * 60_000,
        WAIT_MS,
        500,
      );
      const latest = Date.parse(coverage.latest_timestamp!);
      // Once every consumer caught up with the backfill (the raw sink's latency samples come after the books), an
      // unpaid call of each example passes validation and the pre-flight: the 402 challenge, not a 404.
      /** Why the last round was not taken (the failure message names it). */
      let notReady = 'no round finished';
      const challenged = async (e: Endpoint) => {
        const query = new URLSearchParams(
          Object.entries(e.exampleRequest).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString();
        const res =
          e.method === 'GET'
            ? await fetch(`${app.url}${e.path}?${query}`)
            : await fetch(`${app.url}${e.path}`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(e.exampleRequest),
              });
        const ok = res.status === 402 || (res.status === 200 && e.id === 'coverage');
        if (!ok)
          notReady = `${e.method} ${e.path} ${JSON.stringify(e.exampleRequest)} answered ${res.status}: ${(await res.text()).slice(0, 400)}`;
        if (res.status !== 402) return ok;
        // The challenge's Bazaar listing names the same request (its example follows the data too), beside the
        // signed offers the dev chain mode adds.
        const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
        const input = (required.extensions?.bazaar as { info?: { input?: Record<string, unknown> } } | undefined)?.info
          ?.input;
        const listed = input?.[e.method === 'GET' ? 'queryParams' : 'body'];
        if (!isDeepStrictEqual(listed, e.exampleRequest)) {
          notReady = `${e.method} ${e.path}: the Bazaar listing names ${JSON.stringify(listed)}, discovery ${JSON.stringify(e.exampleRequest)}`;
          return false;
        }
        return true;
      };
      // The examples follow the data (another pair, a newer slice once one closes): each round reads every document
      // at once and is taken when they all show the same requests and each request passes its pre-flight.
      interface Documents {
        discovery: { endpoints: Endpoint[]; examplesSlice?: { start: string; end: string } };
        agentsMd: string;
        skillMd: string;
        llms: string;
        openapi: { paths: Record<string, { get?: { parameters?: { name: string; example?: unknown }[] } }> };
        card: { skills: { id: string; examples: string[] }[] };
      }
      const queryOf = (e: Endpoint) =>
        new URLSearchParams(
          Object.entries(e.exampleRequest).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString();
      const consistent = (d: Documents): boolean => {
        for (const e of d.discovery.endpoints.filter((x) => oneShot(x) && x.method === 'GET')) {
          const request = `${e.path}?${queryOf(e)}`;
          if (![d.agentsMd, d.skillMd, d.llms].every((doc) => doc.includes(request))) return false;
          const params = d.openapi.paths[e.path]!.get!.parameters!;
          if (!Object.entries(e.exampleRequest).every(([k, v]) => params.find((p) => p.name === k)?.example === v))
            return false;
          if (d.card.skills.find((x) => x.id === e.id)!.examples[0] !== JSON.stringify(e.exampleRequest)) return false;
        }
        return true;
      };
      const docs = await eventually(
        async () => {
          const [discovery, agentsMd, skillMd, llms, openapi, card] = await Promise.all([
            fetch(`${app.url}/api/v1/discovery`).then((r) => r.json() as Promise<Documents['discovery']>),
            fetch(`${app.url}/agents.md`).then((r) => r.text()),
            fetch(`${app.url}/skill.md`).then((r) => r.text()),
            fetch(`${app.url}/llms.txt`).then((r) => r.text()),
            fetch(`${app.url}/openapi.json`).then((r) => r.json() as Promise<Documents['openapi']>),
            fetch(`${app.url}/.well-known/agent-card.json`).then((r) => r.json() as Promise<Documents['card']>),
          ]);
          const d: Documents = { discovery, agentsMd, skillMd, llms, openapi, card };
          const telemetry = discovery.endpoints.filter(oneShot);
          notReady =
            discovery.examplesSlice === undefined
              ? 'discovery shows no examplesSlice'
              : consistent(d)
                ? ''
                : 'the documents show different example requests';
          const ready = !notReady && (await Promise.all(telemetry.map(challenged))).every(Boolean);
          return { ...d, ready };
        },
        (d) => d.ready,
        WAIT_MS,
        1000,
      ).catch(() => {
        throw new Error(
          `the documented examples were not all ready within ${WAIT_MS / 1000} s; last round: ${notReady}`,
        );
      });
      const discovery = docs.discovery;
      // The newest complete slice: it ended before the newest data (as of after the documents were read: the market
      // moves on meanwhile, more so on a slow machine), and nothing newer was complete when they were (the data of
      // before they were read had no newer slice).
      const latestAfter = Date.parse((await readCoverage()).latest_timestamp!);
      const sliceEnd = Date.parse(discovery.examplesSlice!.end);
      expect(sliceEnd).toBeLessThanOrEqual(latestAfter + 60_000);
      expect(latest - sliceEnd).toBeLessThan(15 * 60_000);

      const info = await readDevChainInfo(dataDir);
      const { fetch: paid } = payingFetch(privateKeyToAccount(info.payer_key), {
        network: info.network as `${string}:${string}`,
        asset: info.asset,
      });
      expect(
        discovery.endpoints
          .filter((e) => streamed.includes(e.id))
          .map((e) => e.id)
          .sort(),
      ).toEqual(streamed);
      const telemetry = discovery.endpoints.filter(oneShot);
      expect(telemetry.map((e) => e.id).sort()).toEqual([
        'coverage',
        'dislocations',
        'execution-latency',
        'impact-simulation',
        'shadow-capacity',
        'spread-candles',
      ]);
      for (const e of telemetry) {
        if ('date' in e.exampleRequest) {
          // A slice inside coverage: the newest complete one for the candles; a route whose table lags (latency
          // samples while the raw sink catches up with the backfill) may name the slice before.
          const start = Date.parse(
            `${String(e.exampleRequest.date)}T${String(e.exampleRequest.time).slice(0, 2)}:${String(e.exampleRequest.time).slice(2)}:00Z`,
          );
          expect(start).toBeGreaterThanOrEqual(Date.parse(coverage.earliest_timestamp!) - 15 * 60_000);
          if (e.id === 'spread-candles') expect(new Date(start).toISOString()).toBe(discovery.examplesSlice!.start);
        }
        const res =
          e.method === 'GET'
            ? await paid(`${app.url}${e.path}?${queryOf(e)}`)
            : await paid(`${app.url}${e.path}`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(e.exampleRequest),
              });
        expect(
          res.status,
          `${e.method} ${e.path} ${JSON.stringify(e.exampleRequest)}: ${await res.clone().text()}`,
        ).toBe(200);
        const body = (await res.json()) as { source?: string };
        expect(body.source).toMatch(/simulated/);
      }
      const agentsMd = docs.agentsMd;
      // agents.md is a page to read: embeddings cut with a note. About 36 KB since issue 27 and 30 (19 routes, range
      // terms on the windowed ones, dislocation items with their costs and legs): bounded at 40 KB.
      expect(Buffer.byteLength(agentsMd)).toBeLessThan(40_000);
      expect(agentsMd).toMatch(/\.\.\. \(768 numbers, \d+ more not shown here\)/);
    },
    3 * WAIT_MS,
  );
});
