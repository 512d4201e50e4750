/**
 * The `id:` of a stream event, the cursor a client resumes from
 * (`Last-Event-ID`): `<event time ms>-<key>`, the key being the dislocation
 * revision's event_id (`<opportunity_id>:<revision>`) or `candle:<pair>` (a
 * closed 15-minute candle, its event time the slice's end). Events are sent
 * in (time, key) order, keys compared byte-wise as the stores compare them,
 * so "after this id" is one comparison on every store.
 */
import type { StreamPosition } from '../../../core/store/tables/stream-cursor.js';

/** Longest id accepted back (an event_id is well under it). */
export const MAX_EVENT_ID_LENGTH = 256;

const EVENT_ID = /^(\d{1,15})-([\x21-\x7e]{0,240})$/;

export function eventIdOf(position: StreamPosition): string {
  return `${position.ms}-${position.key}`;
}

/** The position an id names, or undefined when it is not one the stream sends. */
export function positionOf(id: string): StreamPosition | undefined {
  const match = id.length <= MAX_EVENT_ID_LENGTH ? EVENT_ID.exec(id) : null;
  return match ? { ms: Number(match[1]), key: match[2]! } : undefined;
}

/** a after b, in the stream's order. */
export function isAfter(a: StreamPosition, b: StreamPosition): boolean {
  return a.ms > b.ms || (a.ms === b.ms && a.key > b.key);
}

/** The position after every event of time `ms` (keys are printable ASCII, DEL sorts after them all). */
export function endOfMs(ms: number): StreamPosition {
  return { ms, key: '\x7f' };
}
