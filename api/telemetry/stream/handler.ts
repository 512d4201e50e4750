/**
 * GET /api/v1/crypto/stream: the live stream of dislocations (every revision:
 * opened, revised, closed) and closed 15-minute spread candles, as server-sent
 * events (event-stream.ts), paid in advance for `minutes` (1..MAX_STREAM_MINUTES:
 * the route's price per minute x minutes, within the spec's 0.2 USD a call:
 * api/sku/call-price.ts), of one `pair` or every pair.
 *
 * Resume: the stream opens with its token (event `stream`, and the
 * `Stream-Token` header); a reconnect with `?token=` and `Last-Event-ID` (or
 * `last_event_id`) gets the events after that id, up to the same period's end,
 * nothing paid (the call buys 0 units); without an id, from the period's start.
 * A token resumes until one stream minute after its period's end; later: 410
 * `stream_ended`. A new paid stream may also start from an earlier stream's id
 * (after a gap), at most STREAM_MAX_BACKFILL_MS back.
 *
 * Pre-flight (before any challenge, never charged): 400 for a bad `minutes`,
 * `pair`, `token` or id (with the field), 410 for an ended token, 503
 * `stream_capacity_full` when STREAM_MAX_CONCURRENT streams are open.
 */
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import type { PairsCatalogue } from '../../../core/markets/pairs.js';
import type { StreamPosition } from '../../../core/store/tables/stream-cursor.js';
import type { StreamedAnswer } from '../../sku/streamed-answer.js';
import type { PricedPreparation } from '../../sku/call-price.js';
import { pairParam, ZERO_CHARGE_TEXT } from '../../sku/schemas.js';
import type { SkuCall } from '../../sku/sku.js';
import { endOfMs, MAX_EVENT_ID_LENGTH, positionOf } from './event-id.js';
import { EventStream } from './event-stream.js';
import type { StreamSlots } from './stream-slots.js';
import { issueToken, MAX_TOKEN_LENGTH, readToken, type StreamPeriod } from './stream-token.js';

/** The longest period one payment buys: 20 minutes at the default 0.01 USD a minute is the spec's 0.2 USD. */
export const MAX_STREAM_MINUTES = 20;

const wholeMinutes = z.preprocess(
  (v) => (typeof v === 'string' && /^\d{1,6}$/.test(v) ? Number(v) : v),
  z.number().int().min(1).max(MAX_STREAM_MINUTES),
);

const issue = (code: string, path: string, message: string) => ({
  code: 'custom' as const,
  path: [path],
  message,
  params: { code },
});

export function streamInput(pairs: PairsCatalogue) {
  return z
    .strictObject({
      minutes: wholeMinutes
        .optional()
        .describe(`Minutes of stream bought (1-${MAX_STREAM_MINUTES}), charged per minute; not with \`token\``),
      pair: pairParam(pairs).optional().describe('One pair (ETH/USD or ETH-USD); default every pair'),
      token: z
        .string()
        .min(1)
        .max(MAX_TOKEN_LENGTH)
        .optional()
        .describe('Resume token of a paid stream (its `stream` event): continues that period, nothing paid'),
      last_event_id: z
        .string()
        .min(1)
        .max(MAX_EVENT_ID_LENGTH)
        .optional()
        .describe('Resume after this event id (the `Last-Event-ID` header, which wins, as a parameter)'),
    })
    .superRefine((v, ctx) => {
      if (v.token === undefined && v.minutes === undefined)
        ctx.addIssue(issue('missing_parameter', 'minutes', 'required (or `token` to resume a paid stream)'));
      if (v.token !== undefined && v.minutes !== undefined)
        ctx.addIssue(issue('invalid_parameter', 'minutes', 'a token resumes a paid period: send it without `minutes`'));
      if (v.token !== undefined && v.pair !== undefined)
        ctx.addIssue(issue('invalid_parameter', 'pair', 'a token carries its pair: send it without `pair`'));
      if (v.last_event_id !== undefined && positionOf(v.last_event_id) === undefined)
        ctx.addIssue(issue('invalid_parameter', 'last_event_id', 'not an event id this stream sends (`<ms>-<key>`)'));
    });
}
export type StreamInput = z.output<ReturnType<typeof streamInput>>;

/** One event of the stream, as documented (the answer itself is text/event-stream). */
export const StreamEventSchema = z.object({
  event: z
    .enum(['stream', 'dislocation', 'candle', 'end'])
    .describe(
      '`stream` first (token, period); `dislocation`: one revision, as a dislocations item; `candle`: a closed 15-minute candle, as the spread-candles answer; `end` last',
    ),
  id: z
    .string()
    .optional()
    .describe('`<event time ms>-<key>`, the resume cursor (`Last-Event-ID`); none on `stream`/`end`'),
  data: z.record(z.string(), z.unknown()).describe('The event, JSON'),
});

export const STREAM_EXAMPLE = {
  event: 'stream',
  data: {
    token: 'eyJmIjoxNzcyNDYwMDAwMDAwLCJlIjoxNzcyNDYwMzAwMDAwLCJwIjoiRVRIL1VTRCIsIm4iOiI5YzFlMDRhMmI3In0.Zm9v',
    starts_at: '2026-03-02T14:00:00.000Z',
    ends_at: '2026-03-02T14:05:00.000Z',
    pair: 'ETH/USD',
  },
};

/** What the pre-flight hands the handler: the minutes bought (0 for a resume), the cursor, a resumed period. */
export class StreamPrepared implements PricedPreparation {
  constructor(
    readonly priceUnits: number,
    readonly after: StreamPosition | undefined,
    readonly resumed: { period: StreamPeriod; token: string } | undefined,
  ) {}
}

/** A refusal before payment: it carries the zero charge (api/paid-call/preflight-rejection.ts recognises it). */
const rejection = (code: string, message: string, status: number, details: Record<string, unknown>) =>
  new AppError(code, message, status, { ...details, charged: ZERO_CHARGE_TEXT });

export function streamPreflight(slots: StreamSlots) {
  return async ({ input, runtime }: SkuCall<StreamInput>): Promise<StreamPrepared> => {
    const { config } = runtime;
    const now = runtime.now();
    if (slots.isFull(config.STREAM_MAX_CONCURRENT))
      throw rejection('stream_capacity_full', 'every stream slot of this server is taken; retry later', 503, {
        retry_after_seconds: 30,
      });
    const cursor = input.last_event_id === undefined ? undefined : positionOf(input.last_event_id);
    if (input.token !== undefined) {
      const period = readToken(input.token, config.STREAM_TOKEN_SECRET);
      if (!period)
        throw rejection('invalid_parameter', 'not a stream token this server issued', 400, { field: 'token' });
      if (now >= period.endMs + config.STREAM_SETTLE_MS + config.STREAM_MINUTE_MS)
        throw rejection(
          'stream_ended',
          `the paid period ended at ${new Date(period.endMs).toISOString()}; a new stream is paid again (it may start from your Last-Event-ID)`,
          410,
          { field: 'token' },
        );
      const start = endOfMs(period.fromMs - 1);
      const after = cursor && cursor.ms >= period.fromMs ? cursor : start;
      return new StreamPrepared(0, after, { period, token: input.token });
    }
    if (cursor && cursor.ms < now - config.STREAM_MAX_BACKFILL_MS)
      throw rejection(
        'invalid_parameter',
        `a new stream starts at most ${config.STREAM_MAX_BACKFILL_MS / 60_000} minutes back`,
        400,
        { field: 'last_event_id' },
      );
    return new StreamPrepared(input.minutes!, cursor, undefined);
  };
}

export function streamHandler(slots: StreamSlots) {
  return async ({ input, runtime }: SkuCall<StreamInput>, prepared: StreamPrepared): Promise<StreamedAnswer> => {
    const { config } = runtime;
    const release = slots.take(config.STREAM_MAX_CONCURRENT);
    // Lost the race for the last slot since the pre-flight: the call fails and its payment is abandoned.
    if (!release) throw new AppError('stream_capacity_full', 'every stream slot of this server is taken', 503);
    const now = runtime.now();
    const period: StreamPeriod = prepared.resumed?.period ?? {
      fromMs: prepared.after?.ms ?? now,
      endMs: now + prepared.priceUnits * config.STREAM_MINUTE_MS,
      pair: input.pair,
    };
    const token = prepared.resumed?.token ?? issueToken(period, config.STREAM_TOKEN_SECRET);
    const after = prepared.after ?? endOfMs(now - 1);
    const terms = {
      token,
      starts_at: new Date(period.fromMs).toISOString(),
      ends_at: new Date(period.endMs).toISOString(),
      pair: period.pair ?? null,
    };
    return {
      streamed: true,
      contentType: 'text/event-stream; charset=utf-8',
      headers: { 'Stream-Token': token, 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
      body: new EventStream(runtime, { period, token, after, release }),
      retryAnswer: { contentType: 'application/json', body: JSON.stringify(terms) },
    };
  };
}
