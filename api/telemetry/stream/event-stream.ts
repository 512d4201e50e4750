/**
 * One paid event stream as text/event-stream bytes (the WHATWG
 * server-sent events format): a Node Readable that starts when first read
 * (so nothing is read from the store before the payment settled) and:
 *
 *   opens        `event: stream` (no id: it does not move Last-Event-ID) with the resume token and the period;
 *   every poll   (STREAM_POLL_MS; at once while a backlog remains) the events after its cursor whose time is
 *                older than STREAM_SETTLE_MS and before the period's end (stream-events.ts), each
 *                `id: <cursor>`, `event: dislocation|candle`, `data: <the item, JSON>`;
 *   when quiet   `: keep-alive` after STREAM_HEARTBEAT_MS without a write;
 *   at the end   once every event of the period is sent (the period's end is STREAM_SETTLE_MS past):
 *                `event: end` (`reason: period_ended`) and the response closes.
 *
 * A store that fails a read is retried at the next poll (a comment says so);
 * nothing is skipped; still failing a minute past the period's end, the
 * stream ends (`reason: store_unavailable`, `last_event_id` where it stopped). Backpressure: a stream waits while its client does not
 * read. Destroyed (client gone): it stops polling and gives its slot back. The process draining (SIGTERM:
 * SkuRuntime.stopping) ends it at once with `event: end` (`reason: server_stopping`, `last_event_id`): the client
 * resumes with its token, on another replica when they share STREAM_TOKEN_SECRET.
 */
import { Readable } from 'node:stream';
import type { StreamPosition } from '../../../core/store/tables/stream-cursor.js';
import type { SkuRuntime } from '../../sku/sku.js';
import { eventIdOf } from './event-id.js';
import { eventsAfter, type StreamEvent } from './stream-events.js';
import type { StreamPeriod } from './stream-token.js';

export interface EventStreamPlan {
  period: StreamPeriod;
  token: string;
  /** Events after it are sent. */
  after: StreamPosition;
  /** Gives the stream's slot back (stream-slots.ts). */
  release: () => void;
}

/** How long past its period's end a stream whose store reads fail keeps trying before it ends. */
const GIVE_UP_AFTER_MS = 60_000;

type Runtime = SkuRuntime;

/** One SSE frame; `data` is JSON (one line: JSON.stringify escapes newlines). */
export function frame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class EventStream extends Readable {
  private started = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private cursor: StreamPosition;
  private lastWriteMs = 0;
  private lastSentId: string | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly plan: EventStreamPlan,
  ) {
    super();
    this.cursor = plan.after;
    runtime.stopping?.addEventListener('abort', () => this.resume_(), { once: true });
  }

  override _read(): void {
    if (!this.started) {
      this.started = true;
      this.run().catch((err: unknown) => this.destroy(err as Error));
      return;
    }
    this.resume_();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.resume_();
    this.plan.release();
    callback(error);
  }

  private resume_(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Writes, then waits while the client is not reading. */
  private async write(text: string): Promise<void> {
    this.lastWriteMs = Date.now();
    if (!this.push(text) && !this.stopped) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(() => this.resume_(), ms);
    });
  }

  private async run(): Promise<void> {
    const { config } = this.runtime;
    const { period } = this.plan;
    await this.write(
      frame('stream', {
        token: this.plan.token,
        starts_at: new Date(period.fromMs).toISOString(),
        ends_at: new Date(period.endMs).toISOString(),
        pair: period.pair ?? null,
        resume: 'reconnect with ?token=<token> and the Last-Event-ID header: the events after it, nothing paid',
      }),
    );
    while (!this.stopped) {
      const now = this.runtime.now();
      const beforeMs = Math.min(now - config.STREAM_SETTLE_MS, period.endMs);
      let backlog = false;
      if (beforeMs > this.cursor.ms) {
        try {
          const read = await eventsAfter(this.runtime, {
            after: this.cursor,
            beforeMs,
            limit: config.STREAM_MAX_EVENTS_PER_POLL,
            pair: period.pair,
          });
          for (const event of read.events) await this.send(event);
          this.cursor = read.through;
          backlog = read.through.ms < beforeMs - 1;
        } catch (err) {
          this.runtime.log?.warn({ err: (err as Error).message }, 'event stream: store read failed; retried');
          await this.write(': store read failed; retrying\n\n');
        }
        if (this.stopped) return;
      }
      const done = !backlog && beforeMs >= period.endMs && this.cursor.ms >= period.endMs - 1;
      // A store down past the period's end: the stream ends anyway, saying where it stopped (resumable by a new payment).
      const givenUp = !done && now >= period.endMs + config.STREAM_SETTLE_MS + GIVE_UP_AFTER_MS;
      const draining = !done && !givenUp && this.runtime.stopping?.aborted === true;
      if (done || givenUp || draining) {
        await this.write(
          frame('end', {
            reason: done ? 'period_ended' : draining ? 'server_stopping' : 'store_unavailable',
            ends_at: new Date(period.endMs).toISOString(),
            last_event_id: this.lastSentId ?? null,
          }),
        );
        this.push(null);
        return;
      }
      if (Date.now() - this.lastWriteMs >= config.STREAM_HEARTBEAT_MS) await this.write(': keep-alive\n\n');
      if (!backlog && !this.runtime.stopping?.aborted) await this.sleep(config.STREAM_POLL_MS);
    }
  }

  private send(event: StreamEvent): Promise<void> {
    this.lastSentId = eventIdOf(event.position);
    return this.write(frame(event.event, event.data, this.lastSentId));
  }
}
