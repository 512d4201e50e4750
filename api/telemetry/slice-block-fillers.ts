/**
 * The day-block filler of each windowed telemetry route, by SKU id: how the
 * closed-slice cache computes a whole UTC day of closed slices at once
 * (slice-blocks.ts). A route missing here is cached slice by slice.
 */
import { dislocationsBlock } from './dislocations/handler.js';
import { executionLatencyBlock } from './execution-latency/handler.js';
import { shadowCapacityBlock } from './shadow-capacity/handler.js';
import type { SliceBlockFiller } from './slice-blocks.js';
import { spreadCandlesBlock } from './spread-candles/handler.js';

export const BLOCK_FILLERS: Readonly<Record<string, SliceBlockFiller<never>>> = {
  'spread-candles': spreadCandlesBlock as SliceBlockFiller<never>,
  dislocations: dislocationsBlock as SliceBlockFiller<never>,
  'execution-latency': executionLatencyBlock as SliceBlockFiller<never>,
  'shadow-capacity': shadowCapacityBlock as SliceBlockFiller<never>,
};
