/**
 * An answer sent as a stream rather than a body known in full (the paid event
 * stream, text/event-stream: api/telemetry/stream/), paid in advance: the
 * handler returns it at once, the payment is settled before its first byte,
 * and its bytes follow for as long as the period bought lasts.
 *
 * Transport-neutral: a door that sends streams (HTTP) sends `body` with
 * `contentType` and `headers`; since the bytes are not known when the payment
 * settles, nothing signs or keeps them, and a retry of the paying call (same
 * payment identifier) gets `retryAnswer` back instead (JSON: how to resume).
 * A one-shot door (MCP, A2A: one JSON answer per call) refuses a streamed SKU
 * before payment (api/paid-call/paid-call.ts).
 */
import type { Readable } from 'node:stream';

export interface StreamedAnswer {
  readonly streamed: true;
  contentType: string;
  headers: Record<string, string>;
  body: Readable;
  /** What a retry of the paying call gets instead of the stream (status 200). */
  retryAnswer: { contentType: string; body: string };
}

export function isStreamedAnswer(answer: unknown): answer is StreamedAnswer {
  return typeof answer === 'object' && answer !== null && (answer as { streamed?: unknown }).streamed === true;
}

/** A SKU whose answer is a stream declares it (discovery and the one-shot doors read it): events, or a file. */
export interface StreamedDelivery {
  delivery: 'event-stream' | 'file';
}

export function isStreamedSku(sku: object): boolean {
  const delivery = (sku as Partial<StreamedDelivery>).delivery;
  return delivery === 'event-stream' || delivery === 'file';
}

/** A SKU answered as server-sent events: its resume cursor comes as the `Last-Event-ID` header. */
export function isEventStreamSku(sku: object): boolean {
  return (sku as Partial<StreamedDelivery>).delivery === 'event-stream';
}
