/**
 * Starting the app in-process for a bench that pays its requests
 * (test/bench/api.bench.ts, utility.bench.ts, ai.bench.ts): the api role
 * with x402 verified for real on the dev chain and settlement excluded
 * (test/bench/x402-load.ts), its production-like log written to a file, the
 * positive-number knobs, and one clean-up run on the way out or on a signal.
 */
import { pino } from 'pino';
import type { RunningApi } from '../../api/role.js';
import type { PaymentSettlement } from '../../api/payment/settlement.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { startProcess, type RunningProcess } from '../../roles/process.js';
import { excludeSettlement } from './x402-load.js';

/** A knob that must be a positive number when set. */
export function envNum(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${v}`);
  return n;
}

/**
 * The api role as deployed (NODE_ENV=production: no per-response schema check), paid on the dev chain at list
 * prices (which production refuses unless told: hence the explicit override), replay guard in memory.
 */
export const PAID_API_ROLE = {
  ROLE: 'api',
  NODE_ENV: 'production',
  SETTLEMENT: 'devchain',
  PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION: 'true',
  PAYMENT_REPLAY_STORE: 'memory',
  PRICE_OVERRIDES: '',
} as const satisfies Record<string, string>;

/** The app's log as in production (one access line per request, BENCH_LOG_LEVEL, default info), into `file`. */
export function benchLogger(file: string): Logger {
  return pino(
    {
      level: process.env.BENCH_LOG_LEVEL ?? 'info',
      base: { service: 'x402-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['*.text', '*.body', '*.data', 'req.headers["payment-signature"]', 'req.headers["x-payment"]'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: file, sync: false, mkdir: true }),
  );
}

export interface PaidApi {
  proc: RunningProcess;
  api: RunningApi;
  url: string;
  settlement: PaymentSettlement;
  /** Verify latencies (ms) at the facilitator, and the settle calls answered by the no-op. */
  payment: ReturnType<typeof excludeSettlement>;
}

/**
 * startProcess with a config holding the api role (SETTLEMENT=devchain),
 * once its payment gate is ready, with settlement excluded. Shuts the process
 * down again when the gate does not come up.
 */
export async function startPaidApi(config: Config, logger: Logger): Promise<PaidApi> {
  const proc = await startProcess(config, logger);
  try {
    const api = proc.roles.find((r) => r.name === 'api') as RunningApi | undefined;
    if (!api) throw new Error(`no api role in ROLE=${config.ROLE}`);
    await api.payments.core.ready();
    const settlement = api.payments.settlement;
    const local = settlement.local;
    return {
      proc,
      api,
      url: proc.http.url,
      settlement,
      payment: excludeSettlement(settlement.facilitator, local ? (p) => local.release(p) : undefined),
    };
  } catch (err) {
    await proc.shutdown('bench start failed');
    throw err;
  }
}

/** `work` run once, however often it is asked for; SIGINT or SIGTERM runs it too, then exits with 130. */
export function cleanupOnSignal(work: () => Promise<void>): () => Promise<void> {
  let cleaning: Promise<void> | undefined;
  const cleanup = () => (cleaning ??= work());
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return cleanup;
}
