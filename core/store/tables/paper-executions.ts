/**
 * Table `paper_executions` (sql/<dialect>/002_market_data.sql): one paper
 * execution per opportunity that became profitable (aggregate/paper-execution.ts);
 * row type, insert, fill rate and counts. Formulas: docs/metrics.md.
 */
import { final, sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { inList, intDiv, num, numOrNull, timeRange } from './query-helpers.js';

/**
 * `filled`: both legs, sent at the measured latencies, still made money after
 * costs; `missed`: they did not (or a leg could not fill at that size);
 * `unmeasured`: no latency sample in the hour before the decision, not
 * counted in fill rates.
 */
export type PaperOutcome = 'filled' | 'missed' | 'unmeasured';

export interface PaperExecution {
  opportunity_id: string;
  id: number;
  revision: number;
  pair: string;
  buy_venue: string;
  sell_venue: string;
  decided_at_ms: number;
  size_usd: number;
  quoted_buy_price: number;
  quoted_sell_price: number;
  quoted_net_bps: number;
  buy_latency_ms: number;
  sell_latency_ms: number;
  buy_arrival_ms: number;
  sell_arrival_ms: number;
  buy_quote_event_id: string;
  sell_quote_event_id: string;
  fill_buy_price: number | null;
  fill_sell_price: number | null;
  realised_raw_bps: number | null;
  realised_net_bps: number | null;
  realised_profit_usd: number | null;
  outcome: PaperOutcome;
  filled: number;
  source: string;
}

export async function insertPaperExecutions(store: Store, executions: PaperExecution[]): Promise<void> {
  if (!executions.length) return;
  await store.insert(
    'paper_executions',
    executions.map((e) => ({ ...e, ts: new Date(e.decided_at_ms) })) as unknown as Row[],
  );
}

const COUNTED = sql`outcome IN ('filled', 'missed')`;

export interface FillRate {
  executions: number;
  filled: number;
  /** filled / executions x 100; null without executions. */
  fill_rate_pct: number | null;
}

/** Fill rate of the paper executions decided in [fromMs, toMs) (outcome `unmeasured` excluded). */
export async function fillRate(store: Store, fromMs: number, toMs: number): Promise<FillRate> {
  const [row] = await store.query(sql`
    SELECT count(*) AS n, sum(filled) AS f FROM paper_executions ${final}
    WHERE ${COUNTED} AND ${timeRange(sql`ts`, sql`decided_at_ms`, fromMs, toMs)}`);
  return fillRateOf(row);
}

/** fillRate of each `size`-long bucket of [fromMs, toMs) that holds an execution (key: bucket start; buckets are multiples of `size`). */
export async function fillRateBySlice(
  store: Store,
  fromMs: number,
  toMs: number,
  size: number,
): Promise<Map<number, FillRate>> {
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`decided_at_ms`, size)} AS b, count(*) AS n, sum(filled) AS f FROM paper_executions ${final}
    WHERE ${COUNTED} AND ${timeRange(sql`ts`, sql`decided_at_ms`, fromMs, toMs)}
    GROUP BY b`);
  return new Map(rows.map((r) => [num(r.b) * size, fillRateOf(r)]));
}

/** No execution decided. */
export const NO_FILLS: FillRate = { executions: 0, filled: 0, fill_rate_pct: null };

function fillRateOf(row: Row | undefined): FillRate {
  const executions = num(row?.n ?? 0);
  const filled = executions ? num(row?.f ?? 0) : 0;
  return { executions, filled, fill_rate_pct: executions ? (filled / executions) * 100 : null };
}

/** Paper executions ever stored with a measured outcome (optionally one pair): distinct opportunities. */
export async function countExecutions(store: Store, pair?: string): Promise<number> {
  const where = pair === undefined ? sql`` : sql` AND pair = ${pair}`;
  const [row] = await store.query(
    sql`SELECT count(DISTINCT opportunity_id) AS n FROM paper_executions WHERE ${COUNTED}${where}`,
  );
  return num(row?.n ?? 0);
}

export interface ExecutionSummary {
  size_usd: number;
  filled: boolean;
  outcome: PaperOutcome;
  realised_profit_usd: number | null;
}

/**
 * Paper executions of the given opportunities (decided at or after `sinceMs`,
 * and at or before `untilMs` when given), by opportunity id. A decision is one
 * of its opportunity's revisions, so the newest revision time of the
 * opportunities bounds it: without that bound the scan runs to the end of the table.
 */
export async function executionsFor(
  store: Store,
  opportunityIds: readonly string[],
  sinceMs: number,
  untilMs?: number,
): Promise<Map<string, ExecutionSummary>> {
  const out = new Map<string, ExecutionSummary>();
  const until = untilMs === undefined ? sql`` : sql` AND ts <= ${new Date(Math.ceil(untilMs / 1000) * 1000)}`;
  for (let i = 0; i < opportunityIds.length; i += 1000) {
    const chunk = opportunityIds.slice(i, i + 1000);
    const rows = await store.query(sql`
      SELECT opportunity_id, size_usd, filled, outcome, realised_profit_usd FROM paper_executions ${final}
      WHERE ts >= ${new Date(Math.floor(sinceMs / 1000) * 1000)}${until} AND opportunity_id IN ${inList(chunk)}`);
    for (const r of rows) out.set(String(r.opportunity_id), summaryOf(r));
  }
  return out;
}

/**
 * Every paper execution decided in [sinceMs, untilMs] (seconds precision,
 * both ends included; optionally one pair), by opportunity id: the same
 * summaries as executionsFor, read by time instead of by id (one query for a
 * day of opportunities, where id lists take one per thousand).
 */
export async function executionsInRange(
  store: Store,
  sinceMs: number,
  untilMs: number,
  pair?: string,
): Promise<Map<string, ExecutionSummary>> {
  const onePair = pair === undefined ? sql`` : sql`pair = ${pair} AND `;
  const rows = await store.query(sql`
    SELECT opportunity_id, size_usd, filled, outcome, realised_profit_usd FROM paper_executions ${final}
    WHERE ${onePair}ts >= ${new Date(Math.floor(sinceMs / 1000) * 1000)} AND ts <= ${new Date(Math.ceil(untilMs / 1000) * 1000)}`);
  return new Map(rows.map((r) => [String(r.opportunity_id), summaryOf(r)]));
}

const summaryOf = (r: Row): ExecutionSummary => ({
  size_usd: num(r.size_usd),
  filled: num(r.filled) === 1,
  outcome: String(r.outcome) as PaperOutcome,
  realised_profit_usd: numOrNull(r.realised_profit_usd),
});

/** Decision time of the newest stored paper execution (max() needs no FINAL), or undefined. */
export async function latestExecutionMs(store: Store): Promise<number | undefined> {
  const [row] = await store.query(sql`SELECT count(*) AS n, max(decided_at_ms) AS m FROM paper_executions`);
  return row && num(row.n) > 0 ? num(row.m) : undefined;
}

/** Every stored execution in [fromMs, toMs), oldest first (tests and tooling). */
export async function paperExecutionsInRange(store: Store, fromMs: number, toMs: number): Promise<PaperExecution[]> {
  const rows = await store.query(sql`
    SELECT * FROM paper_executions ${final}
    WHERE ${timeRange(sql`ts`, sql`decided_at_ms`, fromMs, toMs)}
    ORDER BY decided_at_ms, opportunity_id`);
  return rows.map((r) => ({
    opportunity_id: String(r.opportunity_id),
    id: num(r.id),
    revision: num(r.revision),
    pair: String(r.pair),
    buy_venue: String(r.buy_venue),
    sell_venue: String(r.sell_venue),
    decided_at_ms: num(r.decided_at_ms),
    size_usd: num(r.size_usd),
    quoted_buy_price: num(r.quoted_buy_price),
    quoted_sell_price: num(r.quoted_sell_price),
    quoted_net_bps: num(r.quoted_net_bps),
    buy_latency_ms: num(r.buy_latency_ms),
    sell_latency_ms: num(r.sell_latency_ms),
    buy_arrival_ms: num(r.buy_arrival_ms),
    sell_arrival_ms: num(r.sell_arrival_ms),
    buy_quote_event_id: String(r.buy_quote_event_id),
    sell_quote_event_id: String(r.sell_quote_event_id),
    fill_buy_price: numOrNull(r.fill_buy_price),
    fill_sell_price: numOrNull(r.fill_sell_price),
    realised_raw_bps: numOrNull(r.realised_raw_bps),
    realised_net_bps: numOrNull(r.realised_net_bps),
    realised_profit_usd: numOrNull(r.realised_profit_usd),
    outcome: String(r.outcome) as PaperOutcome,
    filled: num(r.filled),
    source: String(r.source),
  }));
}
