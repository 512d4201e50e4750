/**
 * Health registry: each component (bus, store, queue, settlement, ingestors,
 * pipeline canary) registers a probe; `/health` runs them all with a deadline,
 * and readiness (core/readiness.ts) runs the few it needs every second. Every
 * check keeps each component's latest result, which readiness reads for free.
 *
 * The overall status is the verdict of the role's readiness when one is set
 * (`setVerdict`): `down` only when the role can serve nothing, `degraded`
 * while some component is not ok; without one, the worst component's.
 */
import { errorMessage } from './errors.js';
import { withTimeout } from './backoff.js';

export type HealthStatus = 'ok' | 'degraded' | 'down';

/** What a probe reports: a status, the reason when not ok, and any facts worth showing. */
export interface ProbeResult {
  status: HealthStatus;
  /** Adapter or kind, e.g. `kafka`, `duckdb`. */
  adapter?: string;
  reason?: string;
  [extra: string]: unknown;
}

export interface ComponentHealth extends ProbeResult {
  latency_ms: number;
}

export type HealthProbe = () => Promise<ProbeResult>;

/** A component's latest result and when it was taken (epoch ms). */
export interface LatestHealth extends ComponentHealth {
  at: number;
}

/** The overall status from every component's result. */
export type HealthVerdict = (components: Record<string, ComponentHealth>) => HealthStatus;

export interface HealthReport {
  status: HealthStatus;
  version: string;
  role: string;
  uptime_s: number;
  checked_at: string;
  components: Record<string, ComponentHealth>;
}

const rank: Record<HealthStatus, number> = { ok: 0, degraded: 1, down: 2 };

export class HealthRegistry {
  private readonly probes = new Map<string, HealthProbe>();
  private readonly latestResults = new Map<string, LatestHealth>();
  private readonly startedAt = Date.now();
  private verdict: HealthVerdict = worstOf;

  constructor(
    private readonly meta: { version: string; role: string },
    private readonly probeTimeoutMs = 2000,
  ) {}

  register(name: string, probe: HealthProbe): void {
    this.probes.set(name, probe);
  }

  has(name: string): boolean {
    return this.probes.has(name);
  }

  /** Decides the overall status (core/readiness.ts sets it from the role's route families). */
  setVerdict(verdict: HealthVerdict): void {
    this.verdict = verdict;
  }

  /** The latest result of `name` from any check, or undefined before its first one. */
  latest(name: string): LatestHealth | undefined {
    return this.latestResults.get(name);
  }

  /** Wraps a ping() into a probe: ok when it answers, down with the reason when it throws. */
  registerPing(
    name: string,
    adapter: string,
    ping: () => Promise<unknown>,
    describe?: () => Partial<ProbeResult>,
  ): void {
    this.register(name, async () => {
      await ping();
      return { status: 'ok', adapter, ...(describe?.() ?? {}) };
    });
  }

  /** Runs the probes named in `only` (default all) and records their results. */
  async check(only?: readonly string[]): Promise<HealthReport> {
    const selected = only ? [...this.probes].filter(([name]) => only.includes(name)) : [...this.probes];
    const entries = await Promise.all(
      selected.map(async ([name, probe]): Promise<[string, ComponentHealth]> => {
        const t0 = performance.now();
        try {
          const result = await withTimeout(
            probe(),
            this.probeTimeoutMs,
            () => new Error(`no answer within ${this.probeTimeoutMs} ms`),
          );
          return [name, { ...result, latency_ms: round(performance.now() - t0) }];
        } catch (err) {
          return [name, { status: 'down', reason: errorMessage(err), latency_ms: round(performance.now() - t0) }];
        }
      }),
    );
    const at = Date.now();
    for (const [name, c] of entries) this.latestResults.set(name, { ...c, at });
    const components = Object.fromEntries(entries);
    return {
      status: this.verdict(components),
      version: this.meta.version,
      role: this.meta.role,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
      checked_at: new Date().toISOString(),
      components,
    };
  }
}

/** The worst component's status. */
export function worstOf(components: Record<string, ComponentHealth>): HealthStatus {
  return Object.values(components).reduce<HealthStatus>(
    (acc, c) => (rank[c.status] > rank[acc] ? c.status : acc),
    'ok',
  );
}

const round = (ms: number) => Math.round(ms * 10) / 10;
