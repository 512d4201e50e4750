/**
 * The CEX ingestor's record of one exchange symbol, shared by its stages:
 * where the book comes from (the mode of the per-symbol state machine, see
 * cex-ingestor.ts), its counters, and the last book snapshot published.
 * A symbol serves every catalogue pair quoted on it.
 *
 * Snapshots: ccxt mutates its books in place on every message, so each
 * update is copied (top N levels, plain arrays) synchronously when the watch
 * or the REST request resolves, before anything awaits; every event of that
 * update is built from that copy.
 */
import type { OrderBook } from 'ccxt';
import { copyLevels } from './book-math.js';

/** A deep copy of the top of a ccxt book at one instant. */
export interface BookSnapshot {
  symbol: string;
  bids: [number, number][];
  asks: [number, number][];
  /** Venue time of the book (ms). */
  timestamp: number;
  /** Book nonce, else the websocket frame sequence (connection-scoped), else null. */
  sequence: number | null;
  via: 'ws' | 'rest';
  taken_at: number;
}

export type Mode = 'connecting' | 'ws' | 'rest';

export interface SymbolState {
  symbol: string;
  pairs: string[];
  mode: Mode;
  /** Why the symbol is not on a live websocket (when mode is not ws). */
  reason: string | undefined;
  since: number;
  wsAttempt: number;
  wsFailures: number;
  /** A watch failed since the websocket last delivered (the next delivery is a reconnect). */
  wsFailedSinceLive: boolean;
  /** Successful reconnections: the websocket delivered again after a failure. */
  reconnects: number;
  gaps: number;
  crossed: number;
  staleEvents: number;
  invalid: number;
  lastUpdateAt: number;
  lastWsAt: number;
  lastBookEventAt: number;
  lastWsError: string | undefined;
  lastRestError: string | undefined;
  lastPublishError: string | undefined;
  /** Set while the latest book cannot be quoted (a side is empty). */
  bookProblem: string | undefined;
  quotes: number;
  snapshot: BookSnapshot | undefined;
  poller: Promise<void> | undefined;
  /** Identity of the last book state we published from the websocket (timestamp, nonce, frame sequence). */
  lastWsKey: string | undefined;
}

export function newSymbolState(symbol: string): SymbolState {
  return {
    symbol,
    pairs: [],
    mode: 'connecting',
    reason: undefined,
    since: 0,
    wsAttempt: 0,
    wsFailures: 0,
    wsFailedSinceLive: false,
    reconnects: 0,
    gaps: 0,
    crossed: 0,
    staleEvents: 0,
    invalid: 0,
    lastUpdateAt: 0,
    lastWsAt: 0,
    lastBookEventAt: 0,
    lastWsError: undefined,
    lastRestError: undefined,
    lastPublishError: undefined,
    bookProblem: undefined,
    quotes: 0,
    snapshot: undefined,
    poller: undefined,
    lastWsKey: undefined,
  };
}

/**
 * Copies the top `depth` levels of a ccxt book. The sequence is the book's
 * nonce when it has one, else (websocket books only) the sequence of the
 * last raw frame that updated the symbol, asked of `frameSequence` lazily.
 */
export function takeSnapshot(
  symbol: string,
  book: OrderBook,
  depth: number,
  via: 'ws' | 'rest',
  frameSequence: () => number | undefined,
): BookSnapshot {
  const now = Date.now();
  let sequence: number | null =
    typeof book.nonce === 'number' && Number.isInteger(book.nonce) && book.nonce >= 0 ? book.nonce : null;
  if (sequence === null && via === 'ws') sequence = frameSequence() ?? null;
  const ts = typeof book.timestamp === 'number' && book.timestamp > 0 ? Math.trunc(book.timestamp) : now;
  return {
    symbol,
    bids: copyLevels(book.bids, depth),
    asks: copyLevels(book.asks, depth),
    timestamp: ts,
    sequence,
    via,
    taken_at: now,
  };
}

/** One symbol's health: why it is degraded (undefined when ok) and the facts shown under `symbols`. */
export function symbolHealth(
  st: SymbolState,
  running: boolean,
  staleMs: number,
  now: number,
): { reason: string | undefined; entry: Record<string, unknown> } {
  const age = st.lastUpdateAt ? now - st.lastUpdateAt : null;
  let reason: string | undefined;
  if (!running) reason = 'not running';
  else if (st.mode !== 'ws') {
    reason = st.reason ?? `websocket ${st.mode}`;
    if (st.mode === 'rest')
      reason += st.lastRestError ? `; REST polling failing: ${st.lastRestError}` : '; polling REST';
  } else if (age === null) reason = 'no book yet';
  else if (age > staleMs) reason = `stale: last update ${age} ms ago`;
  if (!reason && st.bookProblem) reason = st.bookProblem;
  if (!reason && st.lastPublishError) reason = `bus publish failing: ${st.lastPublishError}`;
  const entry = {
    status: reason ? 'degraded' : 'ok',
    ...(reason ? { reason } : {}),
    pairs: st.pairs,
    mode: st.mode,
    last_update_age_ms: age,
    quotes: st.quotes,
    reconnects: st.reconnects,
    ws_failures: st.wsFailures,
    gaps: st.gaps,
    crossed: st.crossed,
    stale: st.staleEvents,
    invalid: st.invalid,
    ...(st.lastWsError ? { last_ws_error: st.lastWsError } : {}),
  };
  return { reason, entry };
}
