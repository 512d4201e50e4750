/** Every bus topic of the product, versioned. Keys are pairs for market data; the source for the canary. */
export const TOPICS = {
  /** Pipeline canary: ingest -> bus -> aggregate -> store, read back by /health. */
  heartbeat: 'sys.heartbeat.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];
