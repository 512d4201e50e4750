/**
 * Publishes the pipeline canary on a fixed interval. Its event id names the
 * run (source, the start time of this publisher) and the sequence: a replay
 * never counts twice, and a restarted process (which may get the same pid,
 * pid 1 in a container) never reuses an id for another canary.
 */
import type { Bus } from '../core/bus/bus.js';
import type { Logger } from '../core/logger.js';
import type { ProbeResult } from '../core/health.js';
import { TOPICS } from '../core/topics.js';
import type { HeartbeatEvent } from '../core/events/heartbeat.js';
import { errorMessage } from '../core/errors.js';

export class HeartbeatPublisher {
  private seq = 0;
  private readonly run = Date.now().toString(36);
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private lastOkAt = 0;
  private lastError: string | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly source: string,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = () => {
      this.inFlight = this.publishOne();
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  private async publishOne(): Promise<void> {
    const event: HeartbeatEvent = {
      event_id: `${this.source}:${this.run}:${this.seq}`,
      source: this.source,
      seq: this.seq,
      emitted_at_ms: Date.now(),
    };
    this.seq += 1;
    try {
      await this.bus.publish(TOPICS.heartbeat, [
        { key: this.source, value: JSON.stringify(event), timestamp: event.emitted_at_ms },
      ]);
      this.lastOkAt = Date.now();
      this.lastError = undefined;
    } catch (err) {
      this.lastError = errorMessage(err);
      this.logger.warn({ err: this.lastError }, 'heartbeat publish failed');
    }
  }

  health(): ProbeResult {
    const stale = Date.now() - this.lastOkAt > this.intervalMs * 3;
    if (this.lastError)
      return { status: 'degraded', reason: `last publish failed: ${this.lastError}`, last_ok_at: iso(this.lastOkAt) };
    if (stale)
      return { status: 'degraded', reason: 'no successful publish in 3 intervals', last_ok_at: iso(this.lastOkAt) };
    return { status: 'ok', published: this.seq, last_ok_at: iso(this.lastOkAt) };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}

const iso = (ms: number) => (ms ? new Date(ms).toISOString() : null);
