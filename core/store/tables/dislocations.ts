/**
 * Table `dislocations` (sql/<dialect>/002_market_data.sql): one row per
 * revision of an opportunity (event_id `<opportunity_id>:<revision>`); the
 * latest revision (argMax by revision) is the opportunity's state. Row type,
 * insert, the dislocations list, shadow capacity and counts. Formulas:
 * docs/metrics.md.
 */
import { z } from 'zod';
import {
  DislocationEvent,
  DislocationNumbers,
  DislocationPeaks,
  RevisionLegs,
  RevisionNumbers,
} from '../../events/market.js';
import { sql, type Sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { BASE_SLICE_MS, bySlice, intDiv, num, sourceLabel, timeRange } from './query-helpers.js';
import { keysOf, RecordColumns } from './record-columns.js';

/**
 * A dislocation revision as stored: the published DislocationEvent with
 * every field present, the numbers the revision also records
 * (RevisionNumbers), and what the analytics need.
 */
export const DislocationRecord = DislocationEvent.required()
  .extend(RevisionNumbers.shape)
  .extend(RevisionLegs.shape)
  .extend({
    /** Public numeric id: 52 bits of sha256(opportunity_id) (the item's `id`, column `id`). */
    id: z.number().int(),
    /** Quote whose evaluation produced this revision. */
    trigger_event_id: z.string(),
    peak_capacity_usd: z.number(),
    /** The peak capacity was a lower bound (net still positive at the depth). */
    peak_capacity_capped: z.boolean(),
    /** Integral of capacity over the life so far (USD x ms). */
    capacity_usd_ms: z.number(),
    closed_at_ms: z.number().int().nullable(),
    /** The methodology version of the detector that wrote the revision (aggregate/methodology.ts). */
    methodology: z.string(),
  });
export type DislocationRecord = z.output<typeof DislocationRecord>;

/**
 * The columns of `dislocations` (sql/<dialect>/002_market_data.sql, 003_*, 005_*):
 * one per record field, named as the field except these two peaks (named
 * first; see record-columns.ts), plus `opened_at` and `ts`, the
 * second-precision DateTimes of opened_at_ms and updated_at_ms that
 * partition and index the table. The two peak columns keep the names they
 * were created with: the ClickHouse release this runs on (18.16) has no
 * RENAME COLUMN, and a copy of the table would rewrite every stored row. The
 * analysts' views (004_analyst_views.sql) name them as the record and the API do.
 */
export const DISLOCATION_COLUMNS = new RecordColumns(DislocationRecord, {
  peak_raw_spread_bps: 'peak_raw_bps',
  peak_net_spread_bps: 'peak_net_bps',
});

export function dislocationRow(d: DislocationRecord): Row {
  return DISLOCATION_COLUMNS.rowOf(d, { opened_at: new Date(d.opened_at_ms), ts: new Date(d.updated_at_ms) });
}

export async function insertDislocations(store: Store, records: DislocationRecord[]): Promise<void> {
  if (!records.length) return;
  await store.insert('dislocations', records.map(dislocationRow));
}

/** What an opportunity is read with at its latest revision (argMax by revision). */
export const LATEST_FIELDS = [
  'id',
  'pair',
  'buy_venue',
  'sell_venue',
  'status',
  'duration_ms',
  ...keysOf(DislocationNumbers),
  ...keysOf(DislocationPeaks),
  'peak_capacity_usd',
  'peak_capacity_capped',
  'capacity_usd_ms',
  'fees_bps',
  'gas_usd',
  'profit_size_usd',
  ...keysOf(RevisionLegs),
  'methodology',
  'source',
] as const;
type LatestField = Exclude<(typeof LATEST_FIELDS)[number], 'id'>;

/**
 * An opportunity at its latest revision (latest per opportunity via argMax by
 * revision; duplicates cannot change it), its fields named as the record's,
 * plus the public item's `id`, `timestamp` (opened), `updated_at` and
 * `revision_count` (api/telemetry/dislocations serves it, rounded).
 */
export type OpportunityState = LatestRevision<LatestField> & {
  id: number;
  timestamp: string;
  updated_at: string;
  revision_count: number;
};

type RecordField = keyof DislocationRecord & string;

/** An opportunity at its latest revision: some of its fields, its id, revision and times (opened, latest revision). */
export type LatestRevision<K extends RecordField> = Pick<
  DislocationRecord,
  K | 'opportunity_id' | 'revision' | 'opened_at_ms' | 'updated_at_ms'
>;

/**
 * The opportunities matching `where` (on the revisions), each at its latest
 * revision (argMax by revision; duplicates of a revision cannot change it)
 * with `fields` of that revision, oldest opening first.
 */
export async function latestRevisions<K extends RecordField>(
  store: Store,
  fields: readonly K[],
  where: Sql,
): Promise<LatestRevision<K>[]> {
  const rows = await store.query(sql`
    SELECT opportunity_id, max(revision) AS rev, min(opened_at_ms) AS opened_ms, max(updated_at_ms) AS updated_ms,
      ${DISLOCATION_COLUMNS.selectEach(fields, (column) => sql`argMax(${column}, revision)`)}
    FROM dislocations
    WHERE ${where}
    GROUP BY opportunity_id
    ORDER BY opened_ms, opportunity_id`);
  return rows.map(
    (r) =>
      ({
        ...DISLOCATION_COLUMNS.read(r, fields),
        opportunity_id: String(r.opportunity_id),
        revision: num(r.rev),
        opened_at_ms: num(r.opened_ms),
        updated_at_ms: num(r.updated_ms),
      }) as LatestRevision<K>,
  );
}

export function opportunityOf(latest: LatestRevision<(typeof LATEST_FIELDS)[number]>): OpportunityState {
  return {
    ...latest,
    timestamp: new Date(latest.opened_at_ms).toISOString(),
    updated_at: new Date(latest.updated_at_ms).toISOString(),
    revision_count: latest.revision + 1,
  };
}

const openedIn = (fromMs: number, toMs: number) => timeRange(sql`opened_at`, sql`opened_at_ms`, fromMs, toMs);

/** Revisions of the opportunities opened in [fromMs, toMs), optionally of one pair. */
export const openedInSlice = (fromMs: number, toMs: number, pair?: string): Sql =>
  pair === undefined ? openedIn(fromMs, toMs) : sql`pair = ${pair} AND ${openedIn(fromMs, toMs)}`;

/** Opportunities opened in [fromMs, toMs) (optionally one pair), each at its latest revision, oldest first. */
export async function opportunitiesInSlice(
  store: Store,
  fromMs: number,
  toMs: number,
  pair?: string,
): Promise<OpportunityState[]> {
  return (await latestRevisions(store, LATEST_FIELDS, openedInSlice(fromMs, toMs, pair))).map(opportunityOf);
}

export interface DislocationsSlice {
  pair: string;
  slice_start: string;
  slice_end: string;
  count: number;
  dislocations: OpportunityState[];
  source: string | undefined;
}

/** The dislocations response: opportunities of `pair` opened in [fromMs, toMs), latest revision each. */
export async function dislocationsInSlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<DislocationsSlice> {
  return dislocationsSliceOf(pair, fromMs, toMs, await opportunitiesInSlice(store, fromMs, toMs, pair));
}

/**
 * The dislocations responses of consecutive slices of one pair (each [fromMs,
 * toMs), together covering one range) from one query over the range: by
 * slice start, each exactly what dislocationsInSlice answers for it.
 */
export async function dislocationsBySlice(
  store: Store,
  pair: string,
  slices: readonly { fromMs: number; toMs: number }[],
): Promise<Map<number, DislocationsSlice>> {
  const out = new Map<number, DislocationsSlice>();
  if (!slices.length) return out;
  const opportunities = await opportunitiesInSlice(store, slices[0]!.fromMs, slices[slices.length - 1]!.toMs, pair);
  for (const [slice, within] of bySlice(slices, opportunities, (o) => o.opened_at_ms))
    out.set(slice.fromMs, dislocationsSliceOf(pair, slice.fromMs, slice.toMs, within));
  return out;
}

function dislocationsSliceOf(
  pair: string,
  fromMs: number,
  toMs: number,
  opportunities: OpportunityState[],
): DislocationsSlice {
  return {
    pair,
    slice_start: new Date(fromMs).toISOString(),
    slice_end: new Date(toMs).toISOString(),
    count: opportunities.length,
    dislocations: opportunities,
    source: sourceLabel(opportunities.map((o) => o.source)),
  };
}

/** Distinct opportunities opened per 15-minute bucket (bucket index = opened_at_ms div 900000). */
export async function dislocationCountsBy15m(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<Map<number, number>> {
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`opened_at_ms`, BASE_SLICE_MS)} AS b, count(DISTINCT opportunity_id) AS n
    FROM dislocations
    WHERE pair = ${pair} AND ${openedIn(fromMs, toMs)}
    GROUP BY b`);
  return new Map(rows.map((r) => [num(r.b), num(r.n)]));
}

/** Opening time of the newest stored opportunity (max() needs no FINAL), or undefined. */
export async function latestOpenedMs(store: Store): Promise<number | undefined> {
  const [row] = await store.query(sql`SELECT count(*) AS n, max(opened_at_ms) AS m FROM dislocations`);
  return row && num(row.n) > 0 ? num(row.m) : undefined;
}

/** Distinct opportunities ever stored (optionally one pair). */
export async function countDislocations(store: Store, pair?: string): Promise<number> {
  const where = pair === undefined ? sql`` : sql` WHERE pair = ${pair}`;
  const [row] = await store.query(sql`SELECT count(DISTINCT opportunity_id) AS n FROM dislocations${where}`);
  return num(row?.n ?? 0);
}

/** Venue kind from its identifier: Base pools are `<protocol>_base`, anything else is the CEX. */
export const isDexVenue = (venue: string): boolean => venue.endsWith('_base');

// ---------------------------------------------------------------- paper-execution candidates

/** The first revision of an opportunity at which it was profitable at some size (what a desk would trade). */
export interface ActionableRevision {
  opportunity_id: string;
  id: number;
  revision: number;
  pair: string;
  buy_venue: string;
  sell_venue: string;
  opened_at_ms: number;
  decided_at_ms: number;
  profit_size_usd: number;
  net_spread_bps: number;
  source: string;
}

/**
 * Opportunities opened at or after `sinceMs` whose first profitable revision
 * (capacity > 0 while OPPORTUNITY) has no paper execution yet, oldest first.
 */
export async function actionableWithoutExecution(
  store: Store,
  sinceMs: number,
  limit: number,
): Promise<ActionableRevision[]> {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000);
  const rows = await store.query(sql`
    SELECT opportunity_id, min(revision) AS rev, argMin(id, revision) AS id_, argMin(pair, revision) AS pair_,
      argMin(buy_venue, revision) AS buy_venue_, argMin(sell_venue, revision) AS sell_venue_,
      min(opened_at_ms) AS opened_ms, argMin(updated_at_ms, revision) AS decided_ms, argMin(profit_size_usd, revision) AS size_,
      argMin(net_spread_bps, revision) AS net_, argMin(source, revision) AS source_
    FROM dislocations
    WHERE opened_at >= ${since} AND status = 'OPPORTUNITY' AND capacity_usd > 0 AND profit_size_usd > 0
      AND opportunity_id NOT IN (SELECT opportunity_id FROM paper_executions WHERE ts >= ${since})
    GROUP BY opportunity_id
    ORDER BY decided_ms, opportunity_id
    LIMIT ${limit}`);
  return rows.map((r) => ({
    opportunity_id: String(r.opportunity_id),
    id: num(r.id_),
    revision: num(r.rev),
    pair: String(r.pair_),
    buy_venue: String(r.buy_venue_),
    sell_venue: String(r.sell_venue_),
    opened_at_ms: num(r.opened_ms),
    decided_at_ms: num(r.decided_ms),
    profit_size_usd: num(r.size_),
    net_spread_bps: num(r.net_),
    source: String(r.source_),
  }));
}
