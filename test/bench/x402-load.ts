/**
 * x402 load generation for the benches that drive the real api role with
 * paid requests (test/bench/api.bench.ts, utility.bench.ts, ai.bench.ts):
 *
 *  - a load generator in a CHILD process (this file run with
 *    --load-generator), so autocannon does not share the server's event loop;
 *    a run is a fixed number of requests, or timed (it then stops early
 *    rather than reuse a signature when its pool runs dry);
 *  - each paid request carries its own PAYMENT-SIGNATURE, signed in advance in
 *    that child by the real x402 client (x402Client + ExactEvmScheme) with the
 *    dev chain's demo payer, each used once (the replay guard refuses reuse);
 *    `payerClient` + `signPayment` are the same signing for a bench that pays
 *    its own requests one at a time;
 *  - `excludeSettlement`: the running gate's facilitator keeps its real
 *    `verify` (timed) and gets a no-op successful `settle`, so nothing is sent
 *    to the chain while the gate still runs its settle step;
 *  - open-loop runs (`openRun`): requests sent at a fixed offered rate
 *    whatever the answers (latency counted from each request's scheduled
 *    send time, so a server that falls behind shows it), over keep-alive
 *    sockets, each with its own signature (signed natively by several payers
 *    for the high rates: native-signer.ts).
 *
 * This module imports only the x402 client, autocannon and the native signer
 * (no app code), so the child starts light.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { nativePayer, nativePaymentHeader, type NativePayer } from './native-signer.js';
import { SignedHeaderPool, type HeaderList } from './signed-header-pool.js';

export interface RequestVariant {
  method: 'GET' | 'POST';
  path: string;
  /** JSON text; sent with content-type application/json. */
  body?: string;
}

export interface RunSpec {
  url: string;
  connections: number;
  /**
   * A fixed number of requests: every one completes, none is abandoned in
   * flight at the end; the pool must hold a signature for each.
   */
  amount?: number;
  /**
   * Or a timed run, seconds (when `amount` is absent). It stops early, with
   * `exhausted` set, once no more than `reserve` of its signatures are left.
   */
  durationS?: number;
  /** Timed runs: authorizations kept back to cover the requests issued before a stop takes effect (default 2 per connection). */
  reserve?: number;
  /** Requests cycle through these, in order. */
  variants: RequestVariant[];
  /** Signature pool of a paid route; absent for a free (or ungated) route. */
  pool?: string;
  /** Per-request timeout, seconds (default 60). */
  timeoutS?: number;
  /**
   * How the run is clocked. 'last-response' (default): autocannon samples
   * every 100 ms and the run is timed from its start to its last response.
   * 'autocannon': autocannon's own sampling (once a second: a run ends, and a
   * stop takes effect, on the next tick) and its own `duration`, which runs to
   * that tick (what bench:api has always measured with).
   */
  clock?: 'last-response' | 'autocannon';
}

export interface RunResult {
  requests: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  statusCodes: Record<string, number>;
  firstFailure?: string;
  signaturesUsed: number;
  /** A timed run's signature pool ran dry and the run was stopped early. */
  exhausted: boolean;
}

/** Nearest-rank quantile (the same rule for every figure of a bench). */
export function quantile(values: readonly number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** An open-loop run: `rate` requests/s for `durationS`, sent on schedule whatever the answers. */
export interface OpenRunSpec {
  url: string;
  rate: number;
  durationS: number;
  variants: RequestVariant[];
  /** Signature pool of a paid route; absent for a free (or ungated) route. */
  pool?: string;
  /** Per-request timeout, seconds (default 30). */
  timeoutS?: number;
}

export interface OpenRunResult {
  offered: number;
  sent: number;
  completed: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** Completed requests per second over the run (the last answer included). */
  achievedRps: number;
  /** Latency from each request's scheduled send time, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** How late the generator sent, ms (p99): a busy machine shows here, not as server latency. */
  sendLagP99: number;
  statusCodes: Record<string, number>;
  firstFailure?: string;
}

// ==================================================================== the child process

type LoadRequest =
  | { id: number; type: 'payer'; payerKey: Hex }
  | { id: number; type: 'payers'; payerKeys: Hex[] }
  | { id: number; type: 'sign'; pool: string; challenge: PaymentRequired; atLeast: number; native?: boolean }
  | { id: number; type: 'run'; run: RunSpec }
  | { id: number; type: 'open'; run: OpenRunSpec }
  | { id: number; type: 'exit' };
type LoadMessage = LoadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
type LoadReply = { id: number; ok: true; result?: unknown } | { id: number; ok: false; error: string };

/** The subset of autocannon's API used here (the package ships no types). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}
interface AutocannonResult {
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  stop(): void;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  amount?: number;
  duration?: number;
  timeout: number;
  sampleInt?: number;
  requests: AutocannonRequest[];
}) => AutocannonInstance;

async function loadGenerator(): Promise<void> {
  let autocannon: Autocannon;
  try {
    autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  } catch {
    throw new Error('autocannon is not installed: npm install --no-save autocannon');
  }
  let client: x402Client | undefined;
  let natives: NativePayer[] = [];
  let nextNative = 0;
  /** Signed headers per pool (off the heap: signed-header-pool.ts), each used once, in order; `maxAgeMs` keeps them well inside their validBefore. */
  const pools = new Map<string, SignedHeaderPool>();

  /** Drops authorizations that would expire during a run, then signs until `atLeast` are available. */
  const sign = async (pool: string, challenge: PaymentRequired, atLeast: number, native = false) => {
    if (native ? !natives.length : !client) throw new Error('no payer key');
    const accepted = challenge.accepts[0]!;
    let p = pools.get(pool);
    // validBefore = signing time + maxTimeoutSeconds; the facilitator wants >= 6 s left: keep a minute and a run in hand.
    if (!p) pools.set(pool, (p = new SignedHeaderPool(Math.max(30, accepted.maxTimeoutSeconds - 90) * 1000)));
    p.prune();
    const t0 = performance.now();
    for (let i = p.available; i < atLeast; i++)
      p.add(
        native
          ? nativePaymentHeader(natives[nextNative++ % natives.length]!, challenge)
          : await signPayment(client!, challenge),
      );
    return { available: p.available, ms: performance.now() - t0 };
  };

  const run = async (spec: RunSpec): Promise<RunResult> => {
    const timed = spec.amount === undefined;
    if (timed && !(spec.durationS! > 0)) throw new Error('a run needs an amount of requests or a duration');
    const pool = spec.pool === undefined ? undefined : pools.get(spec.pool);
    if (spec.pool !== undefined && !pool) throw new Error(`no signatures for ${spec.pool}`);
    // This run's own authorizations: whatever is left of them afterwards is dropped, never handed to another run.
    const mine: HeaderList | undefined = pool?.take();
    if (mine && !timed && mine.length < spec.amount!)
      throw new Error(`pool ${spec.pool}: ${mine.length} signatures for ${spec.amount} requests`);
    const reserve = spec.reserve ?? spec.connections * 2;
    let cursor = 0;
    let used = 0;
    let exhausted = false;
    let finished = false;
    let firstFailure: string | undefined;
    let lastResponseAt = 0;
    const request: AutocannonRequest = {
      setupRequest: (req) => {
        const v = spec.variants[cursor++ % spec.variants.length]!;
        const headers: Record<string, string> = { ...(req.headers ?? {}) };
        if (v.body !== undefined) headers['content-type'] = 'application/json';
        // Past the end (or a straggler after the run), a request goes unpaid: a 402 the result shows, never a reused signature.
        if (mine && !finished && used < mine.length) {
          headers['payment-signature'] = mine.get(used++);
          if (timed && !exhausted && mine.length - used <= reserve) {
            exhausted = true;
            setImmediate(() => instance.stop()); // runs after autocannon() returned
          }
        }
        return { ...req, method: v.method, path: v.path, headers, ...(v.body !== undefined ? { body: v.body } : {}) };
      },
      onResponse: (status, body) => {
        lastResponseAt = performance.now();
        if ((status < 200 || status > 299) && firstFailure === undefined)
          firstFailure = `${status} ${body.slice(0, 600)}`;
      },
    };
    // autocannon resolves on its next sampling tick after the last response, and its `duration` includes
    // that wait: by default the run is timed here, from the start to the last response.
    const ownClock = spec.clock === 'autocannon';
    const t0 = performance.now();
    const instance = autocannon({
      url: spec.url,
      connections: spec.connections,
      timeout: spec.timeoutS ?? 60,
      requests: [request],
      ...(ownClock ? {} : { sampleInt: 100 }),
      ...(timed ? { duration: spec.durationS! } : { amount: spec.amount! }),
    });
    const r = await instance;
    finished = true;
    const durationS = ownClock ? r.duration : ((lastResponseAt || performance.now()) - t0) / 1000;
    const statusCodes: Record<string, number> = {};
    for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = s.count;
    const requests = r['2xx'] + r.non2xx;
    return {
      requests,
      ok2xx: r['2xx'],
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      durationS,
      rps: durationS > 0 ? requests / durationS : 0,
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
      mean: r.latency.mean,
      statusCodes,
      ...(firstFailure !== undefined ? { firstFailure } : {}),
      signaturesUsed: used,
      exhausted,
    };
  };

  const open = async (spec: OpenRunSpec): Promise<OpenRunResult> => {
    const pool = spec.pool === undefined ? undefined : pools.get(spec.pool);
    if (spec.pool !== undefined && !pool) throw new Error(`no signatures for ${spec.pool}`);
    const total = Math.round(spec.rate * spec.durationS);
    const mine: HeaderList | undefined = pool?.take(total);
    if (mine) {
      if (mine.length < total) throw new Error(`pool ${spec.pool}: ${mine.length} signatures for ${total} requests`);
    }
    const target = new URL(spec.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 4096 });
    const latencies = new Float64Array(total);
    const lags = new Float64Array(total);
    const done = new Uint8Array(total);
    const statusCodes: Record<string, number> = {};
    let completed = 0;
    let errors = 0;
    let timeouts = 0;
    let ok2xx = 0;
    let firstFailure: string | undefined;
    let lastAt = 0;
    const interval = 1000 / spec.rate;
    const t0 = performance.now() + 20;
    await new Promise<void>((resolve) => {
      let sent = 0;
      const finish = (i: number, status: number | undefined, text: string) => {
        if (done[i]) return;
        done[i] = 1;
        const now = performance.now();
        latencies[i] = now - (t0 + i * interval);
        lastAt = now;
        completed += 1;
        if (status !== undefined) {
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          if (status >= 200 && status < 300) ok2xx += 1;
          else firstFailure ??= `${status} ${text.slice(0, 600)}`;
        }
        if (completed === total) resolve();
      };
      const send = (i: number) => {
        const v = spec.variants[i % spec.variants.length]!;
        const headers: Record<string, string> = {};
        if (v.body !== undefined) headers['content-type'] = 'application/json';
        if (mine) headers['payment-signature'] = mine.get(i);
        lags[i] = performance.now() - (t0 + i * interval);
        const req = httpRequest(
          { agent, host: target.hostname, port: target.port, method: v.method, path: v.path, headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              finish(
                i,
                res.statusCode ?? 0,
                res.statusCode !== undefined && res.statusCode < 300 ? '' : Buffer.concat(chunks).toString('utf8'),
              ),
            );
            res.on('error', () => {
              errors += 1;
              finish(i, undefined, '');
            });
          },
        );
        req.setTimeout((spec.timeoutS ?? 30) * 1000, () => {
          timeouts += 1;
          req.destroy(new Error('timeout'));
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (err.message !== 'timeout') errors += 1;
          // Which socket failed tells a keep-alive race (a reused socket the server had just closed) from an overload.
          firstFailure ??= `error ${err.code ?? ''} ${err.message} on a ${req.reusedSocket ? 'reused keep-alive' : 'new'} socket, request ${i} of ${total}`;
          finish(i, undefined, '');
        });
        if (v.body !== undefined) req.end(v.body);
        else req.end();
      };
      const tick = () => {
        const now = performance.now();
        while (sent < total && t0 + sent * interval <= now) send(sent++);
        if (sent < total) setTimeout(tick, Math.max(0, Math.min(4, t0 + sent * interval - performance.now())));
      };
      setTimeout(tick, 20);
    });
    agent.destroy();
    const sorted = Array.from(latencies).sort((a, b) => a - b);
    const q = (x: number) =>
      sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(x * sorted.length) - 1))] ?? Number.NaN;
    const lagSorted = Array.from(lags).sort((a, b) => a - b);
    const durationS = (lastAt - t0) / 1000;
    return {
      offered: spec.rate,
      sent: total,
      completed,
      ok2xx,
      non2xx: completed - ok2xx - errors - timeouts,
      errors,
      timeouts,
      durationS,
      achievedRps: durationS > 0 ? completed / durationS : 0,
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      max: sorted.at(-1) ?? Number.NaN,
      sendLagP99: lagSorted[Math.min(lagSorted.length - 1, Math.ceil(0.99 * lagSorted.length) - 1)] ?? 0,
      statusCodes,
      ...(firstFailure !== undefined ? { firstFailure } : {}),
    };
  };

  const reply = (m: LoadReply) => process.send?.(m);
  process.on('message', (raw: unknown) => {
    const msg = raw as LoadRequest;
    void (async () => {
      try {
        switch (msg.type) {
          case 'payer':
            client = payerClient(msg.payerKey);
            return reply({ id: msg.id, ok: true });
          case 'payers':
            natives = msg.payerKeys.map(nativePayer);
            return reply({ id: msg.id, ok: true });
          case 'sign':
            return reply({
              id: msg.id,
              ok: true,
              result: await sign(msg.pool, msg.challenge, msg.atLeast, msg.native),
            });
          case 'run':
            return reply({ id: msg.id, ok: true, result: await run(msg.run) });
          case 'open':
            return reply({ id: msg.id, ok: true, result: await open(msg.run) });
          case 'exit':
            reply({ id: msg.id, ok: true });
            process.exit(0);
        }
      } catch (err) {
        reply({ id: msg.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  });
  // The parent going away (a crash, Ctrl-C) ends the child too.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ id: 0, ok: true, result: 'ready' } satisfies LoadReply);
}

// ==================================================================== the parent's handle

export class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly ready: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((r) => (markReady = r));
    child.on('message', (raw: unknown) => {
      const m = raw as LoadReply;
      if (m.id === 0) return markReady();
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(`load generator: ${m.error}`));
    });
    child.on('error', () => {
      // a send on a closed channel; the 'exit' handler rejects what was waiting
    });
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`load generator exited with ${code}`));
      this.waiting.clear();
    });
  }

  /** Forks this file; process.execArgv carries tsx's loader, so the child runs TypeScript as the parent does. */
  static start(): LoadGenerator {
    return new LoadGenerator(
      fork(fileURLToPath(import.meta.url), ['--load-generator'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
  }

  private async call<T>(msg: LoadMessage): Promise<T> {
    await this.ready;
    const id = this.nextId++;
    if (!this.child.connected) throw new Error(`load generator is gone (exit code ${this.child.exitCode})`);
    return new Promise<T>((resolveCall, reject) => {
      this.waiting.set(id, { resolve: resolveCall as (v: unknown) => void, reject });
      this.child.send({ ...msg, id });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  setPayer(payerKey: Hex): Promise<void> {
    return this.call({ type: 'payer', payerKey });
  }

  /** Payers whose keys sign natively (`sign(..., { native: true })`), round robin. */
  setPayers(payerKeys: Hex[]): Promise<void> {
    return this.call({ type: 'payers', payerKeys });
  }

  /** Makes at least `atLeast` fresh authorizations available in a pool (stale ones are dropped); returns the seconds spent signing. */
  async sign(
    pool: string,
    challenge: PaymentRequired,
    atLeast: number,
    options: { native?: boolean } = {},
  ): Promise<number> {
    const r = await this.call<{ available: number; ms: number }>({
      type: 'sign',
      pool,
      challenge,
      atLeast,
      ...(options.native ? { native: true } : {}),
    });
    return r.ms / 1000;
  }

  /** An open-loop run at a fixed offered rate. */
  open(spec: OpenRunSpec): Promise<OpenRunResult> {
    return this.call<OpenRunResult>({ type: 'open', run: spec });
  }

  run(spec: RunSpec): Promise<RunResult> {
    return this.call<RunResult>({ type: 'run', run: spec });
  }

  async exit(): Promise<void> {
    await this.call({ type: 'exit' }).catch(() => undefined);
  }
}

// ==================================================================== payment helpers

/** The real x402 client paying with `payerKey` (the dev chain's demo payer). */
export function payerClient(payerKey: Hex): x402Client {
  return new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payerKey)));
}

/** A fresh PAYMENT-SIGNATURE header answering `challenge`, signed by the real client (one authorization: use it once). */
export async function signPayment(client: x402Client, challenge: PaymentRequired): Promise<string> {
  const accepted = challenge.accepts[0]!;
  // The dev chain's test USDC is not a default asset of the client: allow it (as the integration tests do).
  client.setSpendControls({
    allowedAssets: [{ network: accepted.network, asset: accepted.asset, maxAmountPerPayment: accepted.amount }],
  });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(challenge));
}

/**
 * Timing wrapper on the running gate's facilitator: verify stays real, settle becomes a no-op success.
 * `released` hears of each payment the no-op "settled" (the in-process facilitator gives its reservation back).
 */
export function excludeSettlement(
  facilitator: FacilitatorClient,
  released?: (payload: PaymentPayload) => void,
): { verifyMs: number[]; settleCalls: () => number } {
  const verifyMs: number[] = [];
  let settleCalls = 0;
  const verify = facilitator.verify.bind(facilitator);
  facilitator.verify = async (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> => {
    const t0 = performance.now();
    try {
      return await verify(payload, requirements);
    } finally {
      verifyMs.push(performance.now() - t0);
    }
  };
  facilitator.settle = async (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => {
    settleCalls += 1;
    released?.(payload);
    const auth = (payload.payload as { authorization?: { from?: string } }).authorization;
    // A well-formed success without a transaction on chain: the bench excludes settlement.
    return {
      success: true,
      transaction: `0x${'0'.repeat(64)}`,
      network: requirements.network,
      ...(auth?.from ? { payer: auth.from } : {}),
    };
  };
  return { verifyMs, settleCalls: () => settleCalls };
}

/** The 402 challenge of an unpaid request (anything else is an error naming what came back). */
export async function challengeOf(url: string, v: RequestVariant): Promise<PaymentRequired> {
  const res = await fetch(`${url}${v.path}`, {
    method: v.method,
    ...(v.body !== undefined ? { body: v.body, headers: { 'content-type': 'application/json' } } : {}),
  });
  const header = res.headers.get('payment-required');
  if (res.status !== 402 || !header)
    throw new Error(
      `expected a 402 challenge from ${v.method} ${v.path}, got ${res.status}: ${(await res.text()).slice(0, 300)}`,
    );
  return decodePaymentRequiredHeader(header);
}

if (
  process.argv.includes('--load-generator') &&
  process.argv[1] &&
  resolve(process.argv[1]) === fileURLToPath(import.meta.url)
) {
  await loadGenerator(); // answers the parent until told to exit
}
