/**
 * Event ids that name one event and one only, across restarts and replicas.
 *
 * An id is `<identity>:<digest>`: the identity says what the event is about
 * (source kind, venue, pair, the venue's sequence or block, the event time),
 * the digest is the first 64 bits of sha256 over the event's content (every
 * field but the id and the ingest time, in a fixed key order). So:
 *  - the same event observed twice (a replay, two replicas reading the same
 *    block, a reconnect that delivers the same book) has the same id, and the
 *    idempotent store keeps one row;
 *  - two different events never share an id, even when the identity repeats
 *    (a sequence counter that restarts with a new connection, a simulator
 *    restarted with the same seed, two probes in the same millisecond):
 *    their contents differ, so their digests do.
 * Hand-written because it is a few lines over node:crypto; what matters is
 * the rule, tested in test/unit/event-id.test.ts and by restarting every
 * ingestor on the same store (test/integration/ingest-restart.test.ts).
 */
import { createHash } from 'node:crypto';

/** Fields that do not make an event different: its id, and when this process happened to ingest it. */
const NOT_CONTENT = new Set(['event_id', 'ingest_time_ms']);

/** Canonical JSON of an event's content: keys sorted at every level, the fields above left out at the top. */
function canonical(value: unknown, top: boolean): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, false)).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>)
      .filter((k) => !(top && NOT_CONTENT.has(k)) && (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k], false)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The 16-hex-digit digest of an event's content (see the module comment). */
export function contentDigest(event: object): string {
  return createHash('sha256').update(canonical(event, true)).digest('hex').slice(0, 16);
}

/** `<identity>:<digest of the content>`; `event` is the event without its id (or with any id: it is ignored). */
export function contentEventId(identity: string, event: object): string {
  return `${identity}:${contentDigest(event)}`;
}

/** Whether an id carries the digest of this content (the id rule holds for this event). */
export function idMatchesContent(event: { event_id: string }): boolean {
  const digest = event.event_id.slice(event.event_id.lastIndexOf(':') + 1);
  return digest === contentDigest(event);
}
