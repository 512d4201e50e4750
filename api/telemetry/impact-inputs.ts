/**
 * The live inputs of impact-simulation, shared between concurrent and
 * closely following requests instead of read from the store per request
 * (three queries each): a documented, bounded staleness.
 *
 *   newest book of a pair        the newest book of every pair read at once, at
 *                                most once per IMPACT_INPUTS_MAX_AGE_MS (250 ms):
 *                                a request may be answered
 *                                from a book that is up to 250 ms behind the
 *                                newest stored one (the ingest publishes at most
 *                                one book per pair per second, so it is the
 *                                newest or the one before). The age limit of the
 *                                book (2 x CEX_STALE_MS) is checked against each
 *                                request's own clock, and a shared book that
 *                                has become too old is read again, never refused.
 *   realised volatility          computed once per book snapshot (the quotes of
 *                                the 15 minutes before it do not change).
 *   median REST round trip       read at most once per 250 ms per venue (a
 *                                median over the last hour).
 *   book history (depth          the venue's snapshots of the pair over the last
 *   survival calibration)        IMPACT_FILL_WINDOW_MS (60 min), at most
 *                                IMPACT_FILL_MAX_SNAPSHOTS rows (the newest),
 *                                read at most once per IMPACT_FILL_REFRESH_MS
 *                                (60 s) per venue and pair: a calibration lags
 *                                the store by up to that. The survival table of
 *                                a horizon is computed once per history read and
 *                                horizon step (the horizon rounded up to
 *                                HORIZON_STEP_MS, 250 ms: a longer lag, so a
 *                                conservative one), never per request.
 *
 * Single flight: concurrent requests for one input share one read; a failed
 * read is not kept (the next request reads again).
 */
import type { BookEvent } from '../../core/events/market.js';
import type { Store } from '../../core/store/store.js';
import { medianRoundTripMs } from '../../core/store/tables/latency-samples.js';
import { bookHistory, type BookHistoryPoint } from '../../core/store/tables/book-history.js';
import { quoteTopsInRange } from '../../core/store/tables/quotes.js';
import { realisedVolatility } from './book-walk.js';
import { survivalTable, type SurvivalTable } from './depth-survival.js';
import { latestBooks } from './latest-book.js';

/** Longest a shared book or round-trip median is reused. */
export const IMPACT_INPUTS_MAX_AGE_MS = 250;
/** The volatility window before the book. */
export const VOLATILITY_WINDOW_MS = 15 * 60_000;
/** The round-trip window before now. */
const RTT_WINDOW_MS = 3_600_000;
/** Horizons are rounded up to a multiple of this before a survival table is computed (tables per history read). */
export const HORIZON_STEP_MS = 250;
/** Most survival tables kept per history read (distinct horizon steps; the oldest goes first): bounded memory. */
const MAX_TABLES_PER_HISTORY = 16;

/** The depth-survival calibration settings (core/config.ts). */
export interface FillCalibrationSettings {
  IMPACT_FILL_WINDOW_MS: number;
  IMPACT_FILL_MAX_SNAPSHOTS: number;
  IMPACT_FILL_REFRESH_MS: number;
}

interface Shared<T> {
  at: number;
  value: Promise<T>;
}

/** Reads shared per key for a bounded time (single flight; failures are dropped). */
class SharedReads<T> {
  private readonly entries = new Map<string, Shared<T>>();

  get(key: string, now: number, maxAgeMs: number, read: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry && now - entry.at < maxAgeMs && now >= entry.at) return entry.value;
    return this.refresh(key, now, read);
  }

  /** Reads now, shared from here on. */
  refresh(key: string, now: number, read: () => Promise<T>): Promise<T> {
    const value = read();
    const fresh = { at: now, value };
    this.entries.set(key, fresh);
    value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return value;
  }
}

interface StoreInputs {
  books: SharedReads<Map<string, BookEvent>>;
  /** Per pair and venue: the volatility of the latest book it was computed for. */
  volatility: Map<string, { bookId: string; value: Promise<number | undefined> }>;
  rtt: SharedReads<number | null>;
  history: SharedReads<BookHistoryPoint[]>;
}

/** Survival tables by horizon step, per history read (the read's array is the key: a new read, new tables). */
const tablesOf = new WeakMap<readonly BookHistoryPoint[], Map<number, SurvivalTable>>();

const perStore = new WeakMap<Store, StoreInputs>();

function inputsOf(store: Store): StoreInputs {
  let inputs = perStore.get(store);
  if (!inputs)
    perStore.set(
      store,
      (inputs = {
        books: new SharedReads(),
        volatility: new Map(),
        rtt: new SharedReads(),
        history: new SharedReads(),
      }),
    );
  return inputs;
}

/** The newest book of `pair` not older than `maxAgeMs` at `now` (shared for up to IMPACT_INPUTS_MAX_AGE_MS), or undefined. */
export async function sharedLatestBook(
  store: Store,
  pair: string,
  now: number,
  maxAgeMs: number,
): Promise<BookEvent | undefined> {
  const { books } = inputsOf(store);
  const read = () => latestBooks(store, now - maxAgeMs);
  const book = (await books.get('*', now, IMPACT_INPUTS_MAX_AGE_MS, read)).get(pair);
  if (!book || book.event_time_ms >= now - maxAgeMs) return book;
  // Shared but too old for this request: look again rather than refuse on a shared answer.
  return (await books.refresh('*', now, read)).get(pair);
}

/** Realised 1 s volatility of the book venue's mids over the 15 minutes before the book, once per book. */
export function sharedVolatility(store: Store, book: BookEvent): Promise<number | undefined> {
  const { volatility } = inputsOf(store);
  const key = `${book.pair}|${book.venue}`;
  const bookId = `${book.event_id}|${book.event_time_ms}`;
  const entry = volatility.get(key);
  if (entry?.bookId === bookId) return entry.value;
  const value = quoteTopsInRange(store, book.pair, book.event_time_ms - VOLATILITY_WINDOW_MS, book.event_time_ms + 1, [
    book.venue,
  ]).then((quotes) => realisedVolatility(quotes.map((q) => ({ t_ms: q.t_ms, mid: (q.bid + q.ask) / 2 }))));
  const fresh = { bookId, value };
  volatility.set(key, fresh);
  value.catch(() => {
    if (volatility.get(key) === fresh) volatility.delete(key);
  });
  return value;
}

/** Median successful round trip of `venue` over the hour before `now` (shared for up to IMPACT_INPUTS_MAX_AGE_MS), or null without samples. */
export function sharedMedianRoundTrip(store: Store, venue: string, now: number): Promise<number | null> {
  return inputsOf(store).rtt.get(venue, now, IMPACT_INPUTS_MAX_AGE_MS, () =>
    medianRoundTripMs(store, now - RTT_WINDOW_MS, now + 1, venue),
  );
}

/**
 * The depth-survival calibration of `venue` and `pair` for a horizon: the survival
 * table (depth-survival.ts) of the book history of the window before the read,
 * the history shared for up to IMPACT_FILL_REFRESH_MS, the table computed once
 * per history read and horizon step (the horizon rounded up to HORIZON_STEP_MS).
 */
export async function sharedSurvivalTable(
  store: Store,
  venue: string,
  pair: string,
  horizonMs: number,
  now: number,
  settings: FillCalibrationSettings,
): Promise<SurvivalTable> {
  const history = await inputsOf(store).history.get(`${venue}|${pair}`, now, settings.IMPACT_FILL_REFRESH_MS, () =>
    bookHistory(store, venue, pair, now - settings.IMPACT_FILL_WINDOW_MS, now + 1, settings.IMPACT_FILL_MAX_SNAPSHOTS),
  );
  const step = Math.max(1, Math.ceil(horizonMs / HORIZON_STEP_MS)) * HORIZON_STEP_MS;
  let tables = tablesOf.get(history);
  if (!tables) tablesOf.set(history, (tables = new Map()));
  let table = tables.get(step);
  if (!table) {
    if (tables.size >= MAX_TABLES_PER_HISTORY) tables.delete(tables.keys().next().value!);
    tables.set(step, (table = survivalTable(history, step)));
  }
  return table;
}
