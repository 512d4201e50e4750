/**
 * Readiness: what this process can serve now, per family of work, from the
 * health probes of the components each family needs (issue 23). A family is
 * ready while none of its components is `down` (a `degraded` store still
 * answers reads); a family that is not ready carries a stable code and the
 * reason, e.g. telemetry routes need the store (`store_unavailable`), job
 * routes the queue and a worker heartbeat (`queue_unavailable`).
 *
 * The needed probes run every `refreshMs` in the background (and any /health
 * check refreshes them too, core/health.ts keeps the latest results), so a
 * request reads the verdict from memory: it costs nothing per request and is
 * at most about a second old. The role's /health status follows from it:
 * `degraded` while a component is not ok, and `down` only when the role
 * can serve nothing (no family ready) and it is not a single dependency of
 * several that is away: the aggregate without its store (bus still up) is
 * `degraded`, as is the API without its store; a worker without its queue,
 * or an API without store and workers, is `down`. Restart policies use
 * /livez, load balancers /readyz (docs/operations.md).
 */
import { AppError } from './errors.js';
import type { ComponentHealth, HealthRegistry, HealthStatus } from './health.js';
import type { RoleName } from './role.js';

export interface FamilySpec {
  /** Health components (core/health.ts names) the family cannot work without; unregistered ones are skipped. */
  needs: readonly string[];
  /** The stable code a caller of this family gets while it is not ready, e.g. `store_unavailable`. */
  code: string;
}

export interface FamilyReadiness {
  ready: boolean;
  needs: string[];
  /** When not ready: the stable code and why. */
  code?: string;
  reason?: string;
}

export interface ReadinessReport {
  /** At least one family is ready: the process has something to serve (see docs/operations.md). */
  ready: boolean;
  role: string;
  checked_at: string;
  families: Record<string, FamilyReadiness>;
}

export const DEFAULT_READINESS_REFRESH_MS = 1000;

/**
 * The families of each role. The api's are its route families (api/route-readiness.ts maps each SKU to one):
 * telemetry reads the store, jobs need the queue and a worker heartbeat (`workers`, api/role.ts). The other roles
 * have one family, their own work, needing the ports they use.
 */
export const ROLE_FAMILIES: Record<RoleName, Record<string, FamilySpec>> = {
  api: {
    telemetry: { needs: ['store'], code: 'store_unavailable' },
    jobs: { needs: ['queue', 'workers'], code: 'queue_unavailable' },
  },
  ingest: { ingest: { needs: ['bus'], code: 'bus_unavailable' } },
  aggregate: { aggregate: { needs: ['bus', 'store'], code: 'dependency_unavailable' } },
  worker: { worker: { needs: ['queue'], code: 'queue_unavailable' } },
};

/** The families of a process running `roles`, without the components in `without` (none to wait for). */
export function familiesOf(roles: readonly RoleName[], without: readonly string[] = []): Record<string, FamilySpec> {
  const families: Record<string, FamilySpec> = {};
  for (const role of roles)
    for (const [name, spec] of Object.entries(ROLE_FAMILIES[role]))
      families[name] = { ...spec, needs: spec.needs.filter((n) => !without.includes(n)) };
  return families;
}

export class Readiness {
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private lastRefresh = 0;

  constructor(
    private readonly health: HealthRegistry,
    private readonly role: string,
    private readonly families: Readonly<Record<string, FamilySpec>>,
    private readonly refreshMs = DEFAULT_READINESS_REFRESH_MS,
  ) {
    health.setVerdict((components) => this.verdict(components));
  }

  /** Runs the needed probes once (awaited), then every refreshMs until stop(). */
  async start(): Promise<void> {
    await this.refresh();
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs the probes the families need (one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing ??= this.health
      .check(this.needed())
      .then(() => {
        this.lastRefresh = Date.now();
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /** The families' readiness from the latest probe results (no I/O). */
  report(): ReadinessReport {
    const families = Object.fromEntries(Object.keys(this.families).map((name) => [name, this.family(name)!]));
    return {
      ready: Object.values(families).some((f) => f.ready),
      role: this.role,
      checked_at: new Date(this.lastRefresh || Date.now()).toISOString(),
      families,
    };
  }

  /** One family's readiness from the latest probe results; undefined for a family this role does not have. */
  family(name: string): FamilyReadiness | undefined {
    const spec = this.families[name];
    if (!spec) return undefined;
    const needs = spec.needs.filter((n) => this.health.has(n));
    for (const component of needs) {
      const latest = this.health.latest(component);
      // Not checked yet: start() checks every needed component before the role serves.
      if (latest?.status === 'down')
        return { ready: false, needs, code: spec.code, reason: `${component}: ${latest.reason ?? 'down'}` };
    }
    return { ready: true, needs };
  }

  /** The 503 a caller of `family` gets while it is not ready (never charged: it is answered before any challenge). */
  refusal(name: string): AppError | undefined {
    const f = this.family(name);
    if (!f || f.ready) return undefined;
    return new AppError(f.code!, `${name} is not available right now: ${f.reason}`, 503, {
      family: name,
      reason: f.reason,
      retry_after_seconds: Math.max(1, Math.ceil(this.refreshMs / 1000)),
    });
  }

  /** /health's overall status (see the module comment). */
  verdict(components: Record<string, ComponentHealth>): HealthStatus {
    const statuses = Object.values(components).map((c) => c.status);
    if (statuses.every((s) => s === 'ok')) return 'ok';
    if (this.report().ready) return 'degraded';
    const needed = this.needed().filter((name) => components[name]);
    const away = needed.filter((name) => components[name]!.status === 'down');
    return needed.length > 1 && away.length === 1 ? 'degraded' : 'down';
  }

  private needed(): string[] {
    return [...new Set(Object.values(this.families).flatMap((f) => f.needs))];
  }
}
