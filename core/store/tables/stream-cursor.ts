/**
 * The reads of the live event stream (api/telemetry/stream/): the revisions
 * of the `dislocations` table after a cursor, in the stream's order (event
 * time `updated_at_ms`, then `event_id`), each as the opportunity stood at
 * that revision (its peaks are cumulative in the row, so a revision row is
 * the opportunity's state then: the item the dislocations route serves for
 * it, had it been the latest). One query, the same on every store; a
 * duplicate of a revision (a replay before a ClickHouse merge) is an
 * identical row, adjacent in this order, dropped here.
 */
import { sql } from '../sql.js';
import type { Store } from '../store.js';
import { DISLOCATION_COLUMNS, LATEST_FIELDS, opportunityOf, type OpportunityState } from './dislocations.js';
import { num } from './query-helpers.js';

/** A position in the stream: event time, then the event's key (strings compared byte-wise, as the stores do). */
export interface StreamPosition {
  ms: number;
  key: string;
}

export interface RevisionEvent {
  /** `<opportunity_id>:<revision>`: the row's event_id, the event's key. */
  eventId: string;
  /** Event time of the revision. */
  ms: number;
  state: OpportunityState;
}

/**
 * Revisions strictly after `after` and with event time before `beforeMs`, oldest first, at most `limit` (of
 * `pair`, or of every pair).
 */
export async function revisionsAfter(
  store: Store,
  options: { after: StreamPosition; beforeMs: number; limit: number; pair?: string | undefined },
): Promise<RevisionEvent[]> {
  const { after, beforeMs, limit, pair } = options;
  if (beforeMs <= after.ms) return [];
  const ofPair = pair === undefined ? sql`` : sql`pair = ${pair} AND `;
  // `ts` (second precision) prunes partitions and the index; `updated_at_ms` is exact.
  const rows = await store.query(sql`
    SELECT event_id, opportunity_id, revision, opened_at_ms, updated_at_ms, ${DISLOCATION_COLUMNS.select(LATEST_FIELDS)}
    FROM dislocations
    WHERE ${ofPair}ts >= ${new Date(Math.floor(after.ms / 1000) * 1000)} AND ts <= ${new Date(Math.ceil(beforeMs / 1000) * 1000)}
      AND (updated_at_ms > ${after.ms} OR (updated_at_ms = ${after.ms} AND event_id > ${after.key}))
      AND updated_at_ms < ${beforeMs}
    ORDER BY updated_at_ms, event_id
    LIMIT ${limit}`);
  const out: RevisionEvent[] = [];
  for (const r of rows) {
    const eventId = String(r.event_id);
    if (out.length && out[out.length - 1]!.eventId === eventId) continue;
    const state = opportunityOf({
      ...DISLOCATION_COLUMNS.read(r, LATEST_FIELDS),
      opportunity_id: String(r.opportunity_id),
      revision: num(r.revision),
      opened_at_ms: num(r.opened_at_ms),
      updated_at_ms: num(r.updated_at_ms),
    });
    out.push({ eventId, ms: num(r.updated_at_ms), state });
  }
  return out;
}
