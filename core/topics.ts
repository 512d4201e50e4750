/** Every bus topic of the product, versioned. Market data is keyed by pair; the canary by its source. */
export const TOPICS = {
  /** Pipeline canary: ingest -> bus -> aggregate -> store, read back by /health. */
  heartbeat: 'sys.heartbeat.v1',
  /** QuoteEvent (core/events/market.ts): top of book plus executable ladder, CEX and DEX alike. */
  quotes: 'md.quotes.v1',
  /** BookEvent: top-N level-2 snapshots (CEX). */
  books: 'md.books.v1',
  /** LatencyEvent: CEX REST and Base RPC round trips. */
  latency: 'md.latency.v1',
  /** DislocationEvent: derived by the aggregator. */
  dislocations: 'md.dislocations.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];
