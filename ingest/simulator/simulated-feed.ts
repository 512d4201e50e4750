/**
 * Runs the market simulator in real time and publishes its events, so a
 * newcomer sees data flowing within seconds (`MARKET_SOURCE=simulated`).
 * The simulation advances in ticks of `tickMs` (what the events say); they
 * are published every `publishEveryMs` (default: every tick), all the ticks
 * due by then in one publish per topic. Publishing less often changes no
 * event, only how many the bus and the store take at once: the store pays
 * per statement, so `npm start` publishes every 2 s and idles cheaply
 * (docs/scaling.md, "Idle cost").
 */
import type { Bus, OutgoingMessage } from '../../core/bus/bus.js';
import type { Logger } from '../../core/logger.js';
import type { ProbeResult } from '../../core/health.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import { errorMessage } from '../../core/errors.js';
import { MarketSimulator, type SimEvent } from './market-simulator.js';

export interface SimulatedFeedOptions {
  bus: Bus;
  catalogue: PairsCatalogue;
  cexVenue: string;
  ladderUsd: number[];
  seed: number;
  tickMs: number;
  /** How often the ticks due are published (default tickMs): events reach the bus up to this late, unchanged. */
  publishEveryMs?: number;
  logger: Logger;
  /** Start this long before now and publish that history at once (SIM_BACKFILL_MINUTES; for an empty store). */
  backfillMs?: number;
  /** Impact bound and DEX hard maximum of the simulated depth (DEPTH_IMPACT_BPS, DEX_DEPTH_MAX_USD). */
  impactBps?: number;
  dexDepthMaxUsd?: number;
}

export class SimulatedFeed {
  private readonly sim: MarketSimulator;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private published = 0;
  private lastError: string | undefined;
  private lastOkAt = 0;

  private get publishEveryMs(): number {
    return Math.max(this.options.tickMs, this.options.publishEveryMs ?? this.options.tickMs);
  }

  constructor(private readonly options: SimulatedFeedOptions) {
    this.sim = new MarketSimulator(options.catalogue, {
      seed: options.seed,
      // A new run per start: event ids name it, so a restart never reuses an id (market-simulator.ts).
      startMs: Date.now() - (options.backfillMs ?? 0),
      cexVenue: options.cexVenue,
      ladderUsd: options.ladderUsd,
      cexTickMs: options.tickMs,
      ...(options.impactBps !== undefined ? { impactBps: options.impactBps } : {}),
      ...(options.dexDepthMaxUsd !== undefined ? { dexDepthMaxUsd: options.dexDepthMaxUsd } : {}),
    });
  }

  start(): void {
    const tick = () => {
      // Catch up to wall time, never ahead of it; one publish per topic per round (every tick due by then).
      this.inFlight = this.inFlight.then(() => this.publishUntil(Date.now()));
    };
    tick();
    this.timer = setInterval(tick, this.publishEveryMs);
    this.timer.unref();
  }

  /** Events generated but not published yet (a failed publish keeps them for the next tick, in order). */
  private unsent = new Map<string, OutgoingMessage[]>();

  private async publishUntil(now: number): Promise<void> {
    const byTopic = this.unsent;
    this.unsent = new Map();
    for (const e of this.sim.generate(now + 1) as Iterable<SimEvent>) {
      const list = byTopic.get(e.topic) ?? [];
      list.push({ key: e.key, value: JSON.stringify(e.event), timestamp: e.event.event_time_ms });
      byTopic.set(e.topic, list);
    }
    for (const [topic, messages] of byTopic) {
      try {
        if (!this.unsent.size) {
          await this.options.bus.publish(topic, messages);
          this.published += messages.length;
          continue;
        }
      } catch (err) {
        this.lastError = errorMessage(err);
        this.options.logger.warn(
          { err: this.lastError, kept: messages.length },
          'simulated feed publish failed; retrying with the next tick',
        );
      }
      this.unsent.set(topic, messages);
    }
    if (!this.unsent.size) {
      this.lastOkAt = Date.now();
      this.lastError = undefined;
    }
  }

  health(): ProbeResult {
    if (this.lastError) return { status: 'degraded', source: 'simulated', reason: `publish failed: ${this.lastError}` };
    if (Date.now() - this.lastOkAt > this.publishEveryMs * 10)
      return { status: 'degraded', source: 'simulated', reason: 'no publish in 10 rounds' };
    return { status: 'ok', source: 'simulated', published: this.published, pairs: this.options.catalogue.pairs.length };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}
