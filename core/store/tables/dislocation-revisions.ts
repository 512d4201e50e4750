/**
 * Every revision of the opportunities of a pair opened in a window, oldest
 * first: what `dislocations?revisions=true` serves beside each item (an
 * opportunity's path: how its spread, profit, capacity and depth moved while
 * it was open, at the detector's revision resolution, docs/metrics.md
 * section 2). Duplicates of a revision (a replay before a ClickHouse merge)
 * are identical rows: dropped here, adjacent in this order.
 */
import { DislocationNumbers } from '../../events/market.js';
import { sql } from '../sql.js';
import type { Store } from '../store.js';
import { DISLOCATION_COLUMNS, type DislocationRecord } from './dislocations.js';
import { num, timeRange } from './query-helpers.js';
import { keysOf } from './record-columns.js';

/** What a revision serves: the dislocation's numbers and the ladder size of its profit. */
const REVISION_FIELDS = ['revision', 'status', ...keysOf(DislocationNumbers), 'profit_size_usd'] as const;

/** One revision of an opportunity, its fields named as the record's, and `updated_at`, its event time as the API states it. */
export type RevisionItem = Pick<DislocationRecord, (typeof REVISION_FIELDS)[number]> & { updated_at: string };

/** opportunity_id -> its revisions (revision ascending), for the opportunities of `pair` opened in [fromMs, toMs). */
export async function revisionsInSlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<Map<string, RevisionItem[]>> {
  const rows = await store.query(sql`
    SELECT opportunity_id, updated_at_ms, ${DISLOCATION_COLUMNS.select(REVISION_FIELDS)}
    FROM dislocations
    WHERE pair = ${pair} AND ${timeRange(sql`opened_at`, sql`opened_at_ms`, fromMs, toMs)}
    ORDER BY opportunity_id, revision`);
  const out = new Map<string, RevisionItem[]>();
  for (const r of rows) {
    const id = String(r.opportunity_id);
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    const revision = DISLOCATION_COLUMNS.read(r, REVISION_FIELDS);
    if (list.length && list[list.length - 1]!.revision === revision.revision) continue;
    list.push({ ...revision, updated_at: new Date(num(r.updated_at_ms)).toISOString() });
  }
  return out;
}
