/**
 * The CEX venue latency probe: every `intervalMs`, one REST round trip to a
 * cheap public time endpoint of the exchange, published as a LatencyEvent
 * (`kind: 'cex_rest'`, keyed by venue) whether it succeeded or not. At most
 * one probe is in flight; a failure is a sample with `ok: false`, never an
 * exception. Health shows the endpoint, the sample count and the last sample.
 */
import type { Exchange } from 'ccxt';
import type { Bus } from '../../core/bus/bus.js';
import { LatencyEvent } from '../../core/events/market.js';
import { contentEventId } from '../../core/events/event-id.js';
import type { Logger } from '../../core/logger.js';
import { TOPICS } from '../../core/topics.js';
import { errorMessage } from '../../core/errors.js';

/** A public endpoint of the exchange's REST API, named the way ccxt's implicit API names it. */
export interface ProbeEndpoint {
  /** Path inside the API, e.g. `brokerage/time`. */
  path: string;
  /** ccxt API section, e.g. `['v3', 'public']` (coinbase) or `'public'` (binance). */
  api: string | string[];
}

/**
 * Cheap public time endpoints per ccxt exchange id (checked against ccxt 4.5:
 * `exchange.sign(path, api)` yields the documented URL). Coinbase: the
 * Advanced Trade server time, `GET /api/v3/brokerage/time`, same API family as
 * the order books.
 */
export const PROBE_ENDPOINTS: Record<string, ProbeEndpoint> = {
  coinbase: { path: 'brokerage/time', api: ['v3', 'public'] },
  binance: { path: 'time', api: 'public' },
  kraken: { path: 'Time', api: 'public' },
  okx: { path: 'public/time', api: 'public' },
};

export interface RestLatencyProbeOptions {
  exchange: Exchange;
  endpoint: ProbeEndpoint;
  source: 'live' | 'simulated';
  bus: Bus;
  logger: Logger;
  /** Whether the ingestor runs: a probe that ends after a stop publishes nothing. */
  isRunning: () => boolean;
}

export class RestLatencyProbe {
  private readonly venue: string;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private count = 0;
  private last: { rtt_ms: number; ok: boolean; at: number; error?: string } | undefined;

  constructor(private readonly options: RestLatencyProbeOptions) {
    this.venue = options.exchange.id;
  }

  /** Probes now, then every `intervalMs` (the timer does not hold the process open). */
  start(intervalMs: number): void {
    const tick = () => {
      if (!this.inFlight) this.inFlight = this.probeOnce().finally(() => (this.inFlight = undefined));
    };
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer; returns the probe still in flight, if any, for the caller to await. */
  stop(): Promise<void>[] {
    clearInterval(this.timer);
    this.timer = undefined;
    return this.inFlight ? [this.inFlight] : [];
  }

  health(): Record<string, unknown> {
    return {
      endpoint: this.options.endpoint.path,
      samples: this.count,
      ...(this.last
        ? { last_rtt_ms: this.last.rtt_ms, last_ok: this.last.ok, last_at: new Date(this.last.at).toISOString() }
        : {}),
      ...(this.last?.error ? { last_error: this.last.error } : {}),
    };
  }

  /**
   * One REST round trip, timed around the HTTP request alone. ccxt's implicit
   * API methods (and fetchTime) go through fetch2, which first waits in the
   * rate-limit queue (`throttle`) and, before any call needing markets, may run
   * loadMarkets; timing those would measure our own queue. So the request is
   * built with ccxt's `sign()` (same URL, headers and body as the implicit
   * method would send) and sent with `exchange.fetch()`, ccxt's raw HTTP call,
   * which has no throttle and no market loading; the one-time fetch-client
   * set-up (`loadFetchImplementation`) is done before the clock starts. The
   * clock includes ccxt's parsing of the (tiny) JSON answer.
   */
  private async probeOnce(): Promise<void> {
    const { exchange, endpoint, isRunning, logger } = this.options;
    if (!isRunning()) return;
    let url = '';
    let method = 'GET';
    let rtt = 0;
    let ok = false;
    let error: string | undefined;
    try {
      const request = exchange.sign(endpoint.path, endpoint.api, 'GET', {}) as {
        url: string;
        method: string;
        headers?: unknown;
        body?: unknown;
      };
      url = request.url;
      method = request.method ?? 'GET';
      await exchange.loadFetchImplementation();
      const t0 = performance.now();
      try {
        await exchange.fetch(request.url, method, request.headers, request.body);
        ok = true;
      } catch (err) {
        error = errorMessage(err);
      }
      rtt = performance.now() - t0;
    } catch (err) {
      error = `could not build the probe request: ${errorMessage(err)}`;
    }
    if (!isRunning()) return;
    const at = Date.now();
    this.count++;
    this.last = { rtt_ms: round3(rtt), ok, at, ...(error ? { error } : {}) };
    if (error) logger.debug({ err: error }, 'cex: latency probe failed');
    const content = {
      venue: this.venue,
      venue_kind: 'cex' as const,
      kind: 'cex_rest' as const,
      endpoint: `${method} ${pathOf(url) || endpoint.path}`.slice(0, 200),
      rtt_ms: round3(rtt),
      ok,
      event_time_ms: at,
      ingest_time_ms: at,
      source: this.options.source,
    };
    const event = LatencyEvent.safeParse({
      event_id: contentEventId(`cex:${this.venue}:rest_rtt:${at}`, content),
      ...content,
    } satisfies LatencyEvent);
    if (!event.success) {
      logger.error({ err: event.error.message }, 'cex: LatencyEvent failed validation, not published');
      return;
    }
    try {
      await this.options.bus.publish(TOPICS.latency, [
        { key: this.venue, value: JSON.stringify(event.data), timestamp: at },
      ]);
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'cex: latency publish failed');
    }
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
