/**
 * Health registry: each component (bus, store, queue, settlement, ingestors,
 * pipeline canary) registers a probe; `/health` runs them all with a deadline.
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
  private readonly startedAt = Date.now();

  constructor(
    private readonly meta: { version: string; role: string },
    private readonly probeTimeoutMs = 2000,
  ) {}

  register(name: string, probe: HealthProbe): void {
    this.probes.set(name, probe);
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

  async check(): Promise<HealthReport> {
    const entries = await Promise.all(
      [...this.probes].map(async ([name, probe]): Promise<[string, ComponentHealth]> => {
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
    const components = Object.fromEntries(entries);
    const worst = entries.reduce<HealthStatus>((acc, [, c]) => (rank[c.status] > rank[acc] ? c.status : acc), 'ok');
    return {
      status: worst,
      version: this.meta.version,
      role: this.meta.role,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
      checked_at: new Date().toISOString(),
      components,
    };
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
